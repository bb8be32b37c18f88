/**
 * Store-served record lists (design.md section 5), one operation each. The three MCP list tools are
 * three of these operations.
 */
import type { ZodType } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import type { FeatureModule } from '../feature';
import { defineOperation, type McpBinding, type Operation } from '../operations/operation';
import { tenantOf } from '../operations/runner';
import { cursorParam, idCursor, limitParam, rfc3339, TenantPath, z } from '../shared/request';
import type { RecordListName } from './record-lists';
import { envelope } from './records.service';
import * as S from './record.schemas';

export const ListQuery = z.object({
  limit: limitParam,
  cursor: cursorParam(idCursor),
  updated_since: rfc3339.nullable().optional().openapi({ description: 'Only records updated at or after this time (RFC 3339).' }),
}).strict();

interface ListSpec {
  list: RecordListName;
  path: string;
  schema: ZodType;
  summary: string;
  errors?: ErrorCode[];
  description?: string;
  mcp?: McpBinding;
}

function listOperation(spec: ListSpec): Operation {
  return defineOperation({
    name: `list_${spec.list}`, kind: 'query', summary: spec.summary, description: spec.description, tag: 'Reads', role: 'reader',
    http: { method: 'get', path: `/tenants/{tenant_id}/${spec.path}`, documented: true },
    mcp: spec.mcp,
    path: TenantPath, query: ListQuery,
    responses: [{ status: 200, schema: spec.schema, description: 'One page, served from the synchronised store.' }],
    errors: spec.errors ?? [],
    handle: async ({ query }, ctx) => {
      const page = await ctx.services.records.list(tenantOf(ctx), spec.list, {
        limit: query.limit,
        after: query.cursor ? idCursor.decode(query.cursor) : null,
        updatedSince: query.updated_since ? new Date(query.updated_since) : null,
      });
      return envelope(spec.list, page);
    },
  });
}

const PAGE_HINT = 'Pass `next_cursor` as `cursor` for the next page.';

export const listTickets = listOperation({
  list: 'tickets', path: 'tickets', schema: S.TicketList, summary: 'Tickets',
  mcp: { tool: 'list_tickets', title: 'List tickets', readOnly: true, omit: ['updated_since'], description: "One page of the tenant's PSA tickets (canonical status and priority, vendor payload in `raw`), served from the synchronised store; same answer as GET /tenants/{tenant_id}/tickets. " + PAGE_HINT },
});
export const listDevices = listOperation({
  list: 'devices', path: 'devices', schema: S.DeviceList, summary: 'Devices (RMM)',
  mcp: { tool: 'list_devices', title: 'List devices', readOnly: true, omit: ['updated_since'], description: "One page of the tenant's RMM devices (hostname, company, OS, online, needs_attention, patches pending); same answer as GET /tenants/{tenant_id}/devices. " + PAGE_HINT },
});
export const listApplications = listOperation({
  list: 'applications', path: 'applications', schema: S.ApplicationList, summary: 'Installed applications',
  mcp: { tool: 'list_installed_applications', title: 'List installed applications', readOnly: true, omit: ['updated_since'], description: "One page of the software installed on the tenant's devices (name, publisher, version, device_source_id); same answer as GET /tenants/{tenant_id}/applications. " + PAGE_HINT },
});

export const RECORD_OPERATIONS: Operation[] = [
  listTickets,
  listDevices,
  listOperation({ list: 'agreements', path: 'agreements', schema: S.AgreementList, summary: 'Agreements with their lines', errors: ['not_supported'], description: 'HTTP 501 when the connector does not support agreements.' }),
  listOperation({ list: 'members', path: 'members', schema: S.MemberList, summary: 'Members (the time picker)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'boards', path: 'ticket-boards', schema: S.TicketBoardList, summary: 'Ticket boards (ids for `board`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'statuses', path: 'ticket-statuses', schema: S.TicketStatusList, summary: 'Ticket statuses (ids for `status`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'priorities', path: 'ticket-priorities', schema: S.TicketPriorityList, summary: 'Ticket priorities (ids for `priority`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listApplications,
  listOperation({ list: 'incidents', path: 'incidents', schema: S.IncidentList, summary: 'Incidents (RMM alerts)' }),
  listOperation({ list: 'products', path: 'products', schema: S.ProductList, summary: 'Products', description: "The PSA catalogue and the distributor's products, store-served (`source` tells which)." }),
  listOperation({ list: 'subscriptions', path: 'subscriptions', schema: S.SubscriptionList, summary: 'Distributor subscriptions', description: 'Subscriptions at the distributor (quantity, price, partner cost, billing term), store-served.' }),
  listOperation({ list: 'contacts', path: 'contacts', schema: S.ContactList, summary: 'Contacts', description: 'Contacts of the PSA and distributor companies, store-served. Contacts are list and match only: there is no contact create.' }),
  listOperation({ list: 'projects', path: 'projects', schema: S.ProjectList, summary: 'Projects (with the baseline flag)', description: 'Existing PSA projects; notes and items can be written on those that are not `baseline`.' }),
  listOperation({ list: 'packages', path: 'packages', schema: S.PackageList, summary: "Installable packages (the RMM's catalogue)", errors: ['not_supported'], description: 'What POST /tenants/{tenant_id}/devices/{device_id}/deploy can install, with the OS families each runs on. 501 when no RMM connection of the tenant has a catalogue.' }),
];

export const recordsFeature: FeatureModule = { name: 'records', operations: RECORD_OPERATIONS };
