/**
 * ISV cost rows and partner minimums (docs/architecture.md, Agreements and billing). A row is identified by the submission's
 * `idempotency_key`, or without one by (ISV, customer, product, period) for a cost row and (ISV,
 * product, period) for a minimum; a later submission for the same identity replaces the row (its
 * `revision` grows), so a replay or a correction never counts twice. `dry_run` (the default) answers
 * what a commit would store and whether it would replace a row; nothing is written.
 */
import type { DataSource } from 'typeorm';
import type { z } from 'zod';
import { checkAmount, checkCurrency, checkDay, checkExtended, checkPeriod, roundMoney, throwProblems, type Problem } from './billing-rules';
import { COSTS_CURSOR, MINIMUMS_CURSOR, type CostsQuery, type IsvCost, type IsvCostSubmitted, type MinimumsQuery, type PartnerMinimum, type PartnerMinimumSubmitted, type SubmitIsvCostBody, type SubmitPartnerMinimumBody } from './billing.schemas';
import type { Page } from '../shared/paging';
import { costRowOutcome, type ResolvedCostRow } from './cost-resolution';
import { resolveCostRowsById, resolveUnstoredCostRow } from './cost-resolution.store';
import { COST_ORDER, COSTS, CostRowsStore, MINIMUM_ORDER, MINIMUMS, type RowTable, type StoredRow, type Values } from './cost-rows.store';
import { retryingTransient } from '../db/transient';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';
import { Transactions } from '../db/transactions';

type CostBody = z.infer<typeof SubmitIsvCostBody>;
type MinimumBody = z.infer<typeof SubmitPartnerMinimumBody>;
type Cost = z.infer<typeof IsvCost>;
type StoredCost = Omit<Cost, 'resolution'>;
type Resolution = Cost['resolution'];
type Minimum = z.infer<typeof PartnerMinimum>;

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

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A committed cost submission changed a tenant's cost rows (charges are recomputed from them). */
    'billing.cost_rows_changed': CommittedReaction<CostChange>;
  }
}

export class CostRowsService {
  private readonly store: CostRowsStore;

  /** `changes`: where a committed submission that changed the rows is told (`billing.cost_rows_changed`). */
  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(private readonly ds: DataSource, private readonly changes: CommittedChanges = new CommittedChanges()) {
    this.transactions = new Transactions(ds);
    this.store = new CostRowsStore(ds);
  }

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

  private async submit(t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values, dryRun: boolean): Promise<{ row: Partial<StoredRow>; replaces: string | null }> {
    if (dryRun) {
      const before = await this.store.prior(t, tenantId, isvId, key, values, false);
      return { row: { id: before?.id, revision: (before?.revision ?? 0) + 1 } as Partial<StoredRow>, replaces: before?.id ?? null };
    }
    // Two racing first submissions of one identity: the loser's insert meets the unique index and is
    // retried once, when it finds the winner's row and replaces it.
    for (let attempt = 1; ; attempt++) {
      try {
        const out = await retryingTransient(() => this.transactions.run(async (m) => this.store.write(m, t, tenantId, isvId, key, values)));
        await this.changes.publish('billing.cost_rows_changed', { tenantId }, { tenantId });
        return out;
      } catch (err) {
        if (attempt < 3 && (err as { code?: string }).code === '23505') continue;
        throw err;
      }
    }
  }

  /** Cost rows newest period first, one page; `totals` are over every row the filters keep, not only this page. */
  async listCosts(tenantId: string, isvId: string | null, q: z.infer<typeof CostsQuery>): Promise<Page<Cost> & { totals: { billable_quantity: number; msp_cost_extended: number } }> {
    const { where, args } = filters(tenantId, isvId, q, { customer: 'external_customer_ref', product: 'product_source_id' });
    const sum = await this.store.costTotals(where, args);
    const page = await this.store.page('isv_costs', where, args, q, COSTS_CURSOR, COST_ORDER, costOut);
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
    const charges = ids.length ? await this.store.chargesOfRows(tenantId, ids, viewer) : [];
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
    return this.store.page('partner_minimums', where, args, q, MINIMUMS_CURSOR, MINIMUM_ORDER, minimumOut);
  }

}

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
