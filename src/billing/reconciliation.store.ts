/**
 * The reconciliation's store (docs/architecture.md, Agreements and billing): the five statements that
 * read both sides of a period in one snapshot. The comparison itself stays in reconciliation.service.ts.
 */
import type { DataSource } from 'typeorm';
import { resolvedCostsCte, storedCostsCte, storedResolutionIsCurrent } from './cost-resolution.store';

/**
 * The agreement side: every line of the tenant's active agreements, with its product's name and its
 * agreement's company, and whether it runs in the period ($2..$3). Lines outside the period are read
 * too: they name the products and companies of cost rows landed on them.
 */
const ACTIVE_LINES = `
SELECT l.connection_id, l.agreement_source_id, l.source_id, l.product_source_id, COALESCE(p.name, l.product_name) AS product_name,
       l.quantity, l.unit_price, a.company_source_id, a.company_name,
       ((l.effective_start IS NULL OR substr(l.effective_start, 1, 10) <= $3) AND (l.effective_end IS NULL OR substr(l.effective_end, 1, 10) >= $2)) AS in_period
  FROM agreement_lines l
  JOIN agreements a ON a.tenant_id = l.tenant_id AND a.connection_id = l.connection_id AND a.source_id = l.agreement_source_id AND a.status = 'active'
  LEFT JOIN products p ON p.tenant_id = l.tenant_id AND p.connection_id = l.connection_id AND p.source_id = l.product_source_id
 WHERE l.tenant_id = $1`;

/**
 * The ISV side: the period's cost rows that land (on a line, or unmapped on purpose), one row each,
 * and one more (`meta`) with the unresolved rows in their order and the currencies of all of them, so
 * that the cost rows are resolved once per reconciliation. $1 tenant, $2..$3 the period.
 * The rows are grouped in the service, not in SQL. Measured on the bench's 10,000 lines and cost rows
 * (PostgreSQL, best of 12): the one statement that grouped both sides and joined them took 88 ms (the
 * planner sorts each side: it takes the landed rows for a handful); the two reads take 20 + 22 ms and
 * the grouping here 9 ms. One statement that summed the costs per line and joined them took 80 ms.
 */
const landedCosts = (resolved: string) => `
WITH ${resolved}
SELECT 'row' AS kind, r.connection_id, r.company_source_id, r.agreement_source_id, r.line_source_id, r.line_product_source_id, r.isv_id,
       r.product_source_id, r.billable_quantity, r.msp_cost_extended, NULL::json AS unresolved, NULL::json AS currencies
  FROM resolved r WHERE r.reason IS NULL
UNION ALL
SELECT 'meta', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       (SELECT json_agg(r ORDER BY r.period_start DESC, r.external_customer_ref, r.product_source_id, r.id) FROM resolved r WHERE r.reason IS NOT NULL),
       (SELECT json_agg(currency) FROM (SELECT r.currency FROM resolved r GROUP BY r.currency) cur)`;
/** Over the resolution the charge recomputation stored (when current), and resolving inline. */
const LANDED_COSTS = { stored: landedCosts(storedCostsCte(true)), inline: landedCosts(resolvedCostsCte(true)) };

/**
 * Active subscriptions in the period, per distributor company and product, with their names. Grouped
 * before the names are joined: the planner takes `lower(status) = 'active'` for a handful of rows and
 * looked each company up by index per subscription (10 ms of 17 on the bench's 5,000). A product whose
 * subscriptions carry two names while the catalogue has none gives two rows, as it did; the service
 * sums rows that meet the same company and product.
 */
const DISTRIBUTOR_SIDE = `
SELECT g.company_source_id, g.product_source_id, co.name AS company_name, COALESCE(pr.name, g.product_name) AS product_name, g.quantity, g.cost
  FROM (SELECT s.connection_id, s.company_source_id, s.product_source_id, s.product_name,
               sum(COALESCE(s.quantity, 0)) AS quantity, sum(COALESCE(s.partner_cost, 0) * COALESCE(s.quantity, 0)) AS cost
          FROM subscriptions s
         WHERE s.tenant_id = $1 AND lower(s.status) = 'active'
           AND (s.start_date IS NULL OR substr(s.start_date, 1, 10) <= $3) AND (s.end_date IS NULL OR substr(s.end_date, 1, 10) >= $2)
         GROUP BY 1, 2, 3, 4) g
  LEFT JOIN companies co ON co.tenant_id = $1 AND co.connection_id = g.connection_id AND co.source_id = g.company_source_id
  LEFT JOIN products pr ON pr.tenant_id = $1 AND pr.connection_id = g.connection_id AND pr.source_id = g.product_source_id`;

/** The PSA's companies and catalogue products, which distributor names are matched against. */
const PSA_NAMES = `
SELECT 'company' AS kind, co.connection_id, co.source_id, co.name FROM companies co JOIN connections c ON c.id = co.connection_id AND c.kind = 'psa' WHERE co.tenant_id = $1
UNION ALL
SELECT 'product', p.connection_id, p.source_id, p.name FROM products p JOIN connections c ON c.id = p.connection_id AND c.kind = 'psa' WHERE p.tenant_id = $1`;

/** A minimum counts the ISV's cost for the product in the minimum's period, resolved or not. */
const PARTNER_MINIMUMS = `
SELECT m.isv_id, m.product_source_id, m.product_name, m.currency, m.minimum_amount,
       COALESCE((SELECT sum(c.msp_cost_extended) FROM isv_costs c
                  WHERE c.tenant_id = m.tenant_id AND c.isv_id = m.isv_id AND c.product_source_id = m.product_source_id
                    AND c.period_start >= m.period_start AND c.period_end <= m.period_end), 0) AS reported_cost
  FROM partner_minimums m
 WHERE m.tenant_id = $1 AND m.period_start >= $2 AND m.period_end <= $3
 ORDER BY m.product_source_id, m.period_start`;

export class ReconciliationStore {
  constructor(private readonly ds: DataSource) {}

  /**
   * The agreement lines, the landed cost rows, the distributor side, the PSA names and the partner
   * minimums of `range` ([tenant, start, end]). One snapshot for every figure (a sync that lands between
   * two statements cannot mix two states), and one connection held throughout: on the embedded
   * database's single connection, background work queued between the statements had tripled the time
   * (measured 380 ms against 120 ms alone). The cost rows' stored resolution when nothing it depends on
   * changed since it was made (the usual case: every change recomputes the charges, which stores it);
   * else resolved here.
   */
  snapshot(tenantId: string, range: unknown[]) {
    return this.ds.transaction('REPEATABLE READ', async (m) => [
      await m.query(ACTIVE_LINES, range) as Record<string, any>[],
      await m.query(LANDED_COSTS[await storedResolutionIsCurrent(m, tenantId) ? 'stored' : 'inline'], range) as Record<string, any>[],
      await m.query(DISTRIBUTOR_SIDE, range) as Record<string, any>[],
      await m.query(PSA_NAMES, [tenantId]) as { kind: 'company' | 'product'; connection_id: string; source_id: string; name: string | null }[],
      await m.query(PARTNER_MINIMUMS, range) as Record<string, any>[],
    ] as const);
  }
}
