/** The audit log read: newest first; an ISV sees the system's entries and its own. */
import type { FeatureModule } from '../feature';
import { defineOperation } from '../operations/operation';
import { tenantOf } from '../operations/runner';
import { toRfc3339 } from '../records/record-lists';
import { cursorParam, limitParam, seqCursor, TenantPath, z } from '../shared/request';
import { AuditList } from './audit.schemas';

const listAudit = defineOperation({
  name: 'list_audit', kind: 'query', summary: 'Audit log (newest first)', tag: 'Reads', role: 'reader',
  http: { method: 'get', path: '/tenants/{tenant_id}/audit', documented: true },
  path: TenantPath,
  query: z.object({ limit: limitParam, cursor: cursorParam(seqCursor) }).strict(),
  responses: [{ status: 200, schema: AuditList, description: 'Sync outcomes, commits and refusals.' }],
  errors: [],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const before = query.cursor ? seqCursor.decode(query.cursor) : null;
    const page = await ctx.services.audit.list(access.tenant.id, query.limit, before, ctx.caller.kind === 'isv' ? ctx.caller.isvId : null);
    return {
      entries: page.items.map((e) => ({
        id: e.id, action: e.action, outcome: e.outcome, connection_id: e.connectionId, subject_ref: e.subjectRef,
        detail: e.detail, created_at: toRfc3339(e.createdAt)!,
      })),
      sandbox: access.tenant.sandbox,
      next_cursor: page.next ? seqCursor.encode(page.next) : null,
    };
  },
});

export const auditFeature: FeatureModule = { name: 'audit', operations: [listAudit] };
