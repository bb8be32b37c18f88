/** Sync now (our addition): every connection of the tenant, answered when finished. */
import type { FeatureModule } from '../feature';
import { defineOperation } from '../operations/operation';
import { tenantOf } from '../operations/runner';
import { TenantPath } from '../shared/request';
import { SyncBody, SyncResult } from './sync.schemas';

const syncTenant = defineOperation({
  name: 'sync_tenant', kind: 'mutation', summary: 'Sync the tenant now', tag: 'Sync', role: 'reader',
  description: 'Runs a sync of every connection and answers when it has finished. A failed connection is reported here and in `status`; the last good data stays served.',
  http: { method: 'post', path: '/tenants/{tenant_id}/sync', documented: false },
  path: TenantPath, body: SyncBody,
  responses: [{ status: 200, schema: SyncResult, description: 'What each connection fetched and changed.' }],
  errors: [],
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const connections = await ctx.services.syncJobs.syncTenantNow(access.tenant.id, { full: body.full });
    return { tenant_id: access.tenant.id, sandbox: access.tenant.sandbox, ok: connections.every((c) => c.ok), connections };
  },
});

export const syncFeature: FeatureModule = { name: 'sync', operations: [syncTenant] };
