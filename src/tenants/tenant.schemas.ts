/** Tenants, connections and their sync state, grants and MSP keys (docs/architecture.md, Tenancy, keys and grants). */
import { GRANT_KEYS } from '../access/caller';
import { grantKeyList } from '../access/grant-words';
import { listCursor, listEnvelope } from '../shared/paging';
import { text, z } from '../shared/request';

const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });

export const TenantList = listEnvelope('TenantList', '/tenants', z.object({
  id: z.string(), name: z.string(), slug: z.string(), sandbox: z.boolean(),
  connections: z.array(z.object({ id: z.string(), kind: z.string(), connector: z.string() }).strict().openapi('ConnectionSummary')),
}).strict().openapi('TenantInfo'));

/** Tenants page oldest first; connections by id; grants by ISV and connection. */
export const TENANTS_CURSOR = listCursor('tenants', ['time', 'uuid']);
export const CONNECTIONS_CURSOR = listCursor('connections', ['uuid']);
export const GRANTS_CURSOR = listCursor('grants', ['uuid', 'uuid']);

const ResourceSyncState = z.object({
  resource: z.string(), last_status: z.string(), last_synced_at: ts, last_attempt_at: ts,
  last_mode: z.string().nullable(), last_error: z.string().nullable(),
  records: z.number().int().openapi({ description: 'Records of this resource the store holds now for the connection (what the lists serve).' }),
  last_fetched: z.number().int().openapi({ description: 'Records the last sync fetched (an incremental sync fetches only what changed). Addition of this service.' }),
  quarantined: z.number().int().openapi({ description: 'Records of the last sync the store could not hold (kept aside, audited).' }),
  lag_seconds: z.number().int().nullable().openapi({
    description: 'How old the stored copy of this resource may be: seconds since the start of the last successful check (a sync, or a "changed since?" call that found nothing; null: never synced). Addition of this service.',
  }),
  interval_seconds: z.number().int().nullable().openapi({
    description: 'How often the scheduler checks this resource now: short for tickets, devices and alerts, long for lists and the catalogue, stretched while nothing changes and to keep within the connection\'s budget (null: not planned yet). Addition of this service.',
  }),
  next_check_at: ts.openapi({ description: 'When the scheduler checks this resource next (null: not planned yet). Addition of this service.' }),
}).strict().openapi('ResourceSyncState');

/** The connection's one API budget (docs/architecture.md, Vendor API budget), shared by every ISV, job and process. */
export const ConnectionBudget = z.object({
  requests_per_hour: z.number().int().openapi({ description: 'The hourly limit of this connection (connector default from the vendor\'s published limit, or set by the MSP or operator).' }),
  used_last_hour: z.number().int().openapi({ description: 'Vendor calls made in the last rolling hour, by everyone.' }),
  in_flight: z.number().int(),
  concurrent_limit: z.number().int(),
  effective_rate: z.number().int().openapi({ description: 'Requests per hour admitted now: the limit, halved by each recent vendor 429 and recovering gradually.' }),
}).strict().openapi('ConnectionBudget');

export const ConnectionInfo = z.object({
  id: z.string(), kind: z.string(), connector: z.string(), base_url: z.string(), limited: z.boolean(),
  grants: z.array(z.string()), last_synced_at: ts, sync_status: z.string(), resources: z.array(ResourceSyncState),
  sync: z.object({
    running: z.boolean().openapi({ description: 'A sync of this connection is running now.' }),
    running_since: ts.openapi({ description: 'When the running sync started (null: none running).' }),
    next_at: ts.openapi({ description: 'When the schedule looks for due resources of the connection next (null: no schedule, e.g. SYNC_INTERVAL_SECONDS=0).' }),
    interval_seconds: z.number().int().nullable().openapi({ description: 'How often the schedule looks: the shortest interval of the connection\'s resources (each resource has its own, `resources[].interval_seconds`).' }),
  }).strict().openapi('ConnectionSync', { description: 'The running and the next sync. Addition of this service.' }),
  budget: ConnectionBudget.optional().openapi({ description: 'In `status` only. Addition of this service.' }),
}).strict().openapi('Connection');

export const ConnectionList = listEnvelope('ConnectionList', 'connections', ConnectionInfo);

export const TenantStatus = z.object({
  tenant_id: z.string(), name: z.string(), sandbox: z.boolean(), healthy: z.boolean(), last_synced_at: ts,
  connections: z.array(ConnectionInfo),
}).strict().openapi('TenantStatus');


const grantKey = z.enum(GRANT_KEYS).openapi({ description: `A grant key: ${grantKeyList()}.` });

export const GrantRow = z.object({
  isv_id: z.string(), isv_name: z.string(), connection_id: z.string(), kind: z.string(), connector: z.string(),
  keys: z.array(z.string()).openapi({ description: 'Grant keys the ISV holds on this connection.' }),
  unavailable: z.array(z.object({
    key: z.string(),
    reason: z.string().openapi({ description: 'Why, in words: the vendor permission it needs (or the grant it follows from).' }),
    vendor_permissions: z.array(z.string()).openapi({ description: 'The missing vendor permissions, in the vendor\'s own terms.' }),
  }).strict().openapi('UnavailableGrant')).openapi({ description: 'Keys that cannot be granted on this connection: a vendor permission they need was found missing when the system was last connected or reconnected. PUT refuses them (422 request_invalid).' }),
}).strict().openapi('GrantRow');

export const GrantList = listEnvelope('GrantList', 'grants', GrantRow);

export const SetGrantsBody = z.object({
  connections: z.array(z.object({
    connection_id: z.string().max(100),
    keys: z.array(grantKey).max(GRANT_KEYS.length).openapi({ description: 'The keys the ISV holds on this connection after the call; an empty list turns its grants off.' }),
  }).strict().openapi('ConnectionGrants')).min(1).max(50),
}).strict().openapi('SetGrantsBody', { description: 'Sets the keys of each connection it names and leaves the others as they are.' });

export const IsvInfo = z.object({
  id: z.string(), name: z.string(), supported_targets: z.array(z.string()),
  routing_recommendation: z.object({ technical: z.string().nullable(), organizational: z.string().nullable() }).strict().openapi('RoutingRecommendation'),
}).strict().openapi('IsvInfo');

export const IsvList = z.object({ isvs: z.array(IsvInfo) }).strict().openapi('IsvList');

export const ApiKeyInfo = z.object({
  id: z.string(), kind: z.enum(['isv', 'msp']), isv_id: z.string().nullable(), tenant_id: z.string().nullable(),
  prefix: z.string(), label: z.string(), created_at: z.string(), revoked_at: z.string().nullable(),
}).strict().openapi('ApiKeyInfo');

export const ApiKeyList = z.object({ keys: z.array(ApiKeyInfo) }).strict().openapi('ApiKeyList');

export const IssuedApiKey = ApiKeyInfo.extend({
  key: z.string().openapi({ description: 'The key itself: shown here once and never again (only its SHA-256 is kept).' }),
}).strict().openapi('IssuedApiKey');

export const CreateIsvBody = z.object({
  name: text(200).min(1),
  supported_targets: z.array(z.enum(['service_ticket', 'project'])).nullable().optional(),
}).strict().openapi('CreateIsvBody');

export const IssueApiKeyBody = z.object({ isv_id: z.string().max(100), label: text(200).nullable().optional() }).strict().openapi('IssueApiKeyBody');
export const IssueMspKeyBody = z.object({ tenant_id: z.string().max(100), label: text(200).nullable().optional() }).strict().openapi('IssueMspKeyBody');
export const RevokeApiKeyBody = z.object({ id: z.string().max(100) }).strict().openapi('RevokeApiKeyBody');
export const Revoked = z.object({ id: z.string(), revoked: z.boolean() }).strict().openapi('Revoked');
export const ApiKeysQuery = z.object({ isv_id: z.string().max(100).nullable().optional(), tenant_id: z.string().max(100).nullable().optional() }).strict();

export const CreateTenantBody = z.object({ name: text(200).min(1), slug: text(63), sandbox: z.boolean().default(false) }).strict().openapi('CreateTenantBody');
export const TenantCreated = z.object({ id: z.string(), name: z.string(), slug: z.string(), sandbox: z.boolean() }).strict().openapi('TenantCreated');

/** Every credential a connector may take; which ones a connection needs, its connector declares. */
export function credentialsInput(names: readonly string[]) {
  return z.object(Object.fromEntries(names.map((n) => [n, text(2000).nullable().optional()]))).strict()
    .openapi('ConnectionCredentials', { description: 'Vendor credentials; encrypted at rest, never returned. Each connector names the ones it needs.' });
}

export const StatusMappingEntry = z.object({
  vendor_status: text(200), canonical: z.enum(['new', 'in_progress', 'waiting', 'resolved', 'closed']),
}).strict().openapi('StatusMappingEntry');

export const SetGrantBody = z.object({
  isv_id: z.string().max(100), connection_id: z.string().max(100), keys: z.array(grantKey).max(GRANT_KEYS.length),
}).strict().openapi('SetGrantBody');

export const GrantInfo = z.object({
  id: z.string(), isv_id: z.string(), connection_id: z.string(), tenant_id: z.string(), keys: z.array(z.string()),
}).strict().openapi('GrantInfo');
