/**
 * Where a cost row lands (cost-resolution.ts), as SQL. The rule is written as a statement, not as code
 * over rows read out, because charges and the reconciliation aggregate over it in one statement per
 * tenant: set-based, it stays a few hash joins at any number of cost rows, where row by row it would
 * read every cost row, match and line out of the store first. The one store of the resolution: its
 * CTEs for the statements of the charges and reconciliation stores, the stored resolution and the reads.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { resolvedCostRow, type LandedCostRow, type PeriodFilter, type ResolvedCostRow } from './cost-resolution';

/**
 * The resolution as SQL: `WITH <resolvedCostsCte(...)>` defines `resolved`, one row per cost row of the
 * tenant ($1; contained in the period $2..$3 when `withPeriod`) with where it lands (and the product of
 * the line it lands on, `line_product_source_id`) and its `reason`.
 * Set-based, so that it stays a few hash joins at any size: the identity match, the candidate lines
 * (mapped lines of that company's agreements; an active agreement and a running line first), and
 * whether the product is explicitly unmapped. The reconciliation aggregates over it in the same
 * statement; resolveCostRows reads it row by row. `only.rows` narrows it to some cost rows (a condition on
 * `c`); `only.source` resolves rows that are not stored (a submission's preview) instead of isv_costs.
 */
export function resolvedCostsCte(withPeriod: boolean, only?: { rows?: string; source?: string }): string {
  const where = (withPeriod ? 'c.tenant_id = $1 AND c.period_start >= $2 AND c.period_end <= $3' : 'c.tenant_id = $1') + (only?.rows ? ` AND ${only.rows}` : '');
  // `c` is NOT MATERIALIZED so that the planner sees through it: a materialised CTE is estimated as a
  // handful of rows and joined by nested loops (measured: 64 ms of loops over 10,000 cost rows).
  // The identity match is unique per customer (uq_identity_match_customer); the candidate lines are
  // joined to the cost rows in the same pass and the first kept per row (DISTINCT ON): one scan of the
  // cost rows, not two (measured on the bench's 10,000 rows: the resolution 92 ms, from 120).
  return `c AS NOT MATERIALIZED (
       SELECT DISTINCT ON (c.id) c.*, im.connection_id AS match_connection_id, im.company_source_id AS match_company_source_id,
              m.agreement_source_id, m.line_source_id, a.status AS agreement_status,
              NULLIF(l.effective_end, '') AS effective_end, l.product_source_id AS line_product_source_id
         FROM ${only?.source ?? 'isv_costs'} c
         LEFT JOIN identity_matches im ON im.tenant_id = c.tenant_id AND im.isv_id = c.isv_id AND im.customer_ref = c.external_customer_ref
         LEFT JOIN (agreements a
              JOIN agreement_line_mappings m ON m.tenant_id = a.tenant_id AND m.connection_id = a.connection_id AND m.agreement_source_id = a.source_id
                   AND m.status = 'mapped'
              JOIN agreement_lines l ON l.tenant_id = m.tenant_id AND l.connection_id = m.connection_id AND l.source_id = m.line_source_id)
           ON a.tenant_id = c.tenant_id AND a.connection_id = im.connection_id AND a.company_source_id = im.company_source_id
              AND m.isv_id = c.isv_id AND m.vendor_product_ref = c.product_source_id
        WHERE ${where}
        ORDER BY c.id, (a.status = 'active') DESC, (NULLIF(l.effective_end, '') IS NULL OR substr(l.effective_end, 1, 10) >= c.period_start) DESC,
                 m.agreement_source_id, m.line_source_id),
     unmapped AS (SELECT DISTINCT isv_id, vendor_product_ref FROM agreement_line_mappings WHERE tenant_id = $1 AND status = 'unmapped'),
     resolved AS (
       SELECT c.id, c.isv_id, c.external_customer_ref, c.product_source_id, c.period_start, c.period_end, c.billable_quantity,
              c.msp_cost_extended, c.currency, c.match_connection_id AS connection_id, c.match_company_source_id AS company_source_id,
              c.agreement_source_id, c.line_source_id, c.line_product_source_id, (u.vendor_product_ref IS NOT NULL) AS explicitly_unmapped,
              CASE
                WHEN c.match_company_source_id IS NULL THEN 'customer_unmatched'
                WHEN c.line_source_id IS NULL THEN CASE WHEN u.vendor_product_ref IS NULL THEN 'product_unmapped' END
                WHEN c.agreement_status IS DISTINCT FROM 'active' OR substr(c.effective_end, 1, 10) < c.period_start THEN 'agreement_inactive'
              END AS reason
         FROM c
         LEFT JOIN unmapped u ON u.isv_id = c.isv_id AND u.vendor_product_ref = c.product_source_id)`;
}

/**
 * The same `resolved` as resolvedCostsCte, read from the resolution the last charge recomputation stored
 * (storeCostResolutions). Only for a statement in a snapshot where storedResolutionIsCurrent said so:
 * then every cost row has its stored resolution, made from the inputs as they stand.
 */
export function storedCostsCte(withPeriod: boolean): string {
  const where = withPeriod ? 'c.tenant_id = $1 AND c.period_start >= $2 AND c.period_end <= $3' : 'c.tenant_id = $1';
  return `resolved AS (
       SELECT c.id, c.isv_id, c.external_customer_ref, c.product_source_id, c.period_start, c.period_end, c.billable_quantity,
              c.msp_cost_extended, c.currency, s.connection_id, s.company_source_id, s.agreement_source_id, s.line_source_id,
              s.line_product_source_id, s.explicitly_unmapped, s.reason
         FROM isv_costs c JOIN cost_resolutions s ON s.cost_id = c.id
        WHERE ${where})`;
}

const STORED = 'connection_id, company_source_id, agreement_source_id, line_source_id, line_product_source_id, reason, explicitly_unmapped';

/**
 * Resolves every cost row of the tenant, stores the rows whose resolution moved (and drops those of
 * cost rows that are gone), and records the change count it resolved at, read in the same snapshot:
 * a change committed after that snapshot has counted one more, so the stored resolution is never taken
 * for current without it. Answers the rows that land on a line (only what a charge needs: 10,000 full
 * rows took 40 ms to read). Runs inside the charge recomputation's transaction, under its tenant lock.
 * The billing_versions row is the one lock it shares with writers of the inputs (their triggers take it
 * after their own rows); it takes it after the cost_resolutions rows, which nothing else writes.
 */
export async function storeCostResolutions(m: EntityManager, tenantId: string): Promise<LandedCostRow[]> {
  const cols = STORED.split(', ');
  const rows: Record<string, any>[] = await m.query(
    `WITH version AS (SELECT changed FROM billing_versions WHERE tenant_id = $1),
     ${resolvedCostsCte(false)},
     upserted AS (
       INSERT INTO cost_resolutions (cost_id, tenant_id, ${STORED})
       SELECT r.id, $1, ${cols.map((c) => `r.${c}`).join(', ')}
         FROM resolved r LEFT JOIN cost_resolutions s ON s.cost_id = r.id
        WHERE s.cost_id IS NULL OR ROW(${cols.map((c) => `s.${c}`).join(', ')}) IS DISTINCT FROM ROW(${cols.map((c) => `r.${c}`).join(', ')})
       ON CONFLICT (cost_id) DO UPDATE SET ${cols.map((c) => `${c} = EXCLUDED.${c}`).join(', ')}
       RETURNING 1),
     removed AS (DELETE FROM cost_resolutions s WHERE s.tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM resolved r WHERE r.id = s.cost_id) RETURNING 1)
     SELECT r.id, r.connection_id, r.agreement_source_id, r.line_source_id, r.period_start, r.period_end, r.billable_quantity, NULL AS version
       FROM resolved r WHERE r.reason IS NULL AND r.line_source_id IS NOT NULL
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, COALESCE((SELECT changed FROM version), 0)`,
    [tenantId],
  );
  // The last row carries the count (0: no billing_versions row in the snapshot, nothing counted yet).
  const version = rows.find((r) => r.id === null)!.version;
  await m.query(
    `INSERT INTO billing_versions (tenant_id, changed, resolved) VALUES ($1, $2, $2)
     ON CONFLICT (tenant_id) DO UPDATE SET resolved = GREATEST(billing_versions.resolved, EXCLUDED.resolved)`, [tenantId, version]);
  return rows.filter((r) => r.id !== null).map((r) => ({
    costId: r.id, connectionId: r.connection_id, agreementSourceId: r.agreement_source_id, lineSourceId: r.line_source_id,
    periodStart: r.period_start, periodEnd: r.period_end, billableQuantity: Number(r.billable_quantity),
  }));
}

/** Whether the stored resolution (storeCostResolutions) answers for the inputs as this snapshot sees them. */
export async function storedResolutionIsCurrent(m: EntityManager, tenantId: string): Promise<boolean> {
  const [v]: { current: boolean }[] = await m.query('SELECT changed = resolved AS current FROM billing_versions WHERE tenant_id = $1', [tenantId]);
  return v?.current === true;
}

/** Cost rows of a tenant (contained in the period, when given), each with where it lands. */
export async function resolveCostRows(ds: DataSource, tenantId: string, period: PeriodFilter | null, onlyUnresolved = false): Promise<ResolvedCostRow[]> {
  const rows: Record<string, any>[] = await ds.query(
    `WITH ${resolvedCostsCte(period != null)}
     SELECT * FROM resolved ${onlyUnresolved ? 'WHERE reason IS NOT NULL' : ''}
      ORDER BY period_start DESC, external_customer_ref, product_source_id, id`,
    period ? [tenantId, period.start, period.end] : [tenantId],
  );
  return rows.map(resolvedCostRow);
}

/** The resolution of some stored cost rows of a tenant, by id. */
export async function resolveCostRowsById(ds: DataSource | EntityManager, tenantId: string, ids: string[]): Promise<Map<string, ResolvedCostRow>> {
  if (!ids.length) return new Map();
  const rows: Record<string, any>[] = await ds.query(
    `WITH ${resolvedCostsCte(false, { rows: 'c.id = ANY($2::uuid[])' })} SELECT * FROM resolved`, [tenantId, ids]);
  return new Map(rows.map((r) => [r.id as string, resolvedCostRow(r)]));
}

/** The resolution a cost row not stored yet would have (a submission's preview). */
export async function resolveUnstoredCostRow(ds: DataSource, tenantId: string, isvId: string, row: { customerRef: string; productRef: string; periodStart: string; periodEnd: string }): Promise<ResolvedCostRow> {
  const source = `(SELECT '00000000-0000-0000-0000-000000000000'::uuid AS id, $1::uuid AS tenant_id, $2::uuid AS isv_id, $3::text AS external_customer_ref,
                          $4::text AS product_source_id, $5::text AS period_start, $6::text AS period_end,
                          0::double precision AS billable_quantity, 0::double precision AS msp_cost_extended, ''::text AS currency)`;
  const rows: Record<string, any>[] = await ds.query(
    `WITH ${resolvedCostsCte(false, { source })} SELECT * FROM resolved`, [tenantId, isvId, row.customerRef, row.productRef, row.periodStart, row.periodEnd]);
  return resolvedCostRow(rows[0]!);
}
