/**
 * Store-served record lists (docs/architecture.md, Reads), one operation each. The three MCP list tools are
 * three of these operations.
 */
import { getRefId } from '@asteasolutions/zod-to-openapi';
import type { ZodObject, ZodType } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf, type McpBinding, type Operation } from '../operations/operation';
import { fieldsParam, narrowedAnswer, selectFields } from '../shared/field-selection';
import { afterKey, envelopeOf, pageQuery } from '../shared/paging';
import { pathId, TenantPath, z } from '../shared/request';
import type { RecordListName } from './record-lists';
import { recordCursor, type RecordsService } from './records.service';
import * as S from './record.schemas';
import { reactTo } from '../shared/committed-changes';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface RecordsServices {
  records: RecordsService;
}
const defineOperation = operationsUsing<RecordsServices>();

interface ListSpec {
  list: RecordListName;
  path: string;
  schema: ZodType;
  /** One record of the list: its schema and the name of its single-record read (`get_<item>`). */
  item: ZodType;
  itemName: string;
  summary: string;
  errors?: ErrorCode[];
  description?: string;
  mcp?: McpBinding;
}

/** Every list's spec, in declaration order: each also gets its single-record read. */
const LIST_SPECS: ListSpec[] = [];

/** The OpenAPI component name of a schema (its narrowed answer is named after it). */
function schemaName(schema: ZodType): string {
  const id = getRefId(schema as never);
  if (!id) throw new Error('a record schema must be a named OpenAPI component');
  return id;
}

function listOperation(spec: ListSpec): Operation {
  LIST_SPECS.push(spec);
  return defineOperation({
    name: `list_${spec.list}`, kind: 'query', summary: spec.summary, description: spec.description, tag: 'Reads', role: 'reader',
    http: { method: 'get', path: `/tenants/{tenant_id}/${spec.path}`, documented: true },
    mcp: spec.mcp,
    path: TenantPath, query: pageQuery(recordCursor(spec.list), { updatedSince: true }, { fields: fieldsParam(spec.item) }),
    responses: [{ status: 200, schema: spec.schema, narrowed: narrowedAnswer(spec.schema as ZodObject, `${schemaName(spec.schema)}Selection`), description: 'One page, served from the synchronised store (with `fields=`, each record narrowed to those fields).' }],
    errors: spec.errors ?? [],
    handle: async ({ query }, ctx) => {
      const access = tenantOf(ctx);
      const page = await ctx.services.records.list(access, spec.list, {
        limit: query.limit,
        after: afterKey(recordCursor(spec.list), query)?.[0] ?? null,
        updatedSince: query.updated_since ? new Date(query.updated_since) : null,
      });
      // A narrowed answer reads the records' fields; a whole one is written as the records' text.
      const items = query.fields ? page.items.map((item) => selectFields(item.value() as Record<string, unknown>, query.fields)) : page.items;
      return envelopeOf<unknown>(spec.path, { ...page, items }, access.tenant.sandbox, page);
    },
  });
}

const RecordPath = TenantPath.extend({
  record_id: pathId('record_id', "Our id of the record, or its `source_id` (the vendor's id)."),
}).strict();

/** The single-record read of a list (docs/architecture.md, Reads): same store, visibility and shape as the list. */
function getOperation(spec: ListSpec): Operation {
  return defineOperation({
    name: `get_${spec.itemName}`, kind: 'query', summary: `One ${spec.itemName.replace(/_/g, ' ')}`, tag: 'Reads', role: 'reader',
    description: `One record of GET /tenants/{tenant_id}/${spec.path}, by our \`id\` or by its \`source_id\`, served from the store. ` +
      '404 for anything this key cannot see; a source_id two connections share answers 422 with the ids that settle it.' +
      (spec.errors?.includes('not_supported') ? ' 501 where the list is 501.' : ''),
    http: { method: 'get', path: `/tenants/{tenant_id}/${spec.path}/{record_id}`, documented: false },
    path: RecordPath, query: z.object({ fields: fieldsParam(spec.item) }).strict(),
    responses: [{ status: 200, schema: spec.item, narrowed: narrowedAnswer(spec.item as ZodObject, `${schemaName(spec.item)}Selection`), description: 'The record, as the list shows it (with `fields=`, only those fields).' }],
    errors: [...(spec.errors ?? []), 'validation'],
    handle: async ({ path, query }, ctx) => {
      const record = await ctx.services.records.one(tenantOf(ctx), spec.list, path.record_id);
      return query.fields ? selectFields(record.value() as Record<string, unknown>, query.fields) : record;
    },
  });
}

const PAGE_HINT = 'Pass `next_cursor` as `cursor` for the next page.';

export const listTickets = listOperation({
  list: 'tickets', item: S.Ticket, itemName: 'ticket', path: 'tickets', schema: S.TicketList, summary: 'Tickets',
  mcp: { tool: 'list_tickets', title: 'List tickets', readOnly: true, omit: ['updated_since'], description: "One page of the tenant's PSA tickets (canonical status and priority, vendor payload in `raw`), served from the synchronised store; same answer as GET /tenants/{tenant_id}/tickets. " + PAGE_HINT },
});
export const listDevices = listOperation({
  list: 'devices', item: S.Device, itemName: 'device', path: 'devices', schema: S.DeviceList, summary: 'Devices (RMM)',
  mcp: { tool: 'list_devices', title: 'List devices', readOnly: true, omit: ['updated_since'], description: "One page of the tenant's RMM devices (hostname, company, OS, online, needs_attention, patches pending); same answer as GET /tenants/{tenant_id}/devices. " + PAGE_HINT },
});
export const listApplications = listOperation({
  list: 'applications', item: S.InstalledApplication, itemName: 'installed_application', path: 'applications', schema: S.ApplicationList, summary: 'Installed applications',
  mcp: { tool: 'list_installed_applications', title: 'List installed applications', readOnly: true, omit: ['updated_since'], description: "One page of the software installed on the tenant's devices (name, publisher, version, device_source_id); same answer as GET /tenants/{tenant_id}/applications. " + PAGE_HINT },
});

export const RECORD_OPERATIONS: Operation[] = [
  listTickets,
  listDevices,
  listOperation({ list: 'agreements', item: S.Agreement, itemName: 'agreement', path: 'agreements', schema: S.AgreementList, summary: 'Agreements with their lines', errors: ['not_supported'], description: 'HTTP 501 when the connector does not support agreements.' }),
  listOperation({ list: 'members', item: S.Member, itemName: 'member', path: 'members', schema: S.MemberList, summary: 'Members (the time picker)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'boards', item: S.TicketBoard, itemName: 'ticket_board', path: 'ticket-boards', schema: S.TicketBoardList, summary: 'Ticket boards (ids for `board`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'statuses', item: S.TicketStatus, itemName: 'ticket_status', path: 'ticket-statuses', schema: S.TicketStatusList, summary: 'Ticket statuses (ids for `status`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listOperation({ list: 'priorities', item: S.TicketPriority, itemName: 'ticket_priority', path: 'ticket-priorities', schema: S.TicketPriorityList, summary: 'Ticket priorities (ids for `priority`)', errors: ['not_supported'], description: 'The limited PSA connector answers 501.' }),
  listApplications,
  listOperation({ list: 'incidents', item: S.Incident, itemName: 'incident', path: 'incidents', schema: S.IncidentList, summary: 'Incidents (RMM alerts)' }),
  listOperation({ list: 'products', item: S.Product, itemName: 'product', path: 'products', schema: S.ProductList, summary: 'Products', description: "The PSA catalogue and the distributor's products, store-served (`source` tells which)." }),
  listOperation({ list: 'subscriptions', item: S.Subscription, itemName: 'subscription', path: 'subscriptions', schema: S.SubscriptionList, summary: 'Distributor subscriptions', description: 'Subscriptions at the distributor (quantity, price, partner cost, billing term), store-served.' }),
  listOperation({ list: 'contacts', item: S.Contact, itemName: 'contact', path: 'contacts', schema: S.ContactList, summary: 'Contacts', description: 'Contacts of the PSA and distributor companies, store-served. Contacts are list and match only: there is no contact create.' }),
  listOperation({ list: 'projects', item: S.Project, itemName: 'project', path: 'projects', schema: S.ProjectList, summary: 'Projects (with the baseline flag)', description: 'Existing PSA projects; notes and items can be written on those that are not `baseline`.' }),
  listOperation({ list: 'packages', item: S.Package, itemName: 'package', path: 'packages', schema: S.PackageList, summary: "Installable packages (the RMM's catalogue)", errors: ['not_supported'], description: 'What POST /tenants/{tenant_id}/devices/{device_id}/deploy can install, with the OS families each runs on. 501 when no RMM connection of the tenant has a catalogue.' }),
  // One single-record read per list above (evaluated after them, so every spec is in).
  ...LIST_SPECS.map(getOperation),
];

export const recordsFeature: FeatureModule<RecordsServices> = {
  name: 'records',
  operations: RECORD_OPERATIONS,
  // The records' synced-at answer is cached: a sync's end clears it.
  reactions: (services) => [reactTo('sync.ended', 'records: synced-at cache', () => services.records.invalidateSyncedAt())],
};
