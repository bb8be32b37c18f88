/**
 * ISV cost rows and partner minimums (docs/architecture.md, Agreements and billing). A row is identified by the submission's
 * `idempotency_key`, or without one by (ISV, customer, product, period) for a cost row and (ISV,
 * product, period) for a minimum; a later submission for the same identity replaces the row (its
 * `revision` grows), so a replay or a correction never counts twice. `dry_run` (the default) answers
 * what a commit would store and whether it would replace a row; nothing is written.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { z } from 'zod';
import { ServiceError } from '../errors/service-error';
import { checkAmount, checkCurrency, checkDay, checkExtended, checkPeriod, roundMoney, throwProblems, type Problem } from './billing-rules';
import { COSTS_CURSOR, MINIMUMS_CURSOR, type CostsQuery, type IsvCost, type IsvCostSubmitted, type MinimumsQuery, type PartnerMinimum, type PartnerMinimumSubmitted, type SubmitIsvCostBody, type SubmitPartnerMinimumBody } from './billing.schemas';
import { afterKey, keysetAfter, rowsToFetch, toPage, type KeyColumn, type ListCursor, type Page, type PageRequest } from '../shared/paging';
import { costRowOutcome, resolveCostRowsById, resolveUnstoredCostRow, type ResolvedCostRow } from './cost-resolution';

type CostBody = z.infer<typeof SubmitIsvCostBody>;
type MinimumBody = z.infer<typeof SubmitPartnerMinimumBody>;
type Cost = z.infer<typeof IsvCost>;
type StoredCost = Omit<Cost, 'resolution'>;
type Resolution = Cost['resolution'];
type Minimum = z.infer<typeof PartnerMinimum>;

/** One replaceable table: its natural identity and the columns a submission writes. */
interface RowTable {
  table: 'isv_costs' | 'partner_minimums';
  constraint: string;
  natural: string[];
}
const COSTS: RowTable = { table: 'isv_costs', constraint: 'uq_isv_costs_row', natural: ['external_customer_ref', 'product_source_id', 'period_start', 'period_end'] };
const MINIMUMS: RowTable = { table: 'partner_minimums', constraint: 'uq_partner_minimums_row', natural: ['product_source_id', 'period_start', 'period_end'] };

type Values = Record<string, unknown>;
type StoredRow = Record<string, unknown> & { id: string; revision: number; created_at: Date; updated_at: Date };

const iso = (d: Date | null | undefined) => (d ? d.toISOString() : null);

function costValues(b: CostBody, currency: string): Values {
  return {
    external_customer_ref: b.external_customer_ref, external_customer_name: b.external_customer_name ?? null,
    product_source_id: b.product_source_id, product_name: b.product_name ?? null,
    period_start: b.period_start, period_end: b.period_end,
    actual_quantity: b.actual_quantity, billable_quantity: b.billable_quantity, currency,
    msp_cost_unit: b.msp_cost_unit, msp_cost_extended: b.msp_cost_extended,
    prices: JSON.stringify({
      customer_price_unit: b.customer_price_unit ?? null, customer_price_extended: b.customer_price_extended ?? null,
      suggested_retail_unit: b.suggested_retail_unit ?? null, suggested_retail_extended: b.suggested_retail_extended ?? null,
    }),
  };
}

function minimumValues(b: MinimumBody, currency: string): Values {
  return {
    product_source_id: b.product_source_id, product_name: b.product_name ?? null,
    period_start: b.period_start, period_end: b.period_end, currency, minimum_amount: b.minimum_amount,
  };
}

function costOut(r: Record<string, any>): StoredCost {
  const prices = (typeof r.prices === 'string' ? JSON.parse(r.prices) : r.prices ?? {}) as Record<string, number | null>;
  return {
    id: r.id, isv_id: r.isv_id, external_customer_ref: r.external_customer_ref, external_customer_name: r.external_customer_name ?? null,
    product_source_id: r.product_source_id, product_name: r.product_name ?? null, period_start: r.period_start, period_end: r.period_end,
    actual_quantity: Number(r.actual_quantity), billable_quantity: Number(r.billable_quantity), currency: r.currency,
    msp_cost_unit: Number(r.msp_cost_unit), msp_cost_extended: Number(r.msp_cost_extended),
    customer_price_unit: prices.customer_price_unit ?? null, customer_price_extended: prices.customer_price_extended ?? null,
    suggested_retail_unit: prices.suggested_retail_unit ?? null, suggested_retail_extended: prices.suggested_retail_extended ?? null,
    idempotency_key: r.idempotency_key ?? null, revision: Number(r.revision), created_at: iso(r.created_at)!, updated_at: iso(r.updated_at)!,
  };
}

function minimumOut(r: Record<string, any>): Minimum {
  return {
    id: r.id, isv_id: r.isv_id, product_source_id: r.product_source_id, product_name: r.product_name ?? null,
    period_start: r.period_start, period_end: r.period_end, currency: r.currency, minimum_amount: Number(r.minimum_amount),
    idempotency_key: r.idempotency_key ?? null, revision: Number(r.revision), created_at: iso(r.created_at)!, updated_at: iso(r.updated_at)!,
  };
}

export interface CostChange {
  tenantId: string;
}

export class CostRowsService {
  /** Called after a committed submission changed the rows (charges are recomputed from them). */
  onChanged: (change: CostChange) => Promise<void> = async () => {};

  constructor(private readonly ds: DataSource) {}

  async submitCost(tenantId: string, isvId: string, b: CostBody): Promise<z.infer<typeof IsvCostSubmitted>> {
    const problems: Problem[] = [];
    checkPeriod(problems, b.period_start, b.period_end);
    for (const f of ['actual_quantity', 'billable_quantity', 'msp_cost_unit', 'msp_cost_extended', 'customer_price_unit', 'customer_price_extended', 'suggested_retail_unit', 'suggested_retail_extended'] as const) {
      checkAmount(problems, f, b[f]);
    }
    const currency = checkCurrency(problems, b.currency);
    checkExtended(problems, 'msp_cost_extended', b.msp_cost_extended, b.msp_cost_unit, 'msp_cost_unit', b.billable_quantity);
    checkExtended(problems, 'customer_price_extended', b.customer_price_extended, b.customer_price_unit, 'customer_price_unit', b.billable_quantity);
    checkExtended(problems, 'suggested_retail_extended', b.suggested_retail_extended, b.suggested_retail_unit, 'suggested_retail_unit', b.billable_quantity);
    throwProblems(problems);
    const values = costValues(b, currency);
    const out = await this.submit(COSTS, tenantId, isvId, b.idempotency_key ?? null, values, b.dry_run);
    const cost = costOut({ ...values, ...out.row, isv_id: isvId, prices: values.prices });
    // The resolution as it stands after the commit (charges were recomputed before submit returned), or
    // for a preview as the row would resolve now.
    const resolution = b.dry_run
      ? this.resolutionOf(await resolveUnstoredCostRow(this.ds, tenantId, isvId, { customerRef: b.external_customer_ref, productRef: b.product_source_id, periodStart: b.period_start, periodEnd: b.period_end }), new Map())
      : (await this.withResolutions(tenantId, isvId, [cost]))[0]!.resolution;
    // A preview has no timestamps (costOut leaves them null) and no id when the row would be new.
    return {
      dry_run: b.dry_run, replaced: out.replaces != null, replaces_id: out.replaces,
      identified_by: b.idempotency_key ? 'idempotency_key' : 'customer_product_period',
      cost: { ...cost, id: out.row.id ?? null, resolution },
    };
  }

  async submitMinimum(tenantId: string, isvId: string, b: MinimumBody): Promise<z.infer<typeof PartnerMinimumSubmitted>> {
    const problems: Problem[] = [];
    checkPeriod(problems, b.period_start, b.period_end);
    checkAmount(problems, 'minimum_amount', b.minimum_amount);
    const currency = checkCurrency(problems, b.currency);
    throwProblems(problems);
    const values = minimumValues(b, currency);
    const out = await this.submit(MINIMUMS, tenantId, isvId, b.idempotency_key ?? null, values, b.dry_run);
    const minimum = minimumOut({ ...values, ...out.row, isv_id: isvId });
    return { dry_run: b.dry_run, replaced: out.replaces != null, replaces_id: out.replaces, minimum: { ...minimum, id: out.row.id ?? null } };
  }

  /**
   * The row a submission replaces: the one written under its key, else the one with its natural
   * identity. A key whose row now has another identity that a second row already holds would merge
   * two rows: refused (409), nothing written.
   */
  private async prior(m: EntityManager, t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values, lock: boolean): Promise<{ id: string; revision: number } | null> {
    const forUpdate = lock ? ' FOR UPDATE' : '';
    const naturalWhere = t.natural.map((c, i) => `${c} = $${i + 3}`).join(' AND ');
    const naturalArgs = t.natural.map((c) => values[c]);
    const byNatural: { id: string; revision: number }[] = await m.query(
      `SELECT id, revision FROM ${t.table} WHERE tenant_id = $1 AND isv_id = $2 AND ${naturalWhere}${forUpdate}`, [tenantId, isvId, ...naturalArgs]);
    if (!key) return byNatural[0] ?? null;
    const byKey: { id: string; revision: number }[] = await m.query(
      `SELECT id, revision FROM ${t.table} WHERE tenant_id = $1 AND isv_id = $2 AND idempotency_key = $3${forUpdate}`, [tenantId, isvId, key]);
    if (byKey[0] && byNatural[0] && byKey[0].id !== byNatural[0].id) {
      throw new ServiceError('idempotency_conflict', `This idempotency_key wrote row ${byKey[0].id}; row ${byNatural[0].id} already holds this ${t.natural.join(', ')}. Replace that row with its own key (or none).`, {
        details: { key_row: byKey[0].id, identity_row: byNatural[0].id },
      });
    }
    return byKey[0] ?? byNatural[0] ?? null;
  }

  private async submit(t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values, dryRun: boolean): Promise<{ row: Partial<StoredRow>; replaces: string | null }> {
    if (dryRun) {
      const before = await this.prior(this.ds.manager, t, tenantId, isvId, key, values, false);
      return { row: { id: before?.id, revision: (before?.revision ?? 0) + 1 } as Partial<StoredRow>, replaces: before?.id ?? null };
    }
    // Two racing first submissions of one identity: the loser's insert meets the unique index and is
    // retried once, when it finds the winner's row and replaces it.
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await this.ds.transaction(async (m) => this.write(m, t, tenantId, isvId, key, values));
        await this.onChanged({ tenantId });
        return out;
      } catch (err) {
        if (attempt < 3 && (err as { code?: string }).code === '23505') continue;
        throw err;
      }
    }
  }

  private async write(m: EntityManager, t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values): Promise<{ row: StoredRow; replaces: string | null }> {
    const before = await this.prior(m, t, tenantId, isvId, key, values, true);
    const cols = Object.keys(values);
    const args = cols.map((c) => values[c]);
    if (before) {
      const set = cols.map((c, i) => `${c} = $${i + 2}`).join(', ');
      const [rows]: [StoredRow[], number] = await m.query(
        `UPDATE ${t.table} SET ${set}, idempotency_key = COALESCE($${cols.length + 2}, idempotency_key), revision = revision + 1, updated_at = now() WHERE id = $1 RETURNING *`,
        [before.id, ...args, key]);
      return { row: rows[0], replaces: before.id };
    }
    const rows: StoredRow[] = await m.query(
      `INSERT INTO ${t.table} (tenant_id, isv_id, idempotency_key, ${cols.join(', ')}) VALUES ($1, $2, $3, ${cols.map((_c, i) => `$${i + 4}`).join(', ')}) RETURNING *`,
      [tenantId, isvId, key, ...args]);
    return { row: rows[0], replaces: null };
  }

  /** Cost rows newest period first, one page; `totals` are over every row the filters keep, not only this page. */
  async listCosts(tenantId: string, isvId: string | null, q: z.infer<typeof CostsQuery>): Promise<Page<Cost> & { totals: { billable_quantity: number; msp_cost_extended: number } }> {
    const { where, args } = filters(tenantId, isvId, q, { customer: 'external_customer_ref', product: 'product_source_id' });
    const [sum]: { billable_quantity: string | null; msp_cost_extended: string | null }[] = await this.ds.query(
      `SELECT SUM(billable_quantity) AS billable_quantity, SUM(msp_cost_extended) AS msp_cost_extended FROM isv_costs WHERE ${where}`, args);
    const page = await this.page('isv_costs', where, args, q, COSTS_CURSOR, COST_ORDER, costOut);
    return {
      ...page, items: await this.withResolutions(tenantId, isvId, page.items),
      totals: { billable_quantity: roundMoney(Number(sum?.billable_quantity ?? 0)), msp_cost_extended: roundMoney(Number(sum?.msp_cost_extended ?? 0)) },
    };
  }

  /**
   * The rows with their resolution (cost-resolution.ts) and the latest charge each is behind. `viewer`:
   * the ISV reading (its charge figures hide other ISVs' rows), or null for the MSP.
   */
  private async withResolutions(tenantId: string, viewer: string | null, rows: StoredCost[]): Promise<Cost[]> {
    const ids = rows.map((r) => r.id);
    const resolved = await resolveCostRowsById(this.ds, tenantId, ids);
    const charges: Record<string, any>[] = ids.length ? await this.ds.query(
      `SELECT ch.id, ch.status, ch.current_quantity, ch.proposed_quantity, ch.cost_rows, ch.updated_at,
              (SELECT bool_and(c.isv_id::text = $3) FROM isv_costs c WHERE c.id::text IN (SELECT jsonb_array_elements_text(ch.cost_rows))) AS own_rows_only
         FROM charges ch WHERE ch.tenant_id = $1 AND ch.cost_rows ?| $2::text[]
        ORDER BY ch.updated_at DESC, ch.id`, [tenantId, ids, viewer ?? '']) : [];
    const chargeOf = new Map<string, Resolution['charge']>();
    for (const ch of charges) {
      const rowsOf = (typeof ch.cost_rows === 'string' ? JSON.parse(ch.cost_rows) : ch.cost_rows) as string[];
      const out = {
        id: ch.id as string, status: ch.status, current_quantity: ch.current_quantity == null ? null : Number(ch.current_quantity),
        proposed_quantity: viewer && ch.own_rows_only !== true ? null : Number(ch.proposed_quantity),
      };
      for (const id of rowsOf) if (!chargeOf.has(id)) chargeOf.set(id, out);
    }
    return rows.map((r) => {
      const res = resolved.get(r.id);
      return { ...r, resolution: res ? this.resolutionOf(res, chargeOf) : this.resolutionOf(null, chargeOf) };
    });
  }

  private resolutionOf(r: ResolvedCostRow | null, chargeOf: Map<string, Resolution['charge']>): Resolution {
    // A row removed between its page and its resolution (a concurrent reset) has none: reported unmatched.
    if (!r) return { status: 'customer_unmatched', company_source_id: null, agreement_source_id: null, line_source_id: null, fix: null, charge: null };
    return { ...costRowOutcome(r), charge: chargeOf.get(r.costId) ?? null };
  }

  /** Partner minimums newest period first, one page. */
  async listMinimums(tenantId: string, isvId: string | null, q: z.infer<typeof MinimumsQuery>): Promise<Page<Minimum>> {
    const { where, args } = filters(tenantId, isvId, q, { product: 'product_source_id' });
    return this.page('partner_minimums', where, args, q, MINIMUMS_CURSOR, MINIMUM_ORDER, minimumOut);
  }

  private async page<T>(table: string, where: string, args: unknown[], q: PageRequest, codec: ListCursor, order: KeyColumn[], out: (r: Record<string, any>) => T): Promise<Page<T>> {
    const params = [...args];
    const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
    let sql = `SELECT * FROM ${table} WHERE ${where}`;
    const after = afterKey(codec, q);
    if (after) sql += ` AND ${keysetAfter(order, after, bind)}`;
    if (q.updated_since) sql += ` AND updated_at >= ${bind(q.updated_since)}::timestamptz`;
    sql += ` ORDER BY ${order.map((c) => `${c.sql}${c.desc ? ' DESC' : ''}`).join(', ')} LIMIT ${rowsToFetch(q.limit)}`;
    const rows: Record<string, any>[] = await this.ds.query(sql, params);
    const page = toPage(rows, q.limit, codec, (r) => order.map((c) => String(r[c.sql])));
    return { items: page.items.map(out), next_cursor: page.next_cursor };
  }
}

/** Cost rows and minimums page newest period first, then by customer, product and id (unique). */
const COST_ORDER: KeyColumn[] = [{ sql: 'period_start', desc: true }, { sql: 'external_customer_ref' }, { sql: 'product_source_id' }, { sql: 'id', cast: 'uuid' }];
const MINIMUM_ORDER: KeyColumn[] = [{ sql: 'period_start', desc: true }, { sql: 'product_source_id' }, { sql: 'id', cast: 'uuid' }];

/** The WHERE of a list: tenant, ISV, period containment, and the equality filters given. */
function filters(tenantId: string, isvId: string | null, q: Record<string, unknown>, columns: Record<string, string>): { where: string; args: unknown[] } {
  const parts = ['tenant_id = $1'];
  const args: unknown[] = [tenantId];
  const add = (sql: string, v: unknown) => { args.push(v); parts.push(sql.replace('?', `$${args.length}`)); };
  if (isvId) add('isv_id::text = ?', isvId);
  const problems: Problem[] = [];
  if (q.period_start != null) checkDay(problems, 'period_start', String(q.period_start));
  if (q.period_end != null) checkDay(problems, 'period_end', String(q.period_end));
  if (q.period_start != null && q.period_end != null && !problems.length) checkPeriod(problems, String(q.period_start), String(q.period_end));
  throwProblems(problems);
  if (q.period_start != null) add('period_start >= ?', q.period_start);
  if (q.period_end != null) add('period_end <= ?', q.period_end);
  for (const [param, column] of Object.entries(columns)) if (q[param] != null) add(`${column} = ?`, q[param]);
  return { where: parts.join(' AND '), args };
}
