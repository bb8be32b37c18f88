/**
 * Billing (interface document: SubmitIsvCostBody, SubmitPartnerMinimumBody, ApproveChargeBody,
 * CreateAgreementLineMappingBody, SuggestAgreementLineMappingBody; docs/architecture.md, Agreements and billing). The request
 * schemas take the documented fields; the rules on their values (dates, currency, the extended cost)
 * are the billing services' and answer 422 `validation` with every problem listed.
 */
import { dryRun, keyedWrite, previewResult, commitResult } from '../operations/write-results';
import { listCursor, listEnvelope, pageQuery } from '../shared/paging';
import { dayField } from '../shared/dates';
import { pathId, TenantPath, text, z } from '../shared/request';

const replaceKey = text(200).min(1).nullable().optional()
  .openapi({ description: 'Optional. A later submission with the same key replaces the row it wrote (never a second row).' });
const day = (what: string) => dayField(40).openapi({ description: `${what}, \`YYYY-MM-DD\`.` });
const money = (what: string) => z.number().openapi({ description: what });
const optionalMoney = (what: string) => z.number().nullable().optional().openapi({ description: what });

export const SubmitIsvCostBody = z.object({
  external_customer_ref: text(200).min(1).openapi({ description: 'Your id of the customer (the `ref` of your identity book).' }),
  external_customer_name: text(300).nullable().optional(),
  product_source_id: text(200).min(1).openapi({ description: 'Your product id (what agreement-line mappings pair with a line).' }),
  product_name: text(300).nullable().optional(),
  period_start: day('First day of the period'),
  period_end: day('Last day of the period (not before period_start)'),
  actual_quantity: money('Units delivered (>= 0).'),
  billable_quantity: money('Units the customer should be billed for (>= 0); a charge proposes it for the mapped agreement line.'),
  currency: text(20).openapi({ description: 'ISO 4217 code, e.g. `USD`.' }),
  msp_cost_unit: money('What you charge the MSP per unit (>= 0).'),
  msp_cost_extended: money('msp_cost_unit x billable_quantity, within 0.01.'),
  customer_price_unit: optionalMoney('Price the MSP charges its customer per unit, when you know it.'),
  customer_price_extended: optionalMoney('customer_price_unit x billable_quantity.'),
  suggested_retail_unit: optionalMoney('Your suggested retail price per unit.'),
  suggested_retail_extended: optionalMoney('suggested_retail_unit x billable_quantity.'),
  dry_run: dryRun,
  idempotency_key: replaceKey,
}).strict().openapi('SubmitIsvCostBody');

export const SubmitPartnerMinimumBody = z.object({
  product_source_id: text(200).min(1).openapi({ description: 'Your product id.' }),
  product_name: text(300).nullable().optional(),
  period_start: day('First day of the period'),
  period_end: day('Last day of the period'),
  currency: text(20).openapi({ description: 'ISO 4217 code.' }),
  minimum_amount: money('The least the MSP owes you for this product in the period (>= 0).'),
  dry_run: dryRun,
  idempotency_key: replaceKey,
}).strict().openapi('SubmitPartnerMinimumBody');

/** What became of a cost row (docs/architecture.md, Agreements and billing), as its ISV reads it. */
export const COST_OUTCOMES = ['landed', 'customer_unmatched', 'product_unmapped', 'agreement_inactive', 'billed_outside_agreements'] as const;

export const CostRowCharge = z.object({
  id: z.string(), status: z.enum(['pending', 'approving', 'approved', 'dismissed']),
  current_quantity: z.number().nullable().openapi({ description: 'The line\'s quantity in the PSA when the charge was computed.' }),
  proposed_quantity: z.number().nullable().openapi({ description: 'The quantity the charge proposes for the line; null when other ISVs\' rows land on the same line (their figures are theirs).' }),
}).strict().openapi('CostRowCharge');

export const CostResolution = z.object({
  status: z.enum(COST_OUTCOMES).openapi({ description: '`landed`: on `line_source_id` of `agreement_source_id`; `customer_unmatched`, `product_unmapped`, `agreement_inactive`: it lands on no line, `fix` says what would change that; `billed_outside_agreements`: the product is mapped `unmapped` on purpose.' }),
  company_source_id: z.string().nullable().openapi({ description: 'The PSA company the customer is matched with (null: customer_unmatched).' }),
  agreement_source_id: z.string().nullable(), line_source_id: z.string().nullable(),
  fix: z.string().nullable().openapi({ description: 'What makes the row land, in plain words (null when it landed or is billed outside agreements).' }),
  charge: CostRowCharge.nullable().openapi({ description: 'The latest charge this row is behind (null: none; a landed row raises none when the line already bills its quantity, or when a later period\'s rows set what the line should bill).' }),
}).strict().openapi('CostResolution');

export const IsvCost = z.object({
  id: z.string(), isv_id: z.string(),
  external_customer_ref: z.string(), external_customer_name: z.string().nullable(),
  product_source_id: z.string(), product_name: z.string().nullable(),
  period_start: z.string(), period_end: z.string(),
  actual_quantity: z.number(), billable_quantity: z.number(), currency: z.string(),
  msp_cost_unit: z.number(), msp_cost_extended: z.number(),
  customer_price_unit: z.number().nullable(), customer_price_extended: z.number().nullable(),
  suggested_retail_unit: z.number().nullable(), suggested_retail_extended: z.number().nullable(),
  idempotency_key: z.string().nullable(),
  revision: z.number().int().openapi({ description: 'How many submissions wrote this row (1: never replaced).' }),
  created_at: z.string(), updated_at: z.string(),
  resolution: CostResolution,
}).strict().openapi('IsvCost');

export const PartnerMinimum = z.object({
  id: z.string(), isv_id: z.string(), product_source_id: z.string(), product_name: z.string().nullable(),
  period_start: z.string(), period_end: z.string(), currency: z.string(), minimum_amount: z.number(),
  idempotency_key: z.string().nullable(), revision: z.number().int(), created_at: z.string(), updated_at: z.string(),
}).strict().openapi('PartnerMinimum');

const replacedField = z.boolean().openapi({ description: 'The submission replaced an earlier row (same idempotency_key, or same ISV, customer, product and period); totals count it once.' });

export const IsvCostSubmitted = z.object({
  dry_run: z.boolean().openapi({ description: 'true: a preview, nothing was stored.' }),
  replaced: replacedField,
  replaces_id: z.string().nullable().openapi({ description: 'The row this submission replaces (or would replace).' }),
  identified_by: z.enum(['idempotency_key', 'customer_product_period']).openapi({ description: 'What identifies the row: the submission\'s `idempotency_key` (body or Idempotency-Key header), else your customer, product and period. A later submission with the same identity replaces the row.' }),
  cost: IsvCost.omit({ id: true, created_at: true, updated_at: true }).extend({ id: z.string().nullable(), created_at: z.string().nullable(), updated_at: z.string().nullable() })
    .openapi({ description: 'The row as stored (a preview: as it would be stored, id null when new).' }),
}).strict().openapi('IsvCostSubmitted');

export const PartnerMinimumSubmitted = z.object({
  dry_run: z.boolean(), replaced: replacedField, replaces_id: z.string().nullable(),
  minimum: PartnerMinimum.omit({ id: true, created_at: true, updated_at: true }).extend({ id: z.string().nullable(), created_at: z.string().nullable(), updated_at: z.string().nullable() }),
}).strict().openapi('PartnerMinimumSubmitted');

const periodFilter = {
  period_start: day('Rows whose period starts on or after this day').nullable().optional(),
  period_end: day('Rows whose period ends on or before this day').nullable().optional(),
};
const isvFilter = text(100).nullable().optional().openapi({ description: 'MSP key only: one ISV\'s rows (an ISV key sees its own).' });

/** Cost rows and minimums page newest period first, then by customer, product and id. */
export const COSTS_CURSOR = listCursor('billing_costs', ['text', 'text', 'text', 'uuid']);
export const MINIMUMS_CURSOR = listCursor('partner_minimums', ['text', 'text', 'uuid']);

export const CostsQuery = pageQuery(COSTS_CURSOR, { updatedSince: true }, {
  ...periodFilter,
  customer: text(200).nullable().optional().openapi({ description: 'One customer (`external_customer_ref`).' }),
  product: text(200).nullable().optional().openapi({ description: 'One product (`product_source_id`).' }),
  isv_id: isvFilter,
});
export const MinimumsQuery = pageQuery(MINIMUMS_CURSOR, { updatedSince: true }, {
  ...periodFilter, product: text(200).nullable().optional(), isv_id: isvFilter,
});

export const IsvCostList = listEnvelope('IsvCostList', 'billing/costs', IsvCost, { extra: {
  totals: z.object({ billable_quantity: z.number(), msp_cost_extended: z.number() }).strict()
    .openapi({ description: 'Over every row the filters keep (all pages), not only this page.' }),
} });
export const PartnerMinimumList = listEnvelope('PartnerMinimumList', 'billing/partner-minimums', PartnerMinimum);

/* Agreement-line mappings */

export const CreateAgreementLineMappingBody = z.object({
  vendor_key: text(100).min(1).openapi({ description: 'Your own ISV id (an ISV maps only its own products).' }),
  vendor_product_ref: text(200).min(1).openapi({ description: 'Your product id, as in cost rows (`product_source_id`).' }),
  status: z.enum(['mapped', 'unmapped']).openapi({ description: '`mapped`: pair the product with the agreement line named; `unmapped`: the product is deliberately not billed through an agreement.' }),
  agreement_id: text(200).nullable().optional().openapi({ description: '`mapped`: the agreement (`source_id` from GET /tenants/{tenant_id}/agreements).' }),
  agreement_line_ref: text(200).nullable().optional().openapi({ description: '`mapped`: the line (`source_id` of one of the agreement\'s lines).' }),
  psa_vendor: text(50).nullable().optional().openapi({ description: 'The PSA connector; optional, checked against the agreement\'s connection when given.' }),
}).strict().superRefine((b, ctx) => {
  if (b.status === 'mapped') {
    if (!b.agreement_id) ctx.addIssue({ code: 'custom', path: ['agreement_id'], message: 'is required when status is mapped' });
    if (!b.agreement_line_ref) ctx.addIssue({ code: 'custom', path: ['agreement_line_ref'], message: 'is required when status is mapped' });
  } else {
    if (b.agreement_id) ctx.addIssue({ code: 'custom', path: ['agreement_id'], message: 'is not used when status is unmapped' });
    if (b.agreement_line_ref) ctx.addIssue({ code: 'custom', path: ['agreement_line_ref'], message: 'is not used when status is unmapped' });
  }
}).openapi('CreateAgreementLineMappingBody');

export const AgreementLineMappingOut = z.object({
  id: z.string(), vendor_key: z.string(), vendor_product_ref: z.string(), status: z.enum(['mapped', 'unmapped']),
  agreement_id: z.string().nullable(), agreement_line_ref: z.string().nullable(), psa_vendor: z.string().nullable(),
  connection_id: z.string().nullable(), company_source_id: z.string().nullable(), company_name: z.string().nullable(),
  line_product_source_id: z.string().nullable(), line_product_name: z.string().nullable(),
  decided_by: z.enum(['isv', 'msp']), created_at: z.string(),
}).strict().openapi('AgreementLineMapping');

export const MappingCreated = AgreementLineMappingOut.extend({
  already_existed: z.boolean().openapi({ description: 'The same pairing existed; nothing changed (HTTP 200).' }),
  removed_unmapped: z.boolean().openapi({ description: 'An explicit `unmapped` state of this product was replaced by this pairing.' }),
}).strict().openapi('AgreementLineMappingCreated');

/** Mappings page by product, agreement, line and id. */
export const LINE_MAPPINGS_CURSOR = listCursor('agreement_line_mappings', ['text', 'text', 'text', 'uuid']);
export const MappingsQuery = pageQuery(LINE_MAPPINGS_CURSOR, { updatedSince: true }, {
  vendor_product_ref: text(200).nullable().optional(), agreement_id: text(200).nullable().optional(), isv_id: isvFilter,
});
export const MappingList = listEnvelope('AgreementLineMappingList', 'agreement-line-mappings', AgreementLineMappingOut);
export const MappingPath = TenantPath.extend({ mapping_id: pathId('mapping_id', 'The mapping\'s `id`.') }).strict();
export const MappingDeleteQuery = z.object({
  dry_run: z.enum(['true', 'false']).nullable().optional().openapi({ description: '`true`: answer what would be deleted and delete nothing (default `false`: delete).' }),
}).strict();
export const MappingDeleted = z.object({
  id: z.string(), deleted: z.boolean().openapi({ description: 'true: deleted; false: a preview (`dry_run=true`), nothing was deleted.' }),
  dry_run: z.boolean(),
}).strict().openapi('AgreementLineMappingDeleted');

export const SuggestAgreementLineMappingBody = z.object({
  vendor_key: text(100).min(1).openapi({ description: 'Your own ISV id.' }),
  vendor_product_ref: text(200).min(1),
  product_name: text(300).nullable().optional(),
  product_sku: text(200).nullable().optional(),
  external_customer_ref: text(200).nullable().optional().openapi({ description: 'Only lines of this customer\'s agreements (through your identity matches).' }),
  limit: z.number().int().min(1).max(100).default(10),
}).strict().openapi('SuggestAgreementLineMappingBody');

export const MappingCandidate = z.object({
  agreement_id: z.string(), agreement_name: z.string(), agreement_line_ref: z.string(), connection_id: z.string(), psa_vendor: z.string(),
  company_source_id: z.string().nullable(), company_name: z.string().nullable(),
  line_product_source_id: z.string().nullable(), line_product_name: z.string().nullable(), line_sku: z.string().nullable(),
  quantity: z.number().nullable(),
  score: z.number().openapi({ description: '0 to 1; higher is a better candidate.' }),
  reasons: z.array(z.enum(['same_sku', 'same_product_name', 'similar_product_name', 'customer_reports_product'])),
  already_mapped: z.boolean(),
}).strict().openapi('AgreementLineMappingCandidate');

export const MappingSuggestions = z.object({
  vendor_product_ref: z.string(), candidates: z.array(MappingCandidate),
  mapped: z.literal(false).openapi({ description: 'Suggest never maps; create a mapping to pair.' }),
}).strict().openapi('AgreementLineMappingSuggestions');

/* Charges */

export const UNRESOLVED_REASONS = ['customer_unmatched', 'product_unmapped', 'agreement_inactive'] as const;
export const CHARGE_STATUSES = ['pending', 'approved', 'dismissed'] as const;

export const Charge = z.object({
  id: z.string(), agreement_source_id: z.string(), line_source_id: z.string(), connection_id: z.string(), connector: z.string(),
  company: z.object({ source_id: z.string().nullable(), name: z.string().nullable() }).strict(),
  product: z.object({ source_id: z.string().nullable(), name: z.string().nullable() }).strict(),
  current_quantity: z.number().nullable().openapi({ description: 'The line\'s quantity in the PSA when the charge was computed.' }),
  proposed_quantity: z.number().openapi({ description: 'The billable quantity reported for the line\'s period (summed over the cost rows).' }),
  unit_price: z.number().nullable(),
  period: z.object({ start: z.string(), end: z.string() }).strict(),
  cost_rows: z.array(z.string()).openapi({ description: 'Ids of the cost rows behind the charge.' }),
  status: z.enum(['pending', 'approving', 'approved', 'dismissed']).openapi({ description: '`approving`: an approval is being written right now.' }),
  decided_at: z.string().nullable(),
  created_at: z.string(), updated_at: z.string(),
}).strict().openapi('Charge');

/**
 * A charge as the ISV whose rows raised it sees it: status and quantities, its own rows only. Not the
 * line's `unit_price` (the MSP's price to its customer, from which the MSP's margin on the ISV's cost
 * follows) nor the connection; the proposed total only when every row behind it is the ISV's own.
 */
export const IsvCharge = z.object({
  id: z.string(), agreement_source_id: z.string(), line_source_id: z.string(), connector: z.string(),
  company: z.object({ source_id: z.string().nullable(), name: z.string().nullable() }).strict(),
  product: z.object({ source_id: z.string().nullable(), name: z.string().nullable() }).strict(),
  current_quantity: z.number().nullable().openapi({ description: 'The line\'s quantity in the PSA when the charge was computed.' }),
  proposed_quantity: z.number().nullable().openapi({ description: 'The quantity the charge proposes for the line; null when other ISVs\' rows land on it too.' }),
  your_quantity: z.number().openapi({ description: 'The billable quantity of your rows behind the charge.' }),
  period: z.object({ start: z.string(), end: z.string() }).strict(),
  cost_rows: z.array(z.string()).openapi({ description: 'Ids of your cost rows behind the charge.' }),
  status: z.enum(['pending', 'approving', 'approved', 'dismissed']),
  decided_at: z.string().nullable(), created_at: z.string(), updated_at: z.string(),
}).strict().openapi('IsvCharge');

export const UnresolvedCostRow = z.object({
  cost_id: z.string(), isv_id: z.string(), external_customer_ref: z.string(), product_source_id: z.string(),
  period_start: z.string(), period_end: z.string(), billable_quantity: z.number(), msp_cost_extended: z.number(),
  reason: z.enum(UNRESOLVED_REASONS),
  message: z.string(),
}).strict().openapi('UnresolvedCostRow');

/** Charges page newest period first, then by agreement, line and id. */
export const CHARGES_CURSOR = listCursor('charges', ['text', 'text', 'text', 'uuid']);
export const ChargesQuery = pageQuery(CHARGES_CURSOR, { updatedSince: true }, {
  status: z.enum(CHARGE_STATUSES).nullable().optional().openapi({ description: 'Only charges in this state (default: all).' }),
});
export const ChargeList = listEnvelope('ChargeList', 'charges', Charge, { extra: {
  view: z.literal('msp').openapi({ description: 'The MSP\'s view: every charge, with prices.' }),
  unresolved: z.array(UnresolvedCostRow).openapi({ description: 'Cost rows of the latest period of each customer and product that resolve to no agreement line, with the reason. The whole set on every page (not paged with the charges).' }),
} });

export const IsvChargeList = listEnvelope('IsvChargeList', 'charges', IsvCharge, { extra: {
  view: z.literal('isv').openapi({ description: 'An ISV\'s view: the charges its own rows raised.' }),
  unresolved: z.array(UnresolvedCostRow).openapi({ description: 'Your cost rows that resolve to no agreement line, with the reason. The whole set on every page.' }),
} });

export const ChargePath = TenantPath.extend({ charge_id: pathId('charge_id', 'The charge\'s `id`.') }).strict();

export const ApproveChargeBody = z.object({
  dry_run: dryRun.openapi({ description: 'Preview the vendor write (default) without marking the charge approved.' }),
  idempotency_key: text(200).min(1).nullable().optional().openapi({ description: 'Required to commit. The same key sent twice rewrites the line once and answers the first result.' }),
}).strict().superRefine((b, ctx) => {
  if (b.dry_run === false && !b.idempotency_key) ctx.addIssue({ code: 'custom', path: ['idempotency_key'], message: 'is required to commit (dry_run false): send it in the body or the Idempotency-Key header' });
}).openapi('ApproveChargeBody');

export const ApproveChargePreview = previewResult('ApproveChargePreview', { charge: Charge });
export const ApproveChargeResult = commitResult('ApproveChargeResult', {
  charge: Charge,
  line_source_id: z.string(), quantity: z.number().openapi({ description: 'The line\'s quantity now.' }),
});
export const DismissChargeBody = keyedWrite('DismissChargeBody', {});
export const RestoreChargeBody = keyedWrite('RestoreChargeBody', {});
const decisionStatus = z.enum(['pending', 'dismissed']);
export const ChargeDecision = z.object({
  dry_run: z.boolean().openapi({ description: 'true: a preview; the charge is as it was.' }),
  charge: Charge,
  changed: z.boolean().openapi({ description: 'Whether the decision changes (a preview: would change) the charge; false when it is already there.' }),
  change: z.object({ status: z.object({ from: decisionStatus, to: decisionStatus }).strict() }).strict().nullable()
    .openapi({ description: 'What the commit changes (a preview) or changed; null when nothing. Nothing is sent to the PSA either way.' }),
}).strict().openapi('ChargeDecision');

/* Reconciliation */

/** Reconciliation rows page in their order (company and product name, then ids); the cursor holds that key. */
export const RECONCILIATION_CURSOR = listCursor('reconciliation', ['text', 'text', 'text', 'text', 'text', 'text']);
export const ReconciliationQuery = pageQuery(RECONCILIATION_CURSOR, { updatedSince: false }, {
  period_start: day('First day of the period'),
  period_end: day('Last day of the period'),
  format: z.enum(['json', 'csv']).optional().openapi({ description: '`csv` (or `Accept: text/csv`): the same figures as CSV, every row of the period (not paged), then the partner minimums, the unresolved rows and the totals.' }),
});

const sourceQty = z.number().nullable();
export const ReconciliationRow = z.object({
  company: z.object({ source_id: z.string().nullable(), name: z.string().nullable(), connection_id: z.string().nullable() }).strict(),
  product: z.object({ source_id: z.string().nullable(), name: z.string().nullable(), isv_product_refs: z.array(z.string()) }).strict()
    .openapi({ description: 'The PSA catalogue product (of the agreement line), with the ISV products mapped to it.' }),
  agreement_source_id: z.string().nullable(), line_source_ids: z.array(z.string()),
  isv_billable_quantity: sourceQty.openapi({ description: 'Summed over the ISV cost rows of the period; null: no ISV reports it.' }),
  agreement_quantity: sourceQty.openapi({ description: 'The agreement line\'s quantity; null: no active line bills it.' }),
  unit_price: sourceQty,
  subscription_quantity: sourceQty.openapi({ description: 'Distributor subscriptions of the same company and product; null: none.' }),
  isv_cost: z.number(), distributor_cost: z.number(),
  msp_cost: z.number().openapi({ description: 'isv_cost + distributor_cost.' }),
  revenue: z.number().openapi({ description: 'agreement_quantity x unit_price x months.' }),
  margin: z.number().openapi({ description: 'revenue - msp_cost.' }),
  differences: z.array(z.enum(['isv_vs_agreement', 'subscription_vs_agreement', 'not_billed'])),
}).strict().openapi('ReconciliationRow');

export const PartnerMinimumStatus = z.object({
  isv_id: z.string(), product_source_id: z.string(), product_name: z.string().nullable(), currency: z.string(),
  minimum_amount: z.number(), reported_cost: z.number().openapi({ description: 'msp_cost_extended of the ISV\'s cost rows for the product in the period.' }),
  shortfall: z.number().openapi({ description: 'max(0, minimum_amount - reported_cost): what the MSP owes beyond its reported cost.' }),
}).strict().openapi('PartnerMinimumStatus');

export const Reconciliation = listEnvelope('Reconciliation', 'billing/reconciliation', ReconciliationRow, { extra: {
  period_start: z.string(), period_end: z.string(), months: z.number().int().openapi({ description: 'Calendar months the period touches; line and subscription figures are monthly and multiplied by it.' }),
  currencies: z.array(z.string()).openapi({ description: 'Currencies of the cost rows (figures are not converted).' }),
  partner_minimums: z.array(PartnerMinimumStatus).openapi({ description: 'Every partner minimum of the period, on every page.' }),
  unresolved: z.array(UnresolvedCostRow).openapi({ description: 'Every unresolved cost row of the period, on every page.' }),
  totals: z.object({
    isv_cost: z.number(), distributor_cost: z.number(), msp_cost: z.number(), revenue: z.number(), margin: z.number(),
    partner_minimum_shortfall: z.number(), margin_after_minimums: z.number(),
    unresolved_isv_cost: z.number().openapi({ description: 'msp_cost_extended of the unresolved rows (not in `reconciliation`).' }),
  }).strict().openapi({ description: 'Over the whole period (every page), not only this page.' }),
} });
