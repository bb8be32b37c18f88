/** Sync now, and sandbox reset (which re-syncs): what each connection fetched and changed. */
import { pathId, TenantPath, z } from '../shared/request';

const ConnectionSyncReport = z.object({
  connection_id: z.string(), connector: z.string(), ok: z.boolean(), error: z.string().nullable(),
  resources: z.array(z.object({
    resource: z.string(), mode: z.string(), fetched: z.number().int(), created: z.number().int(),
    updated: z.number().int(), unchanged: z.number().int(),
    quarantined: z.number().int().openapi({ description: 'Records the store could not hold even escaped: kept aside, reported in status and the audit log; the rest of the sync went on.' }),
    deleted: z.number().int().optional().openapi({ description: 'Records the vendor no longer lists (after a complete id listing): removed from every list, each raising `<family>.deleted` for tickets, devices and companies.' }),
  }).strict().openapi('ResourceSyncReport')),
}).strict().openapi('ConnectionSyncReport');

export const SyncBody = z.object({ full: z.boolean().default(false).openapi({ description: 'Ignore watermarks: refetch everything.' }) }).strict().openapi('SyncBody');
export const SyncResult = z.object({
  tenant_id: z.string(), sandbox: z.boolean(),
  sync_id: z.string().openapi({ description: 'This sync; `GET /tenants/{tenant_id}/sync/{sync_id}` answers it again for an hour.' }),
  ok: z.boolean(), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SyncResult');

/**
 * A sync call whose jobs outlasted SYNC_WAIT_MS: they go on (a worker that dies is replaced, its job run
 * again), and the poll answers the result. Listed first among an operation's answers: the GraphQL union
 * tells its members apart by this one's `status` literal.
 */
export const SyncRunning = z.object({
  tenant_id: z.string(), sandbox: z.boolean(),
  sync_id: z.string().openapi({ description: 'The running sync.' }),
  status: z.literal('running'),
  poll: z.string().openapi({ description: 'Where to ask again: `GET` it (with the same key) until it answers 200.' }),
  retry_after_seconds: z.number().int().openapi({ description: 'A reasonable wait before the next poll.' }),
  connections: z.array(ConnectionSyncReport).openapi({ description: 'Connections whose sync has finished already.' }),
  pending: z.array(z.string()).openapi({ description: 'Ids of the connections still syncing.' }),
}).strict().openapi('SyncRunning');

export const SyncPollPath = TenantPath.extend({ sync_id: pathId('sync_id', 'The `sync_id` a sync call answered.') }).strict();

export const SandboxResetBody = z.object({ tenant_id: z.string().max(200).openapi({ description: 'A sandbox tenant to re-seed.' }) }).strict().openapi('SandboxResetBody');
export const SandboxResetResult = z.object({
  tenant_id: z.string(), sandbox: z.literal(true), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SandboxResetResult');

