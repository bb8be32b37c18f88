/**
 * The store-served lists: which table feeds each list, which connector capability it needs, and how
 * a stored row becomes the documented record (docs/architecture.md, Reads). One definition per list; REST,
 * GraphQL and MCP all read through RecordsService.
 */
import type { ConnectionKind } from '../../entities/tenancy';
import type { SyncResource } from '../connectors/types';

export type Row = Record<string, any>;

const iso = (d: Date | string | null | undefined): string | null =>
  d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString().replace('.000Z', 'Z');

/** `vendor` and `raw` carry the same payload, verbatim. */
function vendorFields(row: Row) {
  return {
    raw: row.raw,
    synced_at: iso(row.synced_at),
    vendor: { connector: row.connector, native_id: row.source_id, native: row.raw },
  };
}

export interface RecordListDef {
  resource: SyncResource;
  table: string;
  /** What the list is called in messages (its items field). */
  itemsField: string;
  /** Connection kind that feeds it. */
  kind: ConnectionKind;
  /** The list is served only when a connector of the tenant syncs this resource; else 501. */
  requiresCapability: boolean;
  /** Extra columns of the row (SQL over the table's alias `r`). */
  extraColumns?: string;
  /** A column the list shows as `id` that is neither our id nor source_id; a single-record read accepts it. */
  shownIdColumn?: string;
  /** Only records of connections of `kind` (the table is fed by several kinds). */
  onlyKind?: boolean;
  toApi(row: Row): Record<string, unknown>;
}

export const RECORD_LISTS = {
  tickets: {
    resource: 'tickets', table: 'tickets', itemsField: 'tickets', kind: 'psa', requiresCapability: false,
    extraColumns: 'EXISTS (SELECT 1 FROM ticket_links l WHERE l.tenant_id = r.tenant_id AND l.connection_id = r.connection_id AND l.ticket_ref = r.source_id) AS linked',
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, connection_id: r.connection_id,
      summary: r.summary, description: r.description,
      status: r.status, native_status: r.native_status, priority: r.priority, native_priority: r.native_priority,
      board: r.board_source_id, board_name: r.board_name,
      company_name: r.company_name, company_source_id: r.company_source_id,
      project_source_id: r.project_source_id, record_type: r.record_type,
      linked: r.linked === true,
      created_at: iso(r.opened_at), updated_at: iso(r.vendor_updated_at), closed_at: iso(r.closed_at),
      ...vendorFields(r),
    }),
  },
  devices: {
    resource: 'devices', table: 'devices', itemsField: 'devices', kind: 'rmm', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, hostname: r.hostname,
      company_name: r.company_name, company_source_id: r.company_source_id, os: r.os,
      online: r.online, needs_attention: r.needs_attention, patches_pending: r.patches_pending,
      last_contact_at: iso(r.last_contact_at),
      ...vendorFields(r),
    }),
  },
  members: {
    resource: 'members', table: 'members', itemsField: 'members', kind: 'psa', requiresCapability: true,
    // A member's `id` is its member ref (what time entries take): a single read accepts it too.
    shownIdColumn: 'member_ref',
    toApi: (r) => ({
      id: r.member_ref, display_name: r.display_name, active: r.active, email: r.email,
      source: r.connector, source_id: r.source_id, connection_id: r.connection_id,
      ...vendorFields(r),
    }),
  },
  boards: {
    resource: 'boards', table: 'ticket_boards', itemsField: 'ticket_boards', kind: 'psa', requiresCapability: true,
    toApi: (r) => ({
      id: r.source_id, name: r.name, active: r.active, source: r.connector, connection_id: r.connection_id,
      ...vendorFields(r),
    }),
  },
  statuses: {
    resource: 'statuses', table: 'ticket_statuses', itemsField: 'ticket_statuses', kind: 'psa', requiresCapability: true,
    toApi: (r) => ({
      id: r.source_id, name: r.name, board: r.board_source_id, closed: r.closed, canonical: r.canonical,
      source: r.connector, connection_id: r.connection_id,
      ...vendorFields(r),
    }),
  },
  priorities: {
    resource: 'priorities', table: 'ticket_priorities', itemsField: 'ticket_priorities', kind: 'psa', requiresCapability: true,
    toApi: (r) => ({
      id: r.source_id, name: r.name, canonical: r.canonical, source: r.connector, connection_id: r.connection_id,
      ...vendorFields(r),
    }),
  },
  applications: {
    resource: 'applications', table: 'installed_applications', itemsField: 'applications', kind: 'rmm', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, name: r.name, publisher: r.publisher,
      version: r.version, device_source_id: r.device_source_id, installed_at: r.installed_at,
      ...vendorFields(r),
    }),
  },
  incidents: {
    resource: 'incidents', table: 'incidents', itemsField: 'incidents', kind: 'rmm', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, message: r.message, severity: r.severity,
      device_source_id: r.device_source_id, opened_at: iso(r.opened_at),
      ...vendorFields(r),
    }),
  },
  contacts: {
    resource: 'contacts', table: 'contacts', itemsField: 'contacts', kind: 'psa', requiresCapability: false, onlyKind: true,
    extraColumns: '(SELECT c.name FROM companies c WHERE c.tenant_id = r.tenant_id AND c.connection_id = r.connection_id AND c.source_id = r.company_source_id LIMIT 1) AS company_name',
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, first_name: r.first_name, last_name: r.last_name,
      email: r.email, phone: r.phone, company_name: r.company_name ?? null, company_source_id: r.company_source_id,
      ...vendorFields(r),
    }),
  },
  products: {
    // The PSA catalogue and the distributor's products: `source` says which.
    resource: 'products', table: 'products', itemsField: 'products', kind: 'psa', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, connection_id: r.connection_id, name: r.name, sku: r.sku,
      unit_price: r.unit_price, unit_cost: r.unit_cost, active: r.active,
      ...vendorFields(r),
    }),
  },
  subscriptions: {
    resource: 'subscriptions', table: 'subscriptions', itemsField: 'subscriptions', kind: 'distributor', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, company_source_id: r.company_source_id,
      product_source_id: r.product_source_id, product_name: r.product_name, quantity: r.quantity, price: r.price,
      partner_cost: r.partner_cost, billing_term: r.billing_term, status: r.status, start_date: r.start_date, end_date: r.end_date,
      ...vendorFields(r),
    }),
  },
  packages: {
    resource: 'packages', table: 'packages', itemsField: 'packages', kind: 'rmm', requiresCapability: true,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, connection_id: r.connection_id, name: r.name,
      description: r.description, operating_systems: r.operating_systems ?? [], active: r.active,
      ...vendorFields(r),
    }),
  },
  agreements: {
    resource: 'agreements', table: 'agreements', itemsField: 'agreements', kind: 'psa', requiresCapability: true,
    toApi: (r) => ({
      source: r.connector, source_id: r.source_id, name: r.name, status: r.status ?? 'unknown',
      billing_cycle: r.billing_cycle ?? 'unknown', company_name: r.company_name, company_source_id: r.company_source_id,
      start_date: r.start_date, end_date: r.end_date, monthly_recurring_revenue: r.monthly_recurring_revenue,
      lines: [] as Record<string, unknown>[],
      ...vendorFields(r),
    }),
  },
  projects: {
    resource: 'projects', table: 'projects', itemsField: 'projects', kind: 'psa', requiresCapability: false,
    toApi: (r) => ({
      id: r.id, source: r.connector, source_id: r.source_id, connection_id: r.connection_id, name: r.name,
      status: r.status, company_name: r.company_name, company_source_id: r.company_source_id, baseline: r.baseline === true,
      ...vendorFields(r),
    }),
  },
} satisfies Record<string, RecordListDef>;

export type RecordListName = keyof typeof RECORD_LISTS;

export function agreementLineToApi(r: Row): Record<string, unknown> {
  return {
    source: r.connector, source_id: r.source_id, agreement_source_id: r.agreement_source_id,
    product_name: r.product_name, product_source_id: r.product_source_id, quantity: r.quantity,
    unit_cost: r.unit_cost, unit_price: r.unit_price, effective_start: r.effective_start,
    effective_end: r.effective_end, ...vendorFields(r),
  };
}

export { iso as toRfc3339 };
