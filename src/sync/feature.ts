/**
 * Sync now (our addition): every connection of the tenant, answered when finished, or, past
 * SYNC_WAIT_MS, 202 with the sync to poll (docs/architecture.md, Operations).
 */
import type { FeatureModule } from '../operations/feature-module';
import { ServiceError } from '../errors/service-error';
import { operationsUsing, tenantOf } from '../operations/operation';
import { TenantPath, z } from '../shared/request';
import type { Tenant } from '../../entities';
import type { TenantSyncOutcome } from './sync-jobs';
import { SyncBody, SyncPollPath, SyncResult, SyncRunning } from './sync.schemas';
import type { AppConfig } from '../config/config';
import type { SyncJobs } from './sync-jobs';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface SyncServices {
  syncJobs: SyncJobs;
  config: Pick<AppConfig, 'syncWaitMs'>;
}
const defineOperation = operationsUsing<SyncServices>();

/** The wait a poll suggests: a dead worker's job is re-run within about 25 s (jobs/queue/bullmq.ts). */
const POLL_AFTER_SECONDS = 5;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A sync call's answer: the result (200), or the running sync to poll (202). One shape for every sync call. */
export function syncRunningAnswer(tenant: Pick<Tenant, 'id' | 'sandbox'>, outcome: Extract<TenantSyncOutcome, { state: 'running' }>) {
  return {
    tenant_id: tenant.id, sandbox: tenant.sandbox, sync_id: outcome.syncId, status: 'running' as const,
    poll: `/tenants/${tenant.id}/sync/${outcome.syncId}`, retry_after_seconds: POLL_AFTER_SECONDS,
    connections: outcome.connections, pending: outcome.pending,
  };
}

function answer(tenant: Pick<Tenant, 'id' | 'sandbox'>, outcome: TenantSyncOutcome) {
  if (outcome.state === 'running') return syncRunningAnswer(tenant, outcome);
  return { tenant_id: tenant.id, sandbox: tenant.sandbox, sync_id: outcome.syncId, ok: outcome.connections.every((c) => c.ok), connections: outcome.connections };
}

export const RUNNING_DESCRIPTION = 'The sync outlasted the wait (`SYNC_WAIT_MS`, 60 s by default) and goes on; a worker that dies meanwhile is replaced and its part run again. `GET` the `poll` path until it answers 200.';
const statusOf = (r: object) => ('status' in r && r.status === 'running' ? 202 : 200);

const syncTenant = defineOperation({
  name: 'sync_tenant', kind: 'mutation', summary: 'Sync the tenant now', tag: 'Sync', role: 'reader', grant: 'none', // A read of the vendors into our store; writes nothing at a vendor.
  description: 'Runs a sync of every connection and answers when it has finished, or after `SYNC_WAIT_MS` (60 s by default) with 202 and the sync to poll. A failed connection is reported here and in `status`; the last good data stays served.',
  http: { method: 'post', path: '/tenants/{tenant_id}/sync', documented: false },
  path: TenantPath, body: SyncBody,
  responses: [
    // First: the GraphQL union tells its members apart by SyncRunning's `status` literal (sync.schemas.ts).
    { status: 202, schema: SyncRunning, description: RUNNING_DESCRIPTION },
    { status: 200, schema: SyncResult, description: 'What each connection fetched and changed.' },
  ],
  errors: [],
  statusOf,
  handle: async ({ body }, ctx) => {
    const access = tenantOf(ctx);
    const outcome = await ctx.services.syncJobs.syncTenantNow(access.tenant.id, { full: body.full, waitMs: ctx.services.config.syncWaitMs });
    return answer(access.tenant, outcome);
  },
});

const pollSync = defineOperation({
  name: 'tenant_sync', kind: 'query', summary: 'A sync started earlier', tag: 'Sync', role: 'reader',
  description: 'Answers a sync started by `POST /tenants/{tenant_id}/sync` (or a sandbox reset or simulate that answered 202): 200 with its result once every connection has finished, else 202 after waiting up to `SYNC_WAIT_MS`. A sync is kept for an hour after it finished; an unknown one (or one the embedded runner lost at a restart) is 404: start another.',
  http: { method: 'get', path: '/tenants/{tenant_id}/sync/{sync_id}', documented: false },
  path: SyncPollPath, query: z.object({}).strict(),
  responses: [
    { status: 202, schema: SyncRunning, description: RUNNING_DESCRIPTION },
    { status: 200, schema: SyncResult, description: 'What each connection fetched and changed.' },
  ],
  errors: [],
  statusOf,
  handle: async ({ path }, ctx) => {
    const access = tenantOf(ctx);
    const outcome = UUID.test(path.sync_id)
      ? await ctx.services.syncJobs.awaitTenantSync(access.tenant.id, path.sync_id, ctx.services.config.syncWaitMs)
      : null;
    if (!outcome) throw new ServiceError('not_found', 'No sync of that id is known here: it finished over an hour ago, or the process that ran it restarted. Start another.');
    return answer(access.tenant, outcome);
  },
});

export const syncFeature: FeatureModule<SyncServices> = { name: 'sync', operations: [syncTenant, pollSync] };
