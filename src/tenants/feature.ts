/**
 * Tenants as callers see them (tenants, connections, status), the MSP's grants routes, and the
 * internal tooling operations (ISVs, keys, tenants, connections, grants; admin token, GraphQL only).
 */
import type { ApiKey, Isv } from '../../entities';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf, type Operation } from '../operations/operation';
import { toRfc3339 } from '../shared/dates';
import { envelopeOf, pageOfAll, pageQuery } from '../shared/paging';
import { isUuid, pathId, TenantPath, z } from '../shared/request';
import { ServiceError } from '../errors/service-error';
import { connectionInfos, tenantStatus } from './tenant-status';
import * as S from './tenant.schemas';
import { CONNECTION_ADMIN_OPERATIONS, type ConnectionAdminServices } from './connections.ops';
import { ME_OPERATIONS } from './me.ops';
import type { AuditService } from '../audit/audit.service';
import type { ConnectionBudgets } from '../budget/connection-budgets';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface TenantsServices extends ConnectionAdminServices {
  audit: AuditService;
  budgets: ConnectionBudgets;
}
const defineOperation = operationsUsing<TenantsServices>();

const keyInfo = (k: ApiKey) => ({
  id: k.id, kind: k.kind, isv_id: k.isvId, tenant_id: k.tenantId, prefix: k.prefix, label: k.label,
  created_at: toRfc3339(k.createdAt)!, revoked_at: toRfc3339(k.revokedAt),
});
const isvInfo = (i: Isv) => ({
  id: i.id, name: i.name, supported_targets: i.supportedTargets,
  routing_recommendation: { technical: i.routingRecommendation.technical ?? null, organizational: i.routingRecommendation.organizational ?? null },
});

const noQuery = z.object({}).strict();

const listTenants = defineOperation({
  name: 'list_tenants', kind: 'query', summary: 'Tenants visible to this key', tag: 'Tenants', role: 'reader',
  description: 'An ISV key sees every tenant on which it holds a grant; an MSP key sees its own tenant.',
  http: { method: 'get', path: '/tenants', documented: false },
  query: pageQuery(S.TENANTS_CURSOR, { updatedSince: false }),
  responses: [{ status: 200, schema: S.TenantList, description: 'The tenants with their connections, oldest first.' }],
  errors: [],
  handle: async ({ query }, { caller, services }) => {
    const tenants = await services.access.visibleTenants(caller);
    const page = pageOfAll(tenants, query, S.TENANTS_CURSOR, ['time', 'uuid'], (t) => [t.createdAt.toISOString(), t.id]);
    const out = [];
    for (const t of page.items) {
      const access = await services.access.tenantAccess(caller, t.id);
      out.push({ id: t.id, name: t.name, slug: t.slug, sandbox: t.sandbox, connections: access.connections.map((c) => ({ id: c.id, kind: c.kind, connector: c.connector })) });
    }
    // Not one tenant's list: `sandbox` says whether every tenant this key sees is a sandbox tenant.
    return envelopeOf('/tenants', { items: out, next_cursor: page.next_cursor }, tenants.length > 0 && tenants.every((t) => t.sandbox));
  },
});

const listConnections = defineOperation({
  name: 'list_connections', kind: 'query', summary: 'Connections of the tenant', tag: 'Reads', role: 'reader',
  http: { method: 'get', path: '/tenants/{tenant_id}/connections', documented: true },
  path: TenantPath, query: pageQuery(S.CONNECTIONS_CURSOR, { updatedSince: false }),
  responses: [{ status: 200, schema: S.ConnectionList, description: 'Connections with their sync state and your grants.' }],
  errors: [],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const page = pageOfAll(await connectionInfos(ctx.services.tenantsStore, access, ctx.services.syncJobs), query, S.CONNECTIONS_CURSOR, ['uuid'], (c) => [c.id]);
    return envelopeOf('connections', page, access.tenant.sandbox);
  },
});

const getStatus = defineOperation({
  name: 'tenant_status', kind: 'query', summary: 'Tenant status', tag: 'Reads', role: 'reader',
  http: { method: 'get', path: '/tenants/{tenant_id}/status', documented: true },
  path: TenantPath, query: noQuery,
  responses: [{ status: 200, schema: S.TenantStatus, description: 'Sync health per connection and resource.' }],
  errors: [],
  handle: async (_in, ctx) => tenantStatus(ctx.services.tenantsStore, tenantOf(ctx), ctx.services.syncJobs, ctx.services.budgets),
});

const listGrants = defineOperation({
  name: 'list_grants', kind: 'query', summary: "Every ISV's grants on this tenant", tag: 'Grants', role: 'msp',
  http: { method: 'get', path: '/tenants/{tenant_id}/grants', documented: false },
  path: TenantPath, query: pageQuery(S.GRANTS_CURSOR, { updatedSince: false }),
  responses: [{ status: 200, schema: S.GrantList, description: 'One row per ISV and connection.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const page = pageOfAll(await ctx.services.admin.listGrants(access.tenant, access.connections), query, S.GRANTS_CURSOR, ['uuid', 'uuid'], (g) => [g.isv_id, g.connection_id]);
    return envelopeOf('grants', page, access.tenant.sandbox);
  },
});

/**
 * What a grant change's audit entry says beside the body (the one place set_grants records it, for REST
 * and the console alike): the ISV's name as the subject's label, and per connection whose keys changed,
 * its system and the keys before and after.
 */
function grantChangeDetail(isvId: string, before: { isv_id: string; isv_name: string; connection_id: string; connector: string; keys: string[] }[], after: typeof before): Record<string, unknown> {
  const mine = (rows: typeof before) => new Map(rows.filter((r) => r.isv_id === isvId).map((r) => [r.connection_id, r]));
  const was = mine(before);
  const now = mine(after);
  const changes = [...now.values()].flatMap((r) => {
    const old = [...(was.get(r.connection_id)?.keys ?? [])].sort();
    const next = [...r.keys].sort();
    return old.join(' ') === next.join(' ') ? [] : [{ connection_id: r.connection_id, connector: r.connector, before: old, after: next }];
  });
  const name = now.values().next().value?.isv_name ?? was.values().next().value?.isv_name ?? null;
  return { subject_label: name, changes };
}

const setGrants = defineOperation({
  name: 'set_grants', kind: 'mutation', summary: "Turn an ISV's grants on and off", tag: 'Grants', role: 'msp',
  description: 'Sets the keys of each connection the body names for the ISV; other connections keep theirs. The ISV sees the change at once. A key the connection\'s vendor permissions rule out (`unavailable` in GET /tenants/{tenant_id}/grants) is refused with 422 `request_invalid`, and nothing is changed.',
  http: { method: 'put', path: '/tenants/{tenant_id}/grants/{isv_id}', documented: false },
  path: TenantPath.extend({ isv_id: pathId('isv_id', 'The ISV, from GET /tenants/{tenant_id}/grants.') }).strict(),
  body: S.SetGrantsBody,
  responses: [{ status: 200, schema: S.GrantList, description: "The tenant's grants after the change." }],
  errors: ['role_required', 'request_invalid'],
  handle: async ({ path, body }, ctx) => {
    const access = tenantOf(ctx);
    const before = await ctx.services.admin.listGrants(access.tenant, access.connections);
    await ctx.services.admin.setGrants(access.tenant, access.connections, path.isv_id, body.connections);
    const after = await ctx.services.admin.listGrants(access.tenant, access.connections);
    await ctx.services.audit.write({ tenantId: access.tenant.id, action: 'grants.update', outcome: 'ok', subjectRef: path.isv_id, detail: { connections: body.connections, ...grantChangeDetail(path.isv_id, before, after) } });
    // Every row at once (one per ISV and connection of this tenant): the answer of a change is never paged.
    return envelopeOf('grants', { items: after, next_cursor: null }, access.tenant.sandbox);
  },
});

// Internal tooling: admin token, GraphQL only.

const admin = { tag: 'Admin', role: 'admin' as const, errors: [] };

const listIsvs = defineOperation({
  ...admin, name: 'isvs', kind: 'query', summary: 'Every ISV',
  responses: [{ status: 200, schema: S.IsvList, description: 'ISVs.' }],
  handle: async (_in, { services }) => ({ isvs: (await services.tenantsStore.isvs()).map(isvInfo) }),
});

const listKeys = defineOperation({
  ...admin, name: 'api_keys', kind: 'query', summary: 'API keys of an ISV or a tenant (never the key itself)',
  query: S.ApiKeysQuery,
  responses: [{ status: 200, schema: S.ApiKeyList, description: 'Keys.' }],
  handle: async ({ query }, { services }) => ({ keys: (await services.admin.listKeys({ isvId: query.isv_id, tenantId: query.tenant_id })).map(keyInfo) }),
});

const createIsv = defineOperation({
  ...admin, name: 'create_isv', kind: 'mutation', summary: 'Create an ISV', flattenBody: true,
  body: S.CreateIsvBody,
  responses: [{ status: 200, schema: S.IsvInfo, description: 'The ISV.' }],
  handle: async ({ body }, { services }) => isvInfo(await services.admin.createIsv(body.name, body.supported_targets ?? undefined)),
});

const issueApiKey = defineOperation({
  ...admin, name: 'issue_api_key', kind: 'mutation', summary: "Issue an ISV's API key (shown once)", flattenBody: true,
  description: 'The answer carries the key itself once: store it now; it is never shown again (only its hash is kept).',
  body: S.IssueApiKeyBody,
  responses: [{ status: 200, schema: S.IssuedApiKey, description: 'The key, shown once.' }],
  handle: async ({ body }, { services }) => {
    const { row, key } = await services.admin.issueApiKey(body.isv_id, body.label ?? '');
    return { ...keyInfo(row), key };
  },
});

const issueMspKey = defineOperation({
  ...admin, name: 'issue_msp_key', kind: 'mutation', summary: "Issue a tenant's MSP key (sk_msp_..., shown once)", flattenBody: true,
  description: 'The answer carries the key itself once: store it now; it is never shown again (only its hash is kept).',
  body: S.IssueMspKeyBody,
  responses: [{ status: 200, schema: S.IssuedApiKey, description: 'The key, shown once.' }],
  handle: async ({ body }, { services }) => {
    const { row, key } = await services.admin.issueMspKey(body.tenant_id, body.label ?? '');
    return { ...keyInfo(row), key };
  },
});

const revokeApiKey = defineOperation({
  ...admin, name: 'revoke_api_key', kind: 'mutation', summary: 'Revoke an API key (ISV or MSP)', flattenBody: true,
  body: S.RevokeApiKeyBody,
  responses: [{ status: 200, schema: S.Revoked, description: 'Whether a key was revoked.' }],
  handle: async ({ body }, { services }) => ({ id: body.id, revoked: await services.admin.revokeApiKey(body.id) }),
});

const createTenant = defineOperation({
  ...admin, name: 'create_tenant', kind: 'mutation', summary: 'Create a tenant (an MSP)', flattenBody: true,
  body: S.CreateTenantBody,
  responses: [{ status: 200, schema: S.TenantCreated, description: 'The tenant.' }],
  handle: async ({ body }, { services }) => {
    const t = await services.admin.createTenant(body.name, body.slug, body.sandbox);
    return { id: t.id, name: t.name, slug: t.slug, sandbox: t.sandbox };
  },
});

const setGrant = defineOperation({
  ...admin, name: 'set_grant', kind: 'mutation', summary: "Set an ISV's grant keys on one connection", flattenBody: true,
  body: S.SetGrantBody,
  responses: [{ status: 200, schema: S.GrantInfo, description: 'The grant.' }],
  handle: async ({ body }, { services }) => {
    if (!isUuid(body.isv_id)) throw ServiceError.notFound('ISV');
    const g = await services.admin.setGrant(body.isv_id, body.connection_id, body.keys);
    return { id: g.id, isv_id: g.isvId, connection_id: g.connectionId, tenant_id: g.tenantId, keys: g.keys };
  },
});

export const TENANT_OPERATIONS: Operation[] = [
  listTenants, listConnections, getStatus, listGrants, setGrants,
  listIsvs, listKeys, createIsv, issueApiKey, issueMspKey, revokeApiKey, createTenant, setGrant,
  ...CONNECTION_ADMIN_OPERATIONS,
  ...ME_OPERATIONS,
];

export const tenantsFeature: FeatureModule<TenantsServices> = { name: 'tenants', operations: TENANT_OPERATIONS };
