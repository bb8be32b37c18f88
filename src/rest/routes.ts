/** Every REST route: the documented paths of the interface document plus ours (design.md). */
import type { ZodType } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import { defineRoute, type RouteDef } from './route';
import { AUDIT, CONNECTIONS, LIST_JSON, RESET, STATUS, SYNC, TENANTS, type ListOperation } from './operations';
import * as S from './schemas';

function listRoute(
  op: ListOperation, path: string, schema: ZodType, summary: string, errors: ErrorCode[] = [], description?: string,
): RouteDef {
  return defineRoute({
    method: 'get', path: `/tenants/{tenant_id}/${path}`, operationId: `list_${op}`, summary, description, tag: 'Reads',
    params: S.TenantPath, query: S.ListQuery,
    response: { status: 200, schema, description: 'One page, served from the synchronised store.' },
    errors: ['not_found', ...errors], documented: true,
    handle: async ({ params, query, caller, graph }) => {
      const data = await graph.run<{ json: string }>(LIST_JSON, {
        list: op, tenant_id: params.tenant_id, limit: query.limit, cursor: query.cursor ?? null, updated_since: query.updated_since ?? null,
      }, caller);
      return { json: data.json };
    },
  });
}

export const ROUTES: RouteDef[] = [
  defineRoute({
    method: 'get', path: '/tenants', operationId: 'list_tenants', summary: 'Tenants visible to this key', tag: 'Tenants',
    query: S.z.object({}).strict(),
    response: { status: 200, schema: S.TenantList, description: 'Every tenant on which this ISV holds a grant.' },
    errors: [], documented: false,
    handle: async ({ caller, graph }) => ({ body: (await graph.run<{ tenants: unknown }>(TENANTS, {}, caller)).tenants }),
  }),
  listRoute('tickets', 'tickets', S.TicketList, 'Tickets'),
  listRoute('devices', 'devices', S.DeviceList, 'Devices (RMM)'),
  listRoute('agreements', 'agreements', S.AgreementList, 'Agreements with their lines', ['not_supported'],
    'HTTP 501 when the connector does not support agreements.'),
  listRoute('members', 'members', S.MemberList, 'Members (the time picker)', ['not_supported'],
    'The limited PSA connector answers 501.'),
  listRoute('boards', 'ticket-boards', S.TicketBoardList, 'Ticket boards (ids for `board`)', ['not_supported'],
    'The limited PSA connector answers 501.'),
  listRoute('statuses', 'ticket-statuses', S.TicketStatusList, 'Ticket statuses (ids for `status`)', ['not_supported'],
    'The limited PSA connector answers 501.'),
  listRoute('priorities', 'ticket-priorities', S.TicketPriorityList, 'Ticket priorities (ids for `priority`)', ['not_supported'],
    'The limited PSA connector answers 501.'),
  listRoute('applications', 'applications', S.ApplicationList, 'Installed applications'),
  listRoute('incidents', 'incidents', S.IncidentList, 'Incidents (RMM alerts)'),
  defineRoute({
    method: 'get', path: '/tenants/{tenant_id}/connections', operationId: 'list_connections', summary: 'Connections of the tenant', tag: 'Reads',
    params: S.TenantPath, query: S.z.object({}).strict(),
    response: { status: 200, schema: S.ConnectionList, description: 'Connections with their sync state and your grants.' },
    errors: ['not_found'], documented: true,
    handle: async ({ params, caller, graph }) => ({ body: (await graph.run<{ connections: unknown }>(CONNECTIONS, params, caller)).connections }),
  }),
  defineRoute({
    method: 'get', path: '/tenants/{tenant_id}/audit', operationId: 'list_audit', summary: 'Audit log (newest first)', tag: 'Reads',
    params: S.TenantPath, query: S.AuditQuery,
    response: { status: 200, schema: S.AuditList, description: 'Sync outcomes, commits and refusals.' },
    errors: ['not_found'], documented: true,
    handle: async ({ params, query, caller, graph }) => ({
      body: (await graph.run<{ audit: unknown }>(AUDIT, { tenant_id: params.tenant_id, limit: query.limit, cursor: query.cursor ?? null }, caller)).audit,
    }),
  }),
  defineRoute({
    method: 'get', path: '/tenants/{tenant_id}/status', operationId: 'tenant_status', summary: 'Tenant status', tag: 'Reads',
    params: S.TenantPath, query: S.z.object({}).strict(),
    response: { status: 200, schema: S.TenantStatus, description: 'Sync health per connection and resource.' },
    errors: ['not_found'], documented: true,
    handle: async ({ params, caller, graph }) => ({ body: (await graph.run<{ tenant_status: unknown }>(STATUS, params, caller)).tenant_status }),
  }),
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/sync', operationId: 'sync_tenant', summary: 'Sync the tenant now', tag: 'Sync',
    description: 'Runs a sync of every connection and answers when it has finished. A failed connection is reported here and in `status`; the last good data stays served.',
    params: S.TenantPath, body: S.SyncBody,
    response: { status: 200, schema: S.SyncResult, description: 'What each connection fetched and changed.' },
    errors: ['not_found'], documented: false,
    handle: async ({ params, body, caller, graph }) => ({
      body: (await graph.run<{ sync_tenant: unknown }>(SYNC, { tenant_id: params.tenant_id, full: body.full }, caller)).sync_tenant,
    }),
  }),
  defineRoute({
    method: 'post', path: '/sandbox/reset', operationId: 'sandbox_reset', summary: 'Re-seed a sandbox tenant', tag: 'Sandbox',
    description: 'Sandbox tenants only: re-seeds the simulators from fixtures, re-syncs, clears the audit log and writes one `sandbox_reset` event. A production tenant gives 422 `request_invalid`.',
    body: S.SandboxResetBody,
    response: { status: 200, schema: S.SandboxResetResult, description: 'The tenant was re-seeded and synced.' },
    errors: ['not_found', 'request_invalid'], documented: true,
    handle: async ({ body, caller, graph }) => ({
      body: (await graph.run<{ reset_sandbox: unknown }>(RESET, { tenant_id: body.tenant_id }, caller)).reset_sandbox,
    }),
  }),
];
