/**
 * The store-served lists: which table feeds each list, which connector capability it needs, and the
 * fields of its record (docs/architecture.md, Reads). One definition per list; REST, GraphQL and MCP all
 * read through RecordsService.
 *
 * A record's fields are declared once, in answer order, each as the SQL of its value and how JSON writes
 * it: the page query selects exactly those values (records.store.ts) and `recordWriter` writes the
 * record's JSON text from them in one pass, with the vendor payload spliced in as the text it is stored
 * as. Nothing on the read path builds the record as an object or serialises it again.
 */
import type { ConnectionKind } from '../../entities/tenancy';
import type { SyncResource } from '../connectors/types';
import { toRfc3339 } from '../shared/dates';

export type Row = Record<string, any>;

/**
 * A field of a record: the SQL of its value over the row `r`, and how it is written. A plain string is
 * a text field (`'r.summary'`).
 *  - `text`: a string or null; `bool`, `number`: as JSON writes them (NaN as null);
 *  - `json`: a jsonb value, spliced as PostgreSQL writes it;
 *  - `time`: a timestamptz, written as toRfc3339 writes it;
 *  - `connector`: the connector of the record's connection (from the tenant's connections, no SQL).
 */
export type Field = string | { kind: 'text' | 'bool' | 'number' | 'json' | 'time'; sql: string } | { kind: 'connector' };

const bool = (sql: string): Field => ({ kind: 'bool', sql });
const num = (sql: string): Field => ({ kind: 'number', sql });
const json = (sql: string): Field => ({ kind: 'json', sql });
const time = (sql: string): Field => ({ kind: 'time', sql });
const CONNECTOR: Field = { kind: 'connector' };

export interface RecordListDef {
  resource: SyncResource;
  table: string;
  /** What the list is called in messages (its items field). */
  itemsField: string;
  /** Connection kind that feeds it. */
  kind: ConnectionKind;
  /** The list is served only when a connector of the tenant syncs this resource; else 501. */
  requiresCapability: boolean;
  /** The record's fields before its vendor payload (`raw`, `synced_at`, `vendor`, which every record ends with), in answer order. */
  fields: Readonly<Record<string, Field>>;
  /** The record carries `lines` (its agreement lines) after `fields`. */
  lines?: boolean;
  /** A column the list shows as `id` that is neither our id nor source_id; a single-record read accepts it. */
  shownIdColumn?: string;
  /** Only records of connections of `kind` (the table is fed by several kinds). */
  onlyKind?: boolean;
}

/** The fields every record of a connection shows first: our id, its connector and the vendor's id. */
const OWN = { id: 'r.id', source: CONNECTOR, source_id: 'r.source_id' } as const;

export const RECORD_LISTS = {
  tickets: {
    resource: 'tickets', table: 'tickets', itemsField: 'tickets', kind: 'psa', requiresCapability: false,
    fields: {
      ...OWN, connection_id: 'r.connection_id',
      summary: 'r.summary', description: 'r.description',
      status: 'r.status', native_status: 'r.native_status', priority: 'r.priority', native_priority: 'r.native_priority',
      board: 'r.board_source_id', board_name: 'r.board_name',
      company_name: 'r.company_name', company_source_id: 'r.company_source_id',
      project_source_id: 'r.project_source_id', record_type: 'r.record_type',
      linked: bool('EXISTS (SELECT 1 FROM ticket_links l WHERE l.tenant_id = r.tenant_id AND l.connection_id = r.connection_id AND l.ticket_ref = r.source_id)'),
      created_at: time('r.opened_at'), updated_at: time('r.vendor_updated_at'), closed_at: time('r.closed_at'),
    },
  },
  devices: {
    resource: 'devices', table: 'devices', itemsField: 'devices', kind: 'rmm', requiresCapability: false,
    fields: {
      ...OWN, hostname: 'r.hostname',
      company_name: 'r.company_name', company_source_id: 'r.company_source_id', os: 'r.os',
      online: bool('r.online'), needs_attention: bool('r.needs_attention'), patches_pending: num('r.patches_pending'),
      last_contact_at: time('r.last_contact_at'),
    },
  },
  members: {
    resource: 'members', table: 'members', itemsField: 'members', kind: 'psa', requiresCapability: true,
    // A member's `id` is its member ref (what time entries take): a single read accepts it too.
    shownIdColumn: 'member_ref',
    fields: {
      id: 'r.member_ref', display_name: 'r.display_name', active: bool('r.active'), email: 'r.email',
      source: CONNECTOR, source_id: 'r.source_id', connection_id: 'r.connection_id',
    },
  },
  boards: {
    resource: 'boards', table: 'ticket_boards', itemsField: 'ticket_boards', kind: 'psa', requiresCapability: true,
    fields: { id: 'r.source_id', name: 'r.name', active: bool('r.active'), source: CONNECTOR, connection_id: 'r.connection_id' },
  },
  statuses: {
    resource: 'statuses', table: 'ticket_statuses', itemsField: 'ticket_statuses', kind: 'psa', requiresCapability: true,
    fields: {
      id: 'r.source_id', name: 'r.name', board: 'r.board_source_id', closed: bool('r.closed'), canonical: 'r.canonical',
      source: CONNECTOR, connection_id: 'r.connection_id',
    },
  },
  priorities: {
    resource: 'priorities', table: 'ticket_priorities', itemsField: 'ticket_priorities', kind: 'psa', requiresCapability: true,
    fields: { id: 'r.source_id', name: 'r.name', canonical: 'r.canonical', source: CONNECTOR, connection_id: 'r.connection_id' },
  },
  applications: {
    resource: 'applications', table: 'installed_applications', itemsField: 'applications', kind: 'rmm', requiresCapability: false,
    fields: {
      ...OWN, name: 'r.name', publisher: 'r.publisher',
      version: 'r.version', device_source_id: 'r.device_source_id', installed_at: 'r.installed_at',
    },
  },
  incidents: {
    resource: 'incidents', table: 'incidents', itemsField: 'incidents', kind: 'rmm', requiresCapability: false,
    fields: {
      ...OWN, message: 'r.message', severity: 'r.severity',
      device_source_id: 'r.device_source_id', opened_at: time('r.opened_at'),
    },
  },
  contacts: {
    resource: 'contacts', table: 'contacts', itemsField: 'contacts', kind: 'psa', requiresCapability: false, onlyKind: true,
    fields: {
      ...OWN, first_name: 'r.first_name', last_name: 'r.last_name', email: 'r.email', phone: 'r.phone',
      company_name: '(SELECT c.name FROM companies c WHERE c.tenant_id = r.tenant_id AND c.connection_id = r.connection_id AND c.source_id = r.company_source_id LIMIT 1)',
      company_source_id: 'r.company_source_id',
    },
  },
  products: {
    // The PSA catalogue and the distributor's products: `source` says which.
    resource: 'products', table: 'products', itemsField: 'products', kind: 'psa', requiresCapability: false,
    fields: {
      ...OWN, connection_id: 'r.connection_id', name: 'r.name', sku: 'r.sku',
      unit_price: num('r.unit_price'), unit_cost: num('r.unit_cost'), active: bool('r.active'),
    },
  },
  subscriptions: {
    resource: 'subscriptions', table: 'subscriptions', itemsField: 'subscriptions', kind: 'distributor', requiresCapability: false,
    fields: {
      ...OWN, company_source_id: 'r.company_source_id',
      product_source_id: 'r.product_source_id', product_name: 'r.product_name', quantity: num('r.quantity'), price: num('r.price'),
      partner_cost: num('r.partner_cost'), billing_term: 'r.billing_term', status: 'r.status', start_date: 'r.start_date', end_date: 'r.end_date',
    },
  },
  packages: {
    resource: 'packages', table: 'packages', itemsField: 'packages', kind: 'rmm', requiresCapability: true,
    fields: {
      ...OWN, connection_id: 'r.connection_id', name: 'r.name',
      description: 'r.description', operating_systems: json("COALESCE(r.operating_systems, '[]'::jsonb)"), active: bool('r.active'),
    },
  },
  agreements: {
    resource: 'agreements', table: 'agreements', itemsField: 'agreements', kind: 'psa', requiresCapability: true,
    lines: true,
    fields: {
      source: CONNECTOR, source_id: 'r.source_id', name: 'r.name', status: "COALESCE(r.status, 'unknown')",
      billing_cycle: "COALESCE(r.billing_cycle, 'unknown')", company_name: 'r.company_name', company_source_id: 'r.company_source_id',
      start_date: 'r.start_date', end_date: 'r.end_date', monthly_recurring_revenue: num('r.monthly_recurring_revenue'),
    },
  },
  projects: {
    resource: 'projects', table: 'projects', itemsField: 'projects', kind: 'psa', requiresCapability: false,
    fields: {
      ...OWN, connection_id: 'r.connection_id', name: 'r.name',
      status: 'r.status', company_name: 'r.company_name', company_source_id: 'r.company_source_id', baseline: bool('COALESCE(r.baseline, false)'),
    },
  },
} satisfies Record<string, RecordListDef>;

export type RecordListName = keyof typeof RECORD_LISTS;

/** A field as its kind and SQL (a plain string is text). */
function fieldOf(f: Field): Exclude<Field, string> {
  return typeof f === 'string' ? { kind: 'text', sql: f } : f;
}

/**
 * The SQL of each field the store selects (all but the connector), in order. Times are selected as the
 * text of the UTC time (ISO DateStyle, as the driver's own date parsing needs too); `timeText` finishes them.
 */
export function selectedFields(def: RecordListDef): { column: string; sql: string }[] {
  return Object.values(def.fields).map(fieldOf).flatMap((f, i) => {
    if (f.kind === 'connector') return [];
    const sql = f.kind === 'time' ? `(${f.sql} AT TIME ZONE 'UTC')::text` : f.kind === 'json' ? `(${f.sql})::text` : f.sql;
    return [{ column: `f${i}`, sql }];
  });
}

/**
 * The RFC 3339 form toRfc3339 gives a time, from PostgreSQL's text of it in UTC (`YYYY-MM-DD HH:MM:SS`
 * and up to six digits of a second): milliseconds, truncated as a JavaScript Date holds them, none when
 * they are zero.
 */
export function timeText(t: string): string {
  const n = t.length;
  if (n >= 19 && n <= 26 && t.charCodeAt(4) === 45 && t.charCodeAt(10) === 32 && (n === 19 || t.charCodeAt(19) === 46)) {
    const seconds = `${t.slice(0, 10)}T${t.slice(11, 19)}`;
    const ms = n === 19 ? '000' : t.slice(20, 23).padEnd(3, '0');
    return ms === '000' ? `${seconds}Z` : `${seconds}.${ms}Z`;
  }
  // A year past 9999 or before the common era: as a Date writes it.
  const m = /^(\d+)-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?( BC)?$/.exec(t);
  if (!m) throw new Error(`not a timestamp in ISO form: ${t}`);
  const d = new Date(0);
  d.setUTCFullYear(m[8] ? 1 - Number(m[1]) : Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), Number((m[7] ?? '').slice(0, 3).padEnd(3, '0')));
  return toRfc3339(d)!;
}

/** One record as the store selected it (RecordsStore.rows): its keys and payload, and `f<n>` per field. */
export interface RecordRow {
  /** Our id: the page's keyset position. */
  id: string;
  connection_id: string;
  source_id: string;
  /** JSON text of the vendor payload. */
  raw: string;
  /** The UTC time as PostgreSQL writes it (timeText). */
  synced_at: string | null;
  [field: `f${number}`]: unknown;
}

/** What a JSON string must escape (a lone surrogate too, though stored text holds none: it is escaped in store). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
/** JSON of a column value: most text needs no escape and is only quoted. */
const str = (v: unknown) => (v == null ? 'null' : typeof v === 'string' && !NEEDS_ESCAPE.test(v) ? `"${v}"` : JSON.stringify(v));

/**
 * Writes a record of the list as JSON text: its declared fields, then `lines` when the list has them,
 * then `raw`, `synced_at` and `vendor` (the payload text twice, as stored). `connector` is the JSON of
 * the record's connector. Stored text is still escaped (src/sync/stored-text.ts): the caller unescapes.
 */
export function recordWriter(def: RecordListDef): (r: RecordRow, connector: string, lines?: string) => string {
  const parts = Object.entries(def.fields).map(([name, f], i) => {
    const key = `${i === 0 ? '{' : ','}${JSON.stringify(name)}:`;
    const column = `f${i}` as const;
    const field = fieldOf(f);
    switch (field.kind) {
      case 'connector': return (_r: RecordRow, connector: string) => key + connector;
      case 'text': case 'bool': case 'number': return (r: RecordRow) => key + str(r[column]);
      case 'json': return (r: RecordRow) => key + (r[column] == null ? 'null' : r[column] as string);
      case 'time': return (r: RecordRow) => key + (r[column] == null ? 'null' : `"${timeText(r[column] as string)}"`);
    }
  });
  return (r, connector, lines) => {
    let out = '';
    for (const part of parts) out += part(r, connector);
    if (lines !== undefined) out += `,"lines":${lines}`;
    return `${out},"raw":${r.raw},"synced_at":${r.synced_at === null ? 'null' : `"${timeText(r.synced_at)}"`},`
      + `"vendor":{"connector":${connector},"native_id":${JSON.stringify(r.source_id)},"native":${r.raw}}}`;
  };
}

/** An agreement line (read with its connector, `raw` parsed): `vendor` and `raw` carry the same payload, verbatim. */
export function agreementLineToApi(r: Row): Record<string, unknown> {
  return {
    source: r.connector, source_id: r.source_id, agreement_source_id: r.agreement_source_id,
    product_name: r.product_name, product_source_id: r.product_source_id, quantity: r.quantity,
    unit_cost: r.unit_cost, unit_price: r.unit_price, effective_start: r.effective_start,
    effective_end: r.effective_end,
    raw: r.raw, synced_at: toRfc3339(r.synced_at), vendor: { connector: r.connector, native_id: r.source_id, native: r.raw },
  };
}

