/**
 * Billing (interface document: SubmitIsvCostBody, SubmitPartnerMinimumBody, ApproveChargeBody,
 * CreateAgreementLineMappingBody, SuggestAgreementLineMappingBody; design.md section 12). The request
 * schemas take the documented fields; the rules on their values (dates, currency, the extended cost)
 * are the billing services' and answer 422 `validation` with every problem listed.
 */
import { dryRun, previewResult, commitResult } from '../operations/write-results';
import { limitParam, pathId, TenantPath, text, z } from '../shared/request';

const replaceKey = text(200).min(1).nullable().optional()
  .openapi({ description: 'Optional. A later submission with the same key replaces the row it wrote (never a second row).' });
const day = (what: string) => text(40).openapi({ description: `${what}, \`YYYY-MM-DD\`.` });
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

export const CostsQuery = z.object({
  ...periodFilter,
  customer: text(200).nullable().optional().openapi({ description: 'One customer (`external_customer_ref`).' }),
  product: text(200).nullable().optional().openapi({ description: 'One product (`product_source_id`).' }),
  isv_id: isvFilter, limit: limitParam,
}).strict();
export const MinimumsQuery = z.object({
  ...periodFilter, product: text(200).nullable().optional(), isv_id: isvFilter, limit: limitParam,
}).strict();

export const IsvCostList = z.object({
  costs: z.array(IsvCost), truncated: z.boolean().openapi({ description: 'More rows match than `limit`; narrow the filters.' }),
  totals: z.object({ billable_quantity: z.number(), msp_cost_extended: z.number() }).strict().openapi({ description: 'Over the rows listed.' }),
}).strict().openapi('IsvCostList');
export const PartnerMinimumList = z.object({ partner_minimums: z.array(PartnerMinimum), truncated: z.boolean() }).strict().openapi('PartnerMinimumList');

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

export const MappingsQuery = z.object({
  vendor_product_ref: text(200).nullable().optional(), agreement_id: text(200).nullable().optional(), isv_id: isvFilter,
}).strict();
export const MappingList = z.object({ mappings: z.array(AgreementLineMappingOut) }).strict().openapi('AgreementLineMappingList');
export const MappingPath = TenantPath.extend({ mapping_id: pathId('mapping_id', 'The mapping\'s `id`.') }).strict();
export const MappingDeleted = z.object({ id: z.string(), deleted: z.literal(true) }).strict().openapi('AgreementLineMappingDeleted');

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

export const UnresolvedCostRow = z.object({
  cost_id: z.string(), isv_id: z.string(), external_customer_ref: z.string(), product_source_id: z.string(),
  period_start: z.string(), period_end: z.string(), billable_quantity: z.number(), msp_cost_extended: z.number(),
  reason: z.enum(UNRESOLVED_REASONS),
  message: z.string(),
}).strict().openapi('UnresolvedCostRow');

export const ChargesQuery = z.object({
  status: z.enum(CHARGE_STATUSES).nullable().optional().openapi({ description: 'Only charges in this state (default: all).' }),
}).strict();
export const ChargeList = z.object({
  charges: z.array(Charge),
  unresolved: z.array(UnresolvedCostRow).openapi({ description: 'Cost rows of the latest period of each customer and product that resolve to no agreement line, with the reason.' }),
}).strict().openapi('ChargeList');

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
export const DismissedCharge = z.object({ charge: Charge, changed: z.boolean().openapi({ description: 'false when it was already dismissed.' }) }).strict().openapi('DismissedCharge');

/* Reconciliation */

export const ReconciliationQuery = z.object({
  period_start: day('First day of the period'),
  period_end: day('Last day of the period'),
}).strict();

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

export const Reconciliation = z.object({
  period_start: z.string(), period_end: z.string(), months: z.number().int().openapi({ description: 'Calendar months the period touches; line and subscription figures are monthly and multiplied by it.' }),
  currencies: z.array(z.string()).openapi({ description: 'Currencies of the cost rows (figures are not converted).' }),
  rows: z.array(ReconciliationRow),
  partner_minimums: z.array(PartnerMinimumStatus),
  unresolved: z.array(UnresolvedCostRow),
  totals: z.object({
    isv_cost: z.number(), distributor_cost: z.number(), msp_cost: z.number(), revenue: z.number(), margin: z.number(),
    partner_minimum_shortfall: z.number(), margin_after_minimums: z.number(),
    unresolved_isv_cost: z.number().openapi({ description: 'msp_cost_extended of the unresolved rows (not in `rows`).' }),
  }).strict(),
}).strict().openapi('Reconciliation');

