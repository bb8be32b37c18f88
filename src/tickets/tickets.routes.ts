/** REST routes of the writes (interface document rules 3-7, 14; design.md section 6). */
import { defineRoute, type RouteDef } from '../rest/route';
import * as S from '../rest/schemas';
import {
  CreateTicketBody, CreateTimeEntryBody, ResolveFindingBody, RouteFindingBody, RoutingConfigBody, TicketWriteBody, WriteResult,
} from '../rest/write-schemas';

const WRITE = (name: string) => `mutation W($tenant_id: ID!, $body: JSONObject!) { r: ${name}(tenant_id: $tenant_id, body: $body) }`;
export const CREATE_TICKET = WRITE('create_ticket');
export const WRITE_TICKET = WRITE('write_ticket');
export const CREATE_TIME = WRITE('create_time_entry');
export const ROUTE_FINDING = WRITE('route_finding');
export const RESOLVE_FINDING = 'mutation R($tenant_id: ID!, $finding_id: ID!, $body: JSONObject!) { r: resolve_finding(tenant_id: $tenant_id, finding_id: $finding_id, body: $body) }';
const ROUTING_FIELDS = 'recommended overrides effective supported_targets';
export const GET_ROUTING = `query G($tenant_id: ID!) { r: routing(tenant_id: $tenant_id) { ${ROUTING_FIELDS} } }`;
export const SET_ROUTING = `mutation S($tenant_id: ID!, $body: JSONObject!) { r: set_routing(tenant_id: $tenant_id, body: $body) { ${ROUTING_FIELDS} } }`;

const WRITE_ERRORS = ['not_found', 'grant_missing', 'validation', 'status_unmapped', 'idempotency_conflict', 'idempotency_in_progress',
  'not_supported', 'rate_limited', 'vendor_error', 'vendor_unavailable', 'company_match_ambiguous'] as const;

/** A preview answers 200; a commit that creates answers 201 (a replay keeps it). */
const createdStatus = (body: Record<string, unknown>) => (body.dry_run === true ? 200 : 201);
const retryHeaders = (body: Record<string, unknown>): Record<string, string> => (body.idempotent_replay ? { 'Idempotent-Replay': 'true' } : {});

const RoutingView = S.z.object({
  recommended: S.z.record(S.z.string(), S.z.string().nullable()), overrides: S.z.record(S.z.string(), S.z.string()),
  effective: S.z.record(S.z.string(), S.z.string()), supported_targets: S.z.array(S.z.string()),
}).strict().openapi('RoutingConfig');

export const TICKET_ROUTES: RouteDef[] = [
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/tickets', operationId: 'create_ticket', summary: 'Create a ticket (preview or commit)', tag: 'Writes',
    description: 'Grant `psa.ticket.create`. Preview by default; a commit with `idempotency_key` lands once. Fans out to every PSA connection the key may create on; `partial_failure` says when a target failed.',
    params: S.TenantPath, body: CreateTicketBody,
    response: { status: 201, schema: WriteResult, description: 'Commit result (200 for a preview).' },
    errors: [...WRITE_ERRORS], documented: true,
    handle: async ({ params, body, caller, graph }) => {
      const r = (await graph.run<{ r: Record<string, unknown> }>(CREATE_TICKET, { tenant_id: params.tenant_id, body }, caller)).r;
      return { status: createdStatus(r), body: r, headers: retryHeaders(r) };
    },
  }),
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/tickets/write', operationId: 'write_ticket', summary: 'Update, note, close or reopen a linked ticket', tag: 'Writes',
    description: 'Grant `psa.ticket.update`. Only tickets in the link store. Close needs `evidence` (written as a resolution note).',
    params: S.TenantPath, body: TicketWriteBody,
    response: { status: 200, schema: WriteResult, description: 'Preview or commit result.' },
    errors: [...WRITE_ERRORS], documented: true,
    handle: async ({ params, body, caller, graph }) => {
      const r = (await graph.run<{ r: Record<string, unknown> }>(WRITE_TICKET, { tenant_id: params.tenant_id, body }, caller)).r;
      return { body: r, headers: retryHeaders(r) };
    },
  }),
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/time-entries', operationId: 'create_time_entry', summary: 'Post hours on a linked ticket', tag: 'Writes',
    description: 'Grant `psa.time.create`. `hours` finite and > 0; `billable` required; `member` from the members list (required for a live commit on ConnectWise). Time has no notes field.',
    params: S.TenantPath, body: CreateTimeEntryBody,
    response: { status: 201, schema: WriteResult, description: 'Commit result (200 for a preview).' },
    errors: [...WRITE_ERRORS], documented: false,
    handle: async ({ params, body, caller, graph }) => {
      const r = (await graph.run<{ r: Record<string, unknown> }>(CREATE_TIME, { tenant_id: params.tenant_id, body }, caller)).r;
      return { status: createdStatus(r), body: r, headers: retryHeaders(r) };
    },
  }),
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/findings/route', operationId: 'route_finding', summary: 'Route a finding to a ticket or project', tag: 'Writes',
    description: 'Per the routing configuration: `service_ticket` creates a ticket; `project` writes to an existing project (the limited connector: a note on `project_source_id`). `idempotency_key` is the finding id.',
    params: S.TenantPath, body: RouteFindingBody,
    response: { status: 201, schema: WriteResult, description: 'Commit result (200 for a preview).' },
    errors: [...WRITE_ERRORS, 'project_requires_existing', 'project_not_writable'], documented: true,
    handle: async ({ params, body, caller, graph }) => {
      const r = (await graph.run<{ r: Record<string, unknown> }>(ROUTE_FINDING, { tenant_id: params.tenant_id, body }, caller)).r;
      return { status: createdStatus(r), body: r, headers: retryHeaders(r) };
    },
  }),
  defineRoute({
    method: 'post', path: '/tenants/{tenant_id}/findings/{finding_id}/resolve', operationId: 'resolve_finding', summary: 'A finding was fixed', tag: 'Writes',
    description: 'Records the fix and writes a `resolved` health row; closes the linked ticket only when `psa.ticket.auto_close` is on.',
    params: S.z.object({ tenant_id: S.uuid, finding_id: S.z.string().min(1).max(200) }).strict(), body: ResolveFindingBody,
    response: { status: 200, schema: WriteResult, description: 'What was closed (or would be).' },
    errors: [...WRITE_ERRORS], documented: false,
    handle: async ({ params, body, caller, graph }) => ({
      body: (await graph.run<{ r: Record<string, unknown> }>(RESOLVE_FINDING, { tenant_id: params.tenant_id, finding_id: params.finding_id, body }, caller)).r,
    }),
  }),
  defineRoute({
    method: 'get', path: '/tenants/{tenant_id}/routing', operationId: 'get_routing', summary: 'Write-back routing configuration', tag: 'Writes',
    params: S.TenantPath, query: S.z.object({}).strict(),
    response: { status: 200, schema: RoutingView, description: 'Recommendation, overrides, effective targets.' },
    errors: ['not_found'], documented: true,
    handle: async ({ params, caller, graph }) => ({ body: (await graph.run<{ r: unknown }>(GET_ROUTING, params, caller)).r }),
  }),
  defineRoute({
    method: 'put', path: '/tenants/{tenant_id}/routing', operationId: 'put_routing', summary: 'Set write-back target overrides', tag: 'Writes',
    description: 'A value sets the override for this tenant; null reverts to the recommendation; a target outside the supported ones is 422.',
    params: S.TenantPath, body: RoutingConfigBody,
    response: { status: 200, schema: RoutingView, description: 'The configuration after the change.' },
    errors: ['not_found', 'validation'], documented: true,
    handle: async ({ params, body, caller, graph }) => ({ body: (await graph.run<{ r: unknown }>(SET_ROUTING, { tenant_id: params.tenant_id, body }, caller)).r }),
  }),
];

export const TICKET_DOCUMENTS = [CREATE_TICKET, WRITE_TICKET, CREATE_TIME, ROUTE_FINDING, RESOLVE_FINDING, GET_ROUTING, SET_ROUTING];
