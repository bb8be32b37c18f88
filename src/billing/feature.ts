/**
 * Billing (interface document rule 8 and Limits 5, docs/architecture.md, Agreements and billing): ISV cost rows and partner
 * minimums, agreement-line mappings, charges and the reconciliation. Charges are recomputed after
 * every change they derive from: a committed cost submission, a mapping created or deleted, an
 * identity decision, and a sync that changed agreements, lines or PSA companies.
 */
import { isvOf, type TenantAccess, type AccessService } from '../access/access.service';
import { Grant, isvOfCaller } from '../access/caller';
import type { z } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import { ServiceError } from '../errors/service-error';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf, type OperationContext } from '../operations/operation';
import { envelopeOf, pageOfAll, updatedSince, type Key } from '../shared/paging';
import { TenantPath } from '../shared/request';
import { checkPeriod, compareNames, compareVendorIds, throwProblems, type Problem } from './billing-rules';
import * as S from './billing.schemas';
import type { AuditService } from '../audit/audit.service';
import type { IdentityService } from '../identity/identity.service';
import type { ChargesService } from './charges.service';
import type { CostRowsService } from './cost-rows.service';
import type { LineMappingsService } from './line-mappings.service';
import type { ReconciliationService } from './reconciliation.service';
import type { Logger } from 'pino';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface BillingServices {
  access: AccessService;
  audit: AuditService;
  charges: ChargesService;
  costRows: CostRowsService;
  identity: IdentityService;
  lineMappings: LineMappingsService;
  logger: Logger;
  reconciliation: ReconciliationService;
}
const defineOperation = operationsUsing<BillingServices>();
import { reconciliationCsv } from './reconciliation-csv';
import { reactTo } from '../shared/committed-changes';

/** An ISV submits and maps with `billing.cost.submit` on a connection of the tenant (declared, checked by the runner). */
function submitter(ctx: OperationContext): { access: TenantAccess; isvId: string } {
  return { access: tenantOf(ctx), isvId: isvOf(ctx.caller) };
}

/**
 * Whose rows a read shows: an ISV its own (the declared grant billing.cost.submit, which an MSP key
 * holds everywhere on its tenant); an MSP every ISV's, or the one it names.
 */
function readerScope(ctx: OperationContext, isvId: string | null | undefined): string | null {
  return isvOfCaller(ctx.caller) ?? isvId ?? null;
}

const SUBMIT_ERRORS: ErrorCode[] = ['grant_missing', 'role_required', 'validation', 'idempotency_conflict'];
const submitStatus = (r: { dry_run: boolean; replaced: boolean }) => (r.dry_run || r.replaced ? 200 : 201);
/** A submission that replaces its row answers 200, a new row 201 (cost rows and partner minimums alike). */
const submitResponses = <T extends z.ZodTypeAny>(schema: T) => [
  { status: 200, schema, description: 'A preview, or a committed submission that replaced an earlier row.' },
  { status: 201, schema, description: 'Committed: a new row.' },
];

const submitCost = defineOperation({
  name: 'submit_isv_cost', kind: 'mutation', summary: 'Report what you delivered to a customer in a period (your cost and the billable quantity)', tag: 'Billing',
  role: 'isv', grant: Grant.CostSubmit,
  description: 'One cost row per customer, product and period. `dry_run` (default true) answers what would be stored. A row is identified by its `idempotency_key` (body or `Idempotency-Key` header) or, without one, by your customer, product and period (`identified_by`): a later submission with the same identity replaces the row (200, `replaced: true`), so nothing is counted twice. The answer says what became of the row (`cost.resolution`): `landed` on an agreement line, or why not and what fixes it. Rules (422 `validation`, every problem listed): real `YYYY-MM-DD` days with period_end >= period_start, quantities and amounts finite and >= 0, an ISO 4217 currency, and msp_cost_extended = msp_cost_unit x billable_quantity within 0.01 (the same for the customer price and suggested retail pairs when both are given). Charges are recomputed after a commit.',
  http: { method: 'post', path: '/tenants/{tenant_id}/billing/costs', documented: false },
  path: TenantPath, body: S.SubmitIsvCostBody,
  responses: submitResponses(S.IsvCostSubmitted),
  statusOf: submitStatus, errors: SUBMIT_ERRORS,
  handle: async ({ body }, ctx) => {
    const { access, isvId } = submitter(ctx);
    return ctx.services.costRows.submitCost(access.tenant.id, isvId, body);
  },
});

const listCosts = defineOperation({
  name: 'list_isv_costs', kind: 'query', summary: 'ISV cost rows', tag: 'Billing', role: 'reader', grant: Grant.CostSubmit,
  description: 'The cost rows (an ISV key: its own; an MSP key: every ISV\'s, or `isv_id`\'s), newest period first, each with its `resolution`: `landed` with the agreement and line (and the charge it is behind), or the reason it lands nowhere and what fixes it. `period_start`/`period_end` keep rows whose period lies inside them.',
  http: { method: 'get', path: '/tenants/{tenant_id}/billing/costs', documented: false },
  path: TenantPath, query: S.CostsQuery,
  responses: [{ status: 200, schema: S.IsvCostList, description: 'One page of rows, and the totals of every row the filters keep.' }],
  errors: ['grant_missing', 'validation'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const { totals, ...page } = await ctx.services.costRows.listCosts(access.tenant.id, readerScope(ctx, query.isv_id), query);
    return { ...envelopeOf('billing/costs', page, access.tenant.sandbox), totals };
  },
});

const submitMinimum = defineOperation({
  name: 'submit_partner_minimum', kind: 'mutation', summary: 'Report the minimum the MSP owes you for a product in a period', tag: 'Billing',
  role: 'isv', grant: Grant.CostSubmit,
  description: 'One row per product and period, replaced like cost rows (same `idempotency_key`, or same product and period). The reconciliation shows the shortfall: the minimum less your reported cost for the product in that period. Rules: real days, period_end >= period_start, minimum_amount finite and >= 0, ISO 4217 currency.',
  http: { method: 'post', path: '/tenants/{tenant_id}/billing/partner-minimums', documented: false },
  path: TenantPath, body: S.SubmitPartnerMinimumBody,
  responses: submitResponses(S.PartnerMinimumSubmitted),
  statusOf: submitStatus, errors: SUBMIT_ERRORS,
  handle: async ({ body }, ctx) => {
    const { access, isvId } = submitter(ctx);
    return ctx.services.costRows.submitMinimum(access.tenant.id, isvId, body);
  },
});

const listMinimums = defineOperation({
  name: 'list_partner_minimums', kind: 'query', summary: 'Partner minimums', tag: 'Billing', role: 'reader', grant: Grant.CostSubmit,
  http: { method: 'get', path: '/tenants/{tenant_id}/billing/partner-minimums', documented: false },
  path: TenantPath, query: S.MinimumsQuery,
  responses: [{ status: 200, schema: S.PartnerMinimumList, description: 'The minimums (an ISV key: its own).' }],
  errors: ['grant_missing', 'validation'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    return envelopeOf('billing/partner-minimums', await ctx.services.costRows.listMinimums(access.tenant.id, readerScope(ctx, query.isv_id), query), access.tenant.sandbox);
  },
});

const createMapping = defineOperation({
  name: 'create_agreement_line_mapping', kind: 'mutation', summary: 'Pair one of your products with an agreement line (or mark it unmapped)', tag: 'Billing',
  role: 'isv', grant: Grant.CostSubmit,
  description: '`mapped`: the product is billed on that line of an existing, active agreement (its cost rows for that agreement\'s company land there). `unmapped`: the product is deliberately not billed through an agreement (its rows are not reported as unresolved). `vendor_key` is your own ISV id. The same pairing twice answers 200 with `already_existed`.',
  http: { method: 'post', path: '/tenants/{tenant_id}/agreement-line-mappings', documented: false },
  path: TenantPath, body: S.CreateAgreementLineMappingBody,
  responses: [
    { status: 201, schema: S.MappingCreated, description: 'Created.' },
    { status: 200, schema: S.MappingCreated, description: 'The same pairing existed; nothing changed.' },
  ],
  statusOf: (r: { already_existed: boolean }) => (r.already_existed ? 200 : 201),
  errors: ['grant_missing', 'role_required', 'validation', 'request_invalid'],
  handle: async ({ body }, ctx) => {
    const { access, isvId } = submitter(ctx);
    return ctx.services.lineMappings.create(access, isvId, body);
  },
});

const listMappings = defineOperation({
  name: 'list_agreement_line_mappings', kind: 'query', summary: 'Agreement-line mappings', tag: 'Billing', role: 'reader', grant: Grant.CostSubmit,
  http: { method: 'get', path: '/tenants/{tenant_id}/agreement-line-mappings', documented: false },
  path: TenantPath, query: S.MappingsQuery,
  responses: [{ status: 200, schema: S.MappingList, description: 'The mappings (an ISV key: its own), with the agreement\'s company and the line\'s product.' }],
  errors: ['grant_missing'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const all = updatedSince(await ctx.services.lineMappings.list(access.tenant.id, readerScope(ctx, query.isv_id), query), query, (m) => m.created_at);
    const page = pageOfAll(all, query, S.LINE_MAPPINGS_CURSOR, ['text', 'text', 'text', 'uuid'], (m) => [m.vendor_product_ref, m.agreement_id ?? '', m.agreement_line_ref ?? '', m.id]);
    return envelopeOf('agreement-line-mappings', page, access.tenant.sandbox);
  },
});

const deleteMapping = defineOperation({
  name: 'delete_agreement_line_mapping', kind: 'mutation', summary: 'Delete an agreement-line mapping', tag: 'Billing', role: 'reader', grant: Grant.CostSubmit,
  description: 'An ISV deletes its own mappings; an MSP key any of its tenant\'s. Charges are recomputed. `dry_run=true` answers whether it would delete (404 when there is nothing to delete) and deletes nothing.',
  http: { method: 'delete', path: '/tenants/{tenant_id}/agreement-line-mappings/{mapping_id}', documented: false },
  path: S.MappingPath, query: S.MappingDeleteQuery,
  responses: [{ status: 200, schema: S.MappingDeleted, description: 'Deleted (or, with `dry_run=true`, would be).' }],
  errors: ['grant_missing'],
  handle: async ({ path, query }, ctx) => {
    const owner = readerScope(ctx, null);
    const dryRun = query.dry_run === 'true';
    if (!(await ctx.services.lineMappings.remove(tenantOf(ctx).tenant.id, owner, path.mapping_id, dryRun))) throw new ServiceError('not_found', 'No such mapping on this tenant.');
    return { id: path.mapping_id, deleted: !dryRun, dry_run: dryRun };
  },
});

const suggestMapping = defineOperation({
  name: 'suggest_agreement_line_mapping', kind: 'query', summary: 'Candidate agreement lines for one of your products', tag: 'Billing',
  role: 'isv', grant: Grant.CostSubmit,
  description: 'Lines of active agreements ranked by score (0 to 1) with the reasons: `same_sku` (the line\'s catalogue SKU), `same_product_name`, `similar_product_name` (shared words), `customer_reports_product` (a customer of yours matched to the agreement\'s company reports this product). It never creates a mapping.',
  http: { method: 'post', path: '/tenants/{tenant_id}/agreement-line-mappings/suggest', documented: false },
  path: TenantPath, body: S.SuggestAgreementLineMappingBody,
  responses: [{ status: 200, schema: S.MappingSuggestions, description: 'Ranked candidates; nothing was mapped.' }],
  errors: ['grant_missing', 'role_required', 'validation'],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    // The admin token (support) reads as the ISV the body names in vendor_key.
    const isvId = isvOfCaller(ctx.caller) ?? await ctx.services.access.isvInScope(ctx.caller, access.tenant.id, body.vendor_key);
    return { vendor_product_ref: body.vendor_product_ref, candidates: await ctx.services.lineMappings.suggest(access, isvId, body), mapped: false as const };
  },
});

const listCharges = defineOperation({
  name: 'list_charges', kind: 'query', summary: 'Charges: where what the ISVs report differs from what the agreements bill', tag: 'Billing', role: 'reader', grant: Grant.CostSubmit,
  description: 'One charge per agreement line whose quantity differs from the billable quantity the ISVs reported for the latest period (summed over their cost rows), with the cost rows behind it; and every cost row that lands on no line, with its reason (`customer_unmatched`, `product_unmapped`, `agreement_inactive`). An MSP key sees every charge (`ChargeList`). An ISV key sees the charges its own rows raised (`IsvChargeList`): status and quantities, its own rows only, never the line\'s unit price or another ISV\'s figures.',
  http: { method: 'get', path: '/tenants/{tenant_id}/charges', documented: false },
  path: TenantPath, query: S.ChargesQuery,
  responses: [
    { status: 200, schema: S.ChargeList, description: 'MSP key: the charges and the unresolved cost rows.' },
    { status: 200, schema: S.IsvChargeList, description: 'ISV key: the charges its own rows raised, and its unresolved rows.' },
  ],
  errors: ['grant_missing'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const isvId = isvOfCaller(ctx.caller);
    if (isvId) {
      const { unresolved, ...page } = await ctx.services.charges.listForIsv(access.tenant.id, isvId, query);
      return { ...envelopeOf('charges', page, access.tenant.sandbox), view: 'isv' as const, unresolved };
    }
    const { unresolved, ...page } = await ctx.services.charges.list(access.tenant.id, query);
    return { ...envelopeOf('charges', page, access.tenant.sandbox), view: 'msp' as const, unresolved };
  },
});

const approveCharge = defineOperation({
  name: 'approve_charge', kind: 'mutation', summary: 'Approve a charge: rewrite the line\'s quantity at the PSA (preview or commit)', tag: 'Billing', role: 'msp',
  description: 'MSP key. `dry_run` (default true) shows the exact PSA request and leaves the charge pending. A commit rewrites the agreement line\'s quantity once per idempotency key (the same key again answers the first result) and marks the charge approved. Only on PSA connectors that write agreement lines live for approvals; elsewhere 501 `not_supported`. A charge that is not pending: 422 `request_invalid`.',
  http: { method: 'post', path: '/tenants/{tenant_id}/charges/{charge_id}/approve', documented: false },
  path: S.ChargePath, body: S.ApproveChargeBody,
  responses: [
    { status: 200, schema: S.ApproveChargePreview, description: 'Preview: the vendor request; nothing was sent.' },
    { status: 200, schema: S.ApproveChargeResult, description: 'Committed: the line was rewritten (or a replay of that answer).' },
  ],
  errors: ['role_required', 'not_supported', 'request_invalid', 'validation', 'idempotency_conflict', 'idempotency_in_progress', 'rate_limited', 'vendor_error', 'vendor_unavailable'],
  handle: async ({ path, body }, ctx) => ctx.services.charges.approve(ctx.caller, tenantOf(ctx), path.charge_id, body),
});

const DECISION_ERRORS: ErrorCode[] = ['role_required', 'request_invalid', 'validation'];

/** Dismiss and restore: a decision on our own record, audited like every write (preview or commit). */
async function decideCharge(ctx: OperationContext<BillingServices>, decision: 'dismiss' | 'restore', chargeId: string, dryRun: boolean) {
  const tenantId = tenantOf(ctx).tenant.id;
  const action = `charge.${decision}.${dryRun ? 'preview' : 'commit'}`;
  try {
    const r = await ctx.services.charges[decision](tenantId, chargeId, dryRun);
    // A restored charge is brought up to date with what its line and rows say now.
    if (decision === 'restore' && r.changed && !dryRun) await recomputeCharges(ctx.services, tenantId);
    await ctx.services.audit.write({ tenantId, action, outcome: 'ok', subjectRef: chargeId, detail: { decided_by: 'msp', changed: r.changed } });
    return r;
  } catch (err) {
    if (err instanceof ServiceError && err.code !== 'not_found') {
      await ctx.services.audit.write({ tenantId, action, outcome: 'refused', subjectRef: chargeId, detail: { decided_by: 'msp', code: err.code, message: err.message } });
    }
    throw err;
  }
}

/** Dismiss and restore share their shape: MSP key, a previewing write on the charge, nothing sent to the PSA. */
function chargeDecision(decision: 'dismiss' | 'restore', summary: string, description: string, body: typeof S.DismissChargeBody, answer: string) {
  return defineOperation({
    name: `${decision}_charge`, kind: 'mutation', summary, tag: 'Billing', role: 'msp', description,
    http: { method: 'post', path: `/tenants/{tenant_id}/charges/{charge_id}/${decision}`, documented: false },
    path: S.ChargePath, body,
    responses: [{ status: 200, schema: S.ChargeDecision, description: answer }],
    errors: DECISION_ERRORS,
    handle: async ({ path, body: b }, ctx) => decideCharge(ctx, decision, path.charge_id, b.dry_run),
  });
}

const dismissCharge = chargeDecision('dismiss', 'Dismiss a charge (preview or commit; nothing changes at the PSA)',
  'MSP key. `dry_run` (default true) answers what the dismissal would change (`change`) and changes nothing; a commit (`dry_run: false` with an `idempotency_key`) sets the charge aside; the agreement is not touched. Undeclared fields are refused (422). The same proposal is not raised again; a different billable quantity raises a new charge; `POST .../restore` brings a dismissed charge back.',
  S.DismissChargeBody, 'A preview, or dismissed (already dismissed: `changed: false`).');

const restoreCharge = chargeDecision('restore', 'Bring a dismissed charge back to pending (preview or commit)',
  'MSP key. Undoes a dismissal: `dry_run` (default true) answers what would change and changes nothing; a commit (`dry_run: false` with an `idempotency_key`) makes the charge pending again, to approve or dismiss, and the next recomputation brings its figures up to date. Nothing is sent to the PSA. A charge already pending answers `changed: false`; an approved one 422 `request_invalid`.',
  S.RestoreChargeBody, 'A preview, or restored (already pending: `changed: false`).');

const reconciliation = defineOperation({
  name: 'billing_reconciliation', kind: 'query', summary: 'Reconciliation of a period: ISV reports, agreements and distributor subscriptions', tag: 'Billing', role: 'msp',
  description: 'MSP key. `Accept: text/csv` or `format=csv` answers the same figures as CSV. Per PSA company and product: the ISVs\' billable quantity, the agreement line\'s quantity and price, the distributor subscription quantity, MSP cost, revenue and margin, with the differences; the partner minimums with their shortfall; and the cost rows that could not be resolved, each with its reason.',
  http: { method: 'get', path: '/tenants/{tenant_id}/billing/reconciliation', documented: false },
  path: TenantPath, query: S.ReconciliationQuery,
  responses: [{ status: 200, schema: S.Reconciliation, description: 'The reconciliation of the period.' }],
  errors: ['role_required', 'validation'],
  handle: async ({ query }, ctx) => {
    const problems: Problem[] = [];
    checkPeriod(problems, query.period_start, query.period_end);
    throwProblems(problems);
    const access = tenantOf(ctx);
    const { rows, ...report } = await ctx.services.reconciliation.reconcile(access.tenant.id, { start: query.period_start, end: query.period_end });
    // CSV is the whole period in one answer (a download), the JSON pages.
    const page = query.format === 'csv' ? { items: rows, next_cursor: null } : pageOfAll(rows, query, S.RECONCILIATION_CURSOR, compareReconciliationKeys, reconciliationKey);
    return { ...envelopeOf('billing/reconciliation', page, access.tenant.sandbox), ...report };
  },
  csv: { render: reconciliationCsv, description: 'The same figures as CSV: every row of the period, then the partner minimums, the unresolved rows and the totals (`kind` says which).' },
});

type ReconciliationRow = z.infer<typeof S.ReconciliationRow>;
/** A reconciliation row's place: company and product name, their ids, the ISV products, the connection (unique). */
const reconciliationKey = (r: ReconciliationRow): Key => [
  r.company.name ?? '', r.product.name ?? '', r.company.source_id ?? '', r.product.source_id ?? '', r.product.isv_product_refs.join(','), r.company.connection_id ?? '',
];
/** The service's row order (reconciliation.service.ts), as a comparison of keys. */
function compareReconciliationKeys(a: Key, b: Key): number {
  return compareNames(a[0], b[0]) || compareNames(a[1], b[1]) || compareVendorIds(a[2], b[2]) || compareVendorIds(a[3], b[3])
    || compareNames(a[4], b[4]) || (a[5] < b[5] ? -1 : a[5] > b[5] ? 1 : 0);
}

/** Recomputes a tenant's charges; a failure is logged, never thrown into the change that caused it. */
function recomputeCharges(services: BillingServices, tenantId: string): Promise<void> {
  return services.charges.recompute(tenantId).catch((err: Error) => services.logger.error({ tenantId, err: err.message }, 'charge recomputation failed'));
}

export const billingFeature: FeatureModule<BillingServices> = {
  name: 'billing',
  operations: [submitCost, listCosts, submitMinimum, listMinimums, createMapping, listMappings, deleteMapping, suggestMapping, listCharges, approveCharge, dismissCharge, restoreCharge, reconciliation],
  reactions: (services) => {
    // Agreements or their lines changed in a sync: one recompute when that sync ends, not one per page.
    const changedBySync = new Set<string>();
    return [
      reactTo('billing.cost_rows_changed', 'billing: recompute charges', ({ tenantId }) => recomputeCharges(services, tenantId)),
      reactTo('billing.line_mappings_changed', 'billing: recompute charges', ({ tenantId }) => recomputeCharges(services, tenantId)),
      reactTo('identity.matches_changed', 'billing: recompute charges', ({ tenantId }) => recomputeCharges(services, tenantId)),
      reactTo('records.page_written', 'billing: agreements changed', {
        async written(_m, scope, result) {
          if (scope.connection.kind !== 'psa' || !['agreements', 'agreement_lines'].includes(scope.resource)) return;
          if (result.created.length || result.updated.length || result.deleted?.length) changedBySync.add(scope.connection.id);
        },
      }),
      reactTo('sync.ended', 'billing: recompute charges', async ({ tenantId, connection }) => {
        if (changedBySync.delete(connection.id)) await recomputeCharges(services, tenantId);
      }),
    ];
  },
};
