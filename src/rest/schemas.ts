/**
 * Request and response schemas, declared once (zod): they validate requests, describe responses and
 * generate /openapi.json. Records and bodies are strict: undeclared properties are refused.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { decodeCursor } from '../records/records.service';

extendZodWithOpenApi(z);

export const uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a UUID');
const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });
const json = z.record(z.string(), z.unknown());

export const TenantPath = z.object({ tenant_id: uuid.openapi({ param: { name: 'tenant_id', in: 'path' } }) }).strict();

const rfc3339 = z.string().refine((s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s)), {
  message: 'must be an RFC 3339 timestamp, e.g. 2026-11-22T10:00:00Z',
});

export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100).openapi({ description: 'Page size, 1 to 500 (default 100).' }),
  cursor: z.string().min(1).refine((c) => decodeCursor(c) !== null, { message: 'is not a next_cursor this service issued' })
    .optional().openapi({ description: '`next_cursor` of the previous page.' }),
  updated_since: rfc3339.optional().openapi({ description: 'Only records updated at or after this time (RFC 3339).' }),
}).strict();

export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100),
  cursor: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'is not a next_cursor this service issued')
    .refine((c) => /^\d{1,18}$/.test(Buffer.from(c, 'base64url').toString('utf8')), { message: 'is not a next_cursor this service issued' })
    .optional(),
}).strict();

export const VendorEnvelope = z.object({
  connector: z.string(),
  native_id: z.string(),
  native: json.openapi({ description: 'Same payload as `raw`.' }),
}).strict().openapi('VendorEnvelope');

const vendorRecord = {
  raw: json.openapi({ description: 'The vendor payload, verbatim (read-only).' }),
  synced_at: ts,
  vendor: VendorEnvelope.nullable(),
};

export const Ticket = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), connection_id: z.string(),
  summary: z.string(), description: z.string().nullable(),
  status: z.string().nullable().openapi({ description: 'Canonical: new, in_progress, waiting, resolved, closed (null when unmapped).' }),
  native_status: z.string().nullable(),
  priority: z.string().nullable().openapi({ description: 'Canonical: low, medium, high, critical.' }),
  native_priority: z.string().nullable(),
  board: z.string().nullable().openapi({ description: 'Board id from the ticket-boards list.' }),
  board_name: z.string().nullable(), company_name: z.string().nullable(), company_source_id: z.string().nullable(),
  project_source_id: z.string().nullable(), record_type: z.string().nullable(),
  linked: z.boolean().openapi({ description: 'Created through this service (write-back and time allowed).' }),
  created_at: ts, updated_at: ts, closed_at: ts,
  ...vendorRecord,
}).strict().openapi('Ticket');

export const Device = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), hostname: z.string(),
  company_name: z.string().nullable(), company_source_id: z.string().nullable(), os: z.string().nullable(),
  online: z.boolean(), needs_attention: z.boolean(), patches_pending: z.number().int(), last_contact_at: ts,
  ...vendorRecord,
}).strict().openapi('Device');

export const Member = z.object({
  id: z.string().openapi({ description: 'The value CreateTimeEntryBody.member accepts.' }),
  display_name: z.string(), active: z.boolean().nullable(), email: z.string().nullable(),
  source: z.string(), source_id: z.string(), connection_id: z.string(),
  ...vendorRecord,
}).strict().openapi('Member');

export const TicketBoard = z.object({
  id: z.string(), name: z.string(), active: z.boolean().nullable(), source: z.string(), connection_id: z.string(), ...vendorRecord,
}).strict().openapi('TicketBoard');

export const TicketStatus = z.object({
  id: z.string(), name: z.string(), board: z.string().nullable(), closed: z.boolean(),
  canonical: z.string().nullable(), source: z.string(), connection_id: z.string(), ...vendorRecord,
}).strict().openapi('TicketStatus');

export const TicketPriority = z.object({
  id: z.string(), name: z.string(), canonical: z.string().nullable(), source: z.string(), connection_id: z.string(), ...vendorRecord,
}).strict().openapi('TicketPriority');

export const InstalledApplication = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), name: z.string(), publisher: z.string().nullable(),
  version: z.string().nullable(), device_source_id: z.string(), installed_at: z.string().nullable(), ...vendorRecord,
}).strict().openapi('InstalledApplication');

export const Incident = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), message: z.string(), severity: z.string().nullable(),
  device_source_id: z.string().nullable(), opened_at: ts, ...vendorRecord,
}).strict().openapi('Incident');

export const AgreementLine = z.object({
  source: z.string(), source_id: z.string(), agreement_source_id: z.string(),
  product_name: z.string().nullable(), product_source_id: z.string().nullable(),
  quantity: z.number().nullable(), unit_cost: z.number().nullable(), unit_price: z.number().nullable(),
  effective_start: z.string().nullable(), effective_end: z.string().nullable(), ...vendorRecord,
}).strict().openapi('AgreementLine');

export const Agreement = z.object({
  source: z.string(), source_id: z.string(), name: z.string(), status: z.string(), billing_cycle: z.string(),
  company_name: z.string().nullable(), company_source_id: z.string().nullable(),
  start_date: z.string().nullable(), end_date: z.string().nullable(), monthly_recurring_revenue: z.number().nullable(),
  lines: z.array(AgreementLine), ...vendorRecord,
}).strict().openapi('Agreement');

const envelope = {
  sandbox: z.boolean(),
  last_synced_at: ts.openapi({ description: 'Oldest successful sync among the connections that fed the list.' }),
  next_cursor: z.string().nullable().openapi({ description: 'Null when there is no further page.' }),
  served_from: z.string().nullable().openapi({ description: '`store`: lists are served from the synchronised store.' }),
};

export const TicketList = z.object({ tickets: z.array(Ticket), ...envelope }).strict().openapi('TicketList');
export const DeviceList = z.object({ devices: z.array(Device), ...envelope }).strict().openapi('DeviceList');
export const MemberList = z.object({ members: z.array(Member), ...envelope }).strict().openapi('MemberList');
export const TicketBoardList = z.object({ boards: z.array(TicketBoard), ...envelope }).strict().openapi('TicketBoardList');
export const TicketStatusList = z.object({ statuses: z.array(TicketStatus), ...envelope }).strict().openapi('TicketStatusList');
export const TicketPriorityList = z.object({ priorities: z.array(TicketPriority), ...envelope }).strict().openapi('TicketPriorityList');
export const ApplicationList = z.object({ applications: z.array(InstalledApplication), ...envelope }).strict().openapi('ApplicationList');
export const IncidentList = z.object({ incidents: z.array(Incident), ...envelope }).strict().openapi('IncidentList');
export const AgreementList = z.object({ agreements: z.array(Agreement), ...envelope }).strict().openapi('AgreementList');

export const TenantList = z.object({
  tenants: z.array(z.object({
    id: z.string(), name: z.string(), slug: z.string(), sandbox: z.boolean(),
    connections: z.array(z.object({ id: z.string(), kind: z.string(), connector: z.string() }).strict()),
  }).strict()),
}).strict().openapi('TenantList');

const ResourceSyncState = z.object({
  resource: z.string(), last_status: z.string(), last_synced_at: ts, last_attempt_at: ts,
  last_mode: z.string().nullable(), last_error: z.string().nullable(), records: z.number().int(),
}).strict();

export const ConnectionInfo = z.object({
  id: z.string(), kind: z.string(), connector: z.string(), base_url: z.string(), limited: z.boolean(),
  grants: z.array(z.string()), last_synced_at: ts, sync_status: z.string(), resources: z.array(ResourceSyncState),
}).strict().openapi('Connection');

export const ConnectionList = z.object({ connections: z.array(ConnectionInfo), sandbox: z.boolean() }).strict().openapi('ConnectionList');

export const TenantStatus = z.object({
  tenant_id: z.string(), name: z.string(), sandbox: z.boolean(), healthy: z.boolean(), last_synced_at: ts,
  connections: z.array(ConnectionInfo),
}).strict().openapi('TenantStatus');

export const AuditList = z.object({
  entries: z.array(z.object({
    id: z.string(), action: z.string(), outcome: z.string(), connection_id: z.string().nullable(),
    subject_ref: z.string().nullable(), detail: json, created_at: z.string(),
  }).strict()),
  sandbox: z.boolean(),
  next_cursor: z.string().nullable(),
}).strict().openapi('AuditList');

const ConnectionSyncReport = z.object({
  connection_id: z.string(), connector: z.string(), ok: z.boolean(), error: z.string().nullable(),
  resources: z.array(z.object({
    resource: z.string(), mode: z.string(), fetched: z.number().int(), created: z.number().int(),
    updated: z.number().int(), unchanged: z.number().int(),
  }).strict()),
}).strict();

export const SyncBody = z.object({ full: z.boolean().default(false).openapi({ description: 'Ignore watermarks: refetch everything.' }) }).strict().openapi('SyncBody');
export const SyncResult = z.object({
  tenant_id: z.string(), sandbox: z.boolean(), ok: z.boolean(), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SyncResult');

export const SandboxResetBody = z.object({ tenant_id: uuid.openapi({ description: 'A sandbox tenant to re-seed.' }) }).strict().openapi('SandboxResetBody');
export const SandboxResetResult = z.object({
  tenant_id: z.string(), sandbox: z.literal(true), connections: z.array(ConnectionSyncReport),
}).strict().openapi('SandboxResetResult');

export const ErrorBody = z.object({
  code: z.string().openapi({ description: 'Stable; branch on it.' }),
  message: z.string().openapi({ description: 'One English sentence.' }),
  doc_url: z.string(),
  detail: z.string().nullable().optional().openapi({ description: 'Additive alias of `message`.' }),
  details: json.nullable().optional(),
  needed: z.string().nullable().optional(),
  allowed: z.array(z.string()).nullable().optional(),
  status: z.number().int().optional(),
}).strict().openapi('Error');

export const HTTPValidationError = z.object({
  detail: z.array(z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }).strict()),
}).strict().openapi('HTTPValidationError');

export { z };
