/** Ticket create, write-back, time and findings, and the routing configuration: one operation each. */
import { Grant } from '../access/caller';
import type { ErrorCode } from '../errors/error-codes';
import type { FeatureModule } from '../operations/feature-module';
import { derivedGrant, operationsUsing, tenantOf } from '../operations/operation';
import { writeResponses, writeStatus } from '../operations/write-results';
import { pathId, TenantPath, z } from '../shared/request';
import * as S from './ticket.schemas';
import type { FindingsService } from './findings.service';
import type { TicketsService } from './tickets.service';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface TicketsServices {
  tickets: TicketsService;
  findings: FindingsService;
}
const defineOperation = operationsUsing<TicketsServices>();

const WRITE_ERRORS: ErrorCode[] = ['grant_missing', 'validation', 'status_unmapped', 'idempotency_conflict', 'idempotency_in_progress',
  'not_supported', 'rate_limited', 'vendor_error', 'vendor_unavailable', 'company_match_ambiguous', 'role_required'];

const createTicket = defineOperation({
  name: 'create_ticket', kind: 'mutation', summary: 'Create a ticket (preview or commit)', tag: 'Writes', role: 'isv', grant: Grant.TicketCreate,
  description: 'Preview by default; a commit needs `idempotency_key` and lands once. Fans out to every PSA connection the key may create on; `partial_failure` says when a target failed. Not offered over MCP.',
  http: { method: 'post', path: '/tenants/{tenant_id}/tickets', documented: true },
  path: TenantPath, body: S.CreateTicketBody,
  responses: writeResponses(S.TicketCreatePreview, S.TicketCreateResult),
  statusOf: writeStatus,
  errors: WRITE_ERRORS,
  handle: async ({ body }, ctx) => ctx.services.tickets.createTicket(ctx.caller, tenantOf(ctx), body),
});

const writeTicket = defineOperation({
  name: 'write_ticket', kind: 'mutation', summary: 'Update, note, close or reopen a linked ticket', tag: 'Writes', role: 'isv', grant: Grant.TicketUpdate,
  description: 'Only tickets in the link store. Close needs `evidence` (written as a resolution note). A commit that adds a note answers 201, an update 200.',
  http: { method: 'post', path: '/tenants/{tenant_id}/tickets/write', documented: true },
  path: TenantPath, body: S.TicketWriteBody,
  responses: writeResponses(S.TicketWritePreview, S.TicketWriteResult, [200, 201]),
  statusOf: writeStatus,
  errors: WRITE_ERRORS,
  handle: async ({ body }, ctx) => ctx.services.tickets.writeTicket(ctx.caller, tenantOf(ctx), body),
});

const createTimeEntry = defineOperation({
  name: 'create_time_entry', kind: 'mutation', summary: 'Post hours on a linked ticket', tag: 'Writes', role: 'isv', grant: Grant.TimeCreate,
  description: '`hours` finite and > 0; `billable` required; `member` from the members list (required for a live commit where the connector says so). Time has no notes field.',
  http: { method: 'post', path: '/tenants/{tenant_id}/time-entries', documented: false },
  path: TenantPath, body: S.CreateTimeEntryBody,
  responses: writeResponses(S.TimeEntryPreview, S.TimeEntryResult),
  statusOf: writeStatus,
  errors: WRITE_ERRORS,
  handle: async ({ body }, ctx) => ctx.services.tickets.createTimeEntry(ctx.caller, tenantOf(ctx), body),
});

export const routeFinding = defineOperation({
  name: 'route_finding', kind: 'mutation', summary: 'Route a finding to a ticket or project', tag: 'Writes', role: 'isv',
  // The grant of the finding's effective routing target: psa.project.write for a project, else psa.ticket.create.
  grant: derivedGrant<TicketsServices>([
    { key: Grant.TicketCreate, kind: 'psa', when: 'the routing target of the finding\'s kind is `service_ticket`' },
    { key: Grant.ProjectWrite, kind: 'psa', when: 'it is `project`' },
  ], async ({ body }, { caller, access, services }) => ({ key: await services.findings.routeGrant(caller, access, body.kind), kind: 'psa' })),
  description: 'Per the routing configuration: `service_ticket` creates a ticket (grant psa.ticket.create); `project` writes to an existing project (grant psa.project.write; the limited connector: a note on `project_source_id`). `idempotency_key` is the finding id.',
  http: { method: 'post', path: '/tenants/{tenant_id}/findings/route', documented: true },
  mcp: {
    tool: 'route_finding', title: 'Route a finding', readOnly: false,
    description: 'Routes a finding (technical or organizational) to a PSA service ticket or project for the tenant; '
      + 'same as POST /tenants/{tenant_id}/findings/route. `dry_run` defaults to true (a preview; nothing is written); '
      + 'pass dry_run: false to commit. `idempotency_key` is your stable finding id: a replay returns the original result.',
  },
  path: TenantPath, body: S.RouteFindingBody,
  responses: writeResponses(S.FindingRoutePreview, S.FindingRouteResult),
  statusOf: writeStatus,
  errors: [...WRITE_ERRORS, 'project_requires_existing', 'project_not_writable'],
  handle: async ({ body }, ctx) => ctx.services.findings.route(ctx.caller, tenantOf(ctx), body),
});

const resolveFinding = defineOperation({
  name: 'resolve_finding', kind: 'mutation', summary: 'A finding was fixed', tag: 'Writes', role: 'isv',
  // Records the fix on the tenant; the close it may make asks psa.ticket.auto_close per connection.
  grant: 'none',
  description: 'Records the fix and writes a `resolved` health row; closes the linked ticket only when `psa.ticket.auto_close` is on.',
  http: { method: 'post', path: '/tenants/{tenant_id}/findings/{finding_id}/resolve', documented: false },
  path: TenantPath.extend({ finding_id: pathId('finding_id', 'The idempotency_key the finding was routed with.') }).strict(),
  body: S.ResolveFindingBody,
  responses: [{ status: 200, schema: S.FindingResolveResult, description: 'What was closed (or would be).' }],
  errors: WRITE_ERRORS,
  handle: async ({ path, body }, ctx) => ctx.services.findings.resolve(ctx.caller, tenantOf(ctx), path.finding_id, body),
});

const getRouting = defineOperation({
  name: 'routing', kind: 'query', summary: 'Write-back routing configuration', tag: 'Writes', role: 'isv',
  http: { method: 'get', path: '/tenants/{tenant_id}/routing', documented: true },
  path: TenantPath, query: z.object({
    isv_id: z.string().max(100).nullable().optional().openapi({ description: 'Admin token only (GraphQL): whose routing to read (an ISV key reads its own).' }),
  }).strict(),
  responses: [{ status: 200, schema: S.RoutingConfig, description: 'Recommendation, overrides, effective targets.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => ctx.services.findings.routing(ctx.caller, tenantOf(ctx), query.isv_id),
});

const setRouting = defineOperation({
  name: 'set_routing', kind: 'mutation', summary: 'Set write-back target overrides', tag: 'Writes', role: 'isv',
  // The ISV's own routing preference on the tenant; each write it later leads to needs its own grant.
  grant: 'none',
  description: 'A value sets the override for this tenant; null reverts to the recommendation; a target outside the supported ones is 422.',
  http: { method: 'put', path: '/tenants/{tenant_id}/routing', documented: true },
  path: TenantPath, body: S.RoutingConfigBody,
  responses: [{ status: 200, schema: S.RoutingConfig, description: 'The configuration after the change.' }],
  errors: ['validation', 'role_required'],
  handle: async ({ body }, ctx) => ctx.services.findings.setRouting(ctx.caller, tenantOf(ctx), body),
});

export const ticketsFeature: FeatureModule<TicketsServices> = {
  name: 'tickets',
  operations: [createTicket, writeTicket, createTimeEntry, routeFinding, resolveFinding, getRouting, setRouting],
};
