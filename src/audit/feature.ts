/** The audit log read: newest first; an ISV sees the system's entries and its own. */
import { isvOfCaller } from '../access/caller';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf } from '../operations/operation';
import { toRfc3339 } from '../shared/dates';
import { envelopeOf, pageQuery } from '../shared/paging';
import { TenantPath, text, z } from '../shared/request';
import { AUDIT_CURSOR, type AuditService } from './audit.service';
import { AuditList } from './audit.schemas';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface AuditServices {
  audit: AuditService;
}
const defineOperation = operationsUsing<AuditServices>();

const listAudit = defineOperation({
  name: 'list_audit', kind: 'query', summary: 'Audit log (newest first)', tag: 'Reads', role: 'reader',
  http: { method: 'get', path: '/tenants/{tenant_id}/audit', documented: true },
  path: TenantPath,
  description: 'Filters: `action` keeps the entries whose action starts with it (`charge.` every charge decision, `sync.failed` the failed syncs), `outcome` those with that outcome, `actor` those made by that person or key, `subject` those about that subject. Each entry whose subject is still stored carries its readable label in `detail.subject_label` (the summary of a ticket, the name of a project or agreement, the company and product of a charge, the customer and PSA company of an identity decision, the ISV of a grant or routing change). A grant change (`grants.update`) names each connection whose keys changed, before and after (`detail.changes`); a routing change (`routing.update`) the overrides before and after (`detail.before`, `detail.after`).',
  query: pageQuery(AUDIT_CURSOR, { updatedSince: true }, {
    action: text(100).min(1).nullable().optional().openapi({ description: 'Only actions starting with this (e.g. `charge.`, `identity.match`, `sync.failed`).' }),
    outcome: z.enum(['ok', 'refused', 'failed']).nullable().optional().openapi({ description: 'Only entries with this outcome.' }),
    actor: text(200).min(1).nullable().optional().openapi({ description: "Only entries whose actor is this: a person's email, a key's prefix, or a kind (`person`, `isv_key`, `msp_key`, `operator`, `system`)." }),
    previews: z.enum(['include', 'exclude', 'only']).nullable().optional().openapi({ description: 'Previews (actions ending in `.preview`, dry runs that changed nothing): `include` (the default), `exclude` or `only`.' }),
    subject: text(200).min(1).nullable().optional().openapi({ description: 'Only entries about this subject (its id, as `subject_ref`).' }),
  }),
  responses: [{ status: 200, schema: AuditList, description: 'Sync outcomes, commits and refusals.' }],
  errors: [],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const page = await ctx.services.audit.list(access.tenant.id, query, isvOfCaller(ctx.caller));
    return envelopeOf('audit', {
      items: page.items.map((e) => ({
        id: e.id, action: e.action, outcome: e.outcome, connection_id: e.connectionId, subject_ref: e.subjectRef,
        detail: e.detail, created_at: toRfc3339(e.createdAt)!,
      })),
      next_cursor: page.next_cursor,
    }, access.tenant.sandbox);
  },
});

export const auditFeature: FeatureModule<AuditServices> = { name: 'audit', operations: [listAudit] };
