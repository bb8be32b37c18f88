/**
 * The synced records and their list envelopes (docs/architecture.md, Reads), declared once: they describe the
 * REST answers, generate the OpenAPI document and the GraphQL types. Records are strict: undeclared
 * properties are refused.
 */
import { listEnvelope } from '../shared/paging';
import { z } from '../shared/request';

const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });
const json = z.record(z.string(), z.unknown());

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

export const Contact = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), first_name: z.string().nullable(), last_name: z.string().nullable(),
  email: z.string().nullable(), phone: z.string().nullable(), company_name: z.string().nullable(), company_source_id: z.string().nullable(),
  ...vendorRecord,
}).strict().openapi('Contact');

export const Product = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), connection_id: z.string(), name: z.string(), sku: z.string().nullable(),
  unit_price: z.number().nullable(), unit_cost: z.number().nullable(), active: z.boolean().nullable(),
  ...vendorRecord,
}).strict().openapi('Product');

export const Subscription = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), company_source_id: z.string().nullable(),
  product_source_id: z.string().nullable(), product_name: z.string().nullable(), quantity: z.number().nullable(),
  price: z.number().nullable(), partner_cost: z.number().nullable(), billing_term: z.string().nullable(),
  status: z.string().nullable(), start_date: z.string().nullable(), end_date: z.string().nullable(),
  ...vendorRecord,
}).strict().openapi('Subscription');

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

export const Project = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), connection_id: z.string(), name: z.string(),
  status: z.string().nullable().openapi({ description: 'The vendor\'s project status name.' }),
  company_name: z.string().nullable(), company_source_id: z.string().nullable(),
  baseline: z.boolean().openapi({ description: 'A baseline (template) project in the PSA: it takes no notes or items (409 project_not_writable).' }),
  ...vendorRecord,
}).strict().openapi('Project');
export const Package = z.object({
  id: z.string(), source: z.string(), source_id: z.string(), connection_id: z.string(),
  name: z.string().openapi({ description: 'The value DeployBody.package_name takes.' }),
  description: z.string().nullable(),
  operating_systems: z.array(z.string()).openapi({ description: 'OS families the package installs on: windows, mac, linux.' }),
  active: z.boolean(),
  ...vendorRecord,
}).strict().openapi('Package');

/** The envelope of each list (src/shared/paging.ts): items field named after the path, `sandbox`, `next_cursor`, store facts. */
export const TicketList = listEnvelope('TicketList', 'tickets', Ticket, { store: true });
export const DeviceList = listEnvelope('DeviceList', 'devices', Device, { store: true });
export const MemberList = listEnvelope('MemberList', 'members', Member, { store: true });
export const TicketBoardList = listEnvelope('TicketBoardList', 'ticket-boards', TicketBoard, { store: true });
export const TicketStatusList = listEnvelope('TicketStatusList', 'ticket-statuses', TicketStatus, { store: true });
export const TicketPriorityList = listEnvelope('TicketPriorityList', 'ticket-priorities', TicketPriority, { store: true });
export const ApplicationList = listEnvelope('ApplicationList', 'applications', InstalledApplication, { store: true });
export const IncidentList = listEnvelope('IncidentList', 'incidents', Incident, { store: true });
export const ContactList = listEnvelope('ContactList', 'contacts', Contact, { store: true });
export const ProductList = listEnvelope('ProductList', 'products', Product, { store: true });
export const SubscriptionList = listEnvelope('SubscriptionList', 'subscriptions', Subscription, { store: true });
export const AgreementList = listEnvelope('AgreementList', 'agreements', Agreement, { store: true });
export const ProjectList = listEnvelope('ProjectList', 'projects', Project, { store: true });
export const PackageList = listEnvelope('PackageList', 'packages', Package, { store: true });
