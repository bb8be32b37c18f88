/**
 * Where a cost row lands (docs/architecture.md, Agreements and billing), the one rule behind charges and reconciliation: the
 * customer through the ISV's identity match (a PSA company), the product through the ISV's mapping to
 * a line of an agreement of that company. A row that does not land has a reason:
 * - `customer_unmatched`: the customer has no identity match;
 * - `product_unmapped`: no mapping pairs the product with a line of that company's agreements;
 * - `agreement_inactive`: it is paired with a line of an agreement that is not active, or a line that has ended.
 * A product marked `unmapped` on purpose is billed outside agreements: it lands nowhere and is not a problem.
 * The rule itself is written as SQL, in cost-resolution.store.ts; this module holds its types and words.
 */
import type { UNRESOLVED_REASONS } from './billing.schemas';

export type UnresolvedReason = (typeof UNRESOLVED_REASONS)[number];

export interface ResolvedCostRow {
  costId: string;
  isvId: string;
  customerRef: string;
  isvProductRef: string;
  periodStart: string;
  periodEnd: string;
  billableQuantity: number;
  mspCostExtended: number;
  currency: string;
  /** The matched PSA company (null: customer_unmatched). */
  connectionId: string | null;
  companySourceId: string | null;
  /** The mapped line, when the row lands on one. */
  agreementSourceId: string | null;
  lineSourceId: string | null;
  /** null: the row lands on the line (or is deliberately unmapped). */
  reason: UnresolvedReason | null;
  explicitlyUnmapped: boolean;
}

export interface PeriodFilter {
  start: string;
  end: string;
}

/**
 * What an unresolved row needs, in words a person reads (the console and the reconciliation CSV): never a
 * REST path. The console does the fix as an action on its page; pairing a product with a line is the ISV's
 * to do (create_agreement_line_mapping is ISV-only), so the words say so.
 */
const REASON_MESSAGES: Record<UnresolvedReason, string> = {
  customer_unmatched: 'The customer is not matched with one of your PSA companies yet: match it on the Identity page of your console.',
  product_unmapped: 'The ISV has not paired this product with a line of the customer\'s agreements yet: the ISV pairs it; ask them to, and check on the Identity page that the customer is matched with the right company.',
  agreement_inactive: 'The product is paired with a line of an agreement that is not active, or a line that has ended: renew the agreement or the line in your PSA, or ask the ISV to pair the product with a running line.',
};

/** An unresolved row as the charges list and the reconciliation show it. */
export function unresolvedOut(r: ResolvedCostRow) {
  return {
    cost_id: r.costId, isv_id: r.isvId, external_customer_ref: r.customerRef, product_source_id: r.isvProductRef,
    period_start: r.periodStart, period_end: r.periodEnd, billable_quantity: r.billableQuantity, msp_cost_extended: r.mspCostExtended,
    reason: r.reason!, message: REASON_MESSAGES[r.reason!],
  };
}

/** A cost row that lands on an agreement line: what a charge is proposed from. */
export type LandedCostRow = Pick<ResolvedCostRow, 'costId' | 'connectionId' | 'agreementSourceId' | 'lineSourceId' | 'periodStart' | 'periodEnd' | 'billableQuantity'>;

/** One `resolved` row as the services use it. */
export function resolvedCostRow(r: Record<string, any>): ResolvedCostRow {
  const reason = (r.reason ?? null) as UnresolvedReason | null;
  const lands = reason === null && r.line_source_id != null;
  return {
    costId: r.id, isvId: r.isv_id, customerRef: r.external_customer_ref, isvProductRef: r.product_source_id,
    periodStart: r.period_start, periodEnd: r.period_end, billableQuantity: Number(r.billable_quantity),
    mspCostExtended: Number(r.msp_cost_extended), currency: r.currency,
    connectionId: r.connection_id ?? null, companySourceId: r.company_source_id ?? null,
    agreementSourceId: lands ? r.agreement_source_id : null, lineSourceId: lands ? r.line_source_id : null,
    reason, explicitlyUnmapped: r.explicitly_unmapped === true,
  };
}

/** What a cost row became, as its ISV sees it (the submit answer and GET billing/costs). */
export type CostOutcome = 'landed' | UnresolvedReason | 'billed_outside_agreements';

export interface CostRowOutcome {
  status: CostOutcome;
  company_source_id: string | null;
  agreement_source_id: string | null;
  line_source_id: string | null;
  fix: string | null;
}

/** The outcome of one resolved row, with what would make it land, in plain words. */
export function costRowOutcome(r: ResolvedCostRow): CostRowOutcome {
  const base = { company_source_id: r.companySourceId, agreement_source_id: r.agreementSourceId, line_source_id: r.lineSourceId };
  if (r.reason === 'customer_unmatched') {
    return { ...base, status: r.reason, fix: `We do not know which of the MSP's companies your customer ${r.customerRef} is. Match it with one: POST /tenants/{tenant_id}/identity/match {customer_ref, company_source_id} (you or the MSP; GET /tenants/{tenant_id}/identity/unmapped lists the companies left and the candidates). The row lands as soon as it is matched.` };
  }
  if (r.reason === 'product_unmapped') {
    return { ...base, status: r.reason, fix: `Your product ${r.isvProductRef} is not paired with a line of an agreement of company ${r.companySourceId}. Pair it: POST /tenants/{tenant_id}/agreement-line-mappings (POST /tenants/{tenant_id}/agreement-line-mappings/suggest ranks the candidate lines), or map it with status unmapped if the MSP bills it outside agreements.` };
  }
  if (r.reason === 'agreement_inactive') {
    return { ...base, status: r.reason, fix: `Your product ${r.isvProductRef} is paired with a line of an agreement of company ${r.companySourceId} that is not active, or the line ended before ${r.periodStart}. The MSP renews the agreement or the line, or you pair the product with a running line (POST /tenants/{tenant_id}/agreement-line-mappings).` };
  }
  if (r.lineSourceId) return { ...base, status: 'landed', fix: null };
  return { ...base, status: 'billed_outside_agreements', fix: null };
}
