/**
 * How each ask resource is read: its table (the same synced table its list read serves), the list
 * whose connections feed it, and the SQL of its label, company, time and filters. The extension point
 * for new resources (charges next): one entry here and one in ASK_RESOURCES.
 */
import type { SyncResource } from '../connectors/types';
import type { RecordListName } from '../records/record-lists';
import type { AskFilters, AskResource } from './ask.schemas';

export interface SqlParams {
  add(value: unknown): string;
}

export interface AskResourceDef {
  list: RecordListName;
  table: string;
  /** Extra join (the device of an application or incident, for its company and hostname). */
  join: string | null;
  /** Sync resources whose last sync is the `as_of` of an answer (the join's too). */
  syncedFrom: SyncResource[];
  label: string;
  company: string;
  /** Column of the time filters; `date` columns hold YYYY-MM-DD text and compare by day. */
  time: { column: string; kind: 'timestamptz' | 'date' } | null;
  newest: string;
  name: string;
  defaultOrder: 'newest' | 'name';
  noun: [string, string];
  filter: Partial<Record<keyof AskFilters, (value: never, p: SqlParams) => string>>;
}

const DEVICE_JOIN = 'LEFT JOIN devices d ON d.tenant_id = r.tenant_id AND d.connection_id = r.connection_id AND d.source_id = r.device_source_id';
const OS_PATTERN: Record<string, string> = { windows: '%windows%', macos: '%mac%', linux: '%(linux|ubuntu|debian|centos|red hat|rhel|fedora|suse)%' };

const contains = (column: string) => (v: string, p: SqlParams) => `${column} ILIKE '%' || ${p.add(v.replace(/[\\%_]/g, '\\$&'))} || '%'`;
const companyIs = (expr: string) => (v: string, p: SqlParams) => `lower(${expr}) = lower(${p.add(v)})`;

export const ASK_RESOURCE_DEFS: Record<AskResource, AskResourceDef> = {
  tickets: {
    list: 'tickets', table: 'tickets', join: null, syncedFrom: ['tickets'],
    label: `'#' || r.source_id || ' ' || r.summary`, company: 'r.company_name',
    time: { column: 'r.opened_at', kind: 'timestamptz' },
    newest: 'r.opened_at', name: 'r.summary', defaultOrder: 'newest', noun: ['ticket', 'tickets'],
    filter: {
      company: companyIs('r.company_name'),
      // Open: neither resolved nor closed; an unmapped status (null) is open.
      status: (v: string, p) => (v === 'open'
        ? `(r.status IS NULL OR r.status NOT IN ('resolved', 'closed'))`
        : `r.status = ${p.add(v)}`),
      priority: (v: string, p) => `r.priority = ${p.add(v)}`,
    },
  },
  devices: {
    list: 'devices', table: 'devices', join: null, syncedFrom: ['devices'],
    label: 'r.hostname', company: 'r.company_name', time: null,
    newest: 'r.last_contact_at', name: 'r.hostname', defaultOrder: 'name', noun: ['device', 'devices'],
    filter: {
      company: companyIs('r.company_name'),
      online: (v: boolean) => (v ? 'r.online = true' : 'r.online = false'),
      needs_attention: (v: boolean) => (v ? 'r.needs_attention = true' : 'r.needs_attention = false'),
      patches_pending: (v: boolean) => (v ? 'r.patches_pending > 0' : 'r.patches_pending = 0'),
      os: (v: string, p) => (v === 'linux' ? `lower(r.os) SIMILAR TO ${p.add(OS_PATTERN[v])}` : `r.os ILIKE ${p.add(OS_PATTERN[v])}`),
    },
  },
  applications: {
    list: 'applications', table: 'installed_applications', join: DEVICE_JOIN, syncedFrom: ['applications', 'devices'],
    label: `r.name || COALESCE(' ' || r.version, '') || ' on ' || COALESCE(d.hostname, 'device ' || r.device_source_id)`,
    company: 'd.company_name', time: { column: 'r.installed_at', kind: 'date' },
    newest: 'r.installed_at', name: 'r.name', defaultOrder: 'name', noun: ['application installation', 'application installations'],
    filter: { company: companyIs('d.company_name'), name: contains('r.name') },
  },
  incidents: {
    list: 'incidents', table: 'incidents', join: DEVICE_JOIN, syncedFrom: ['incidents', 'devices'],
    label: `r.message`, company: 'd.company_name', time: { column: 'r.opened_at', kind: 'timestamptz' },
    newest: 'r.opened_at', name: 'r.message', defaultOrder: 'newest', noun: ['incident', 'incidents'],
    filter: { company: companyIs('d.company_name') },
  },
  agreements: {
    list: 'agreements', table: 'agreements', join: null, syncedFrom: ['agreements'],
    label: `r.name || COALESCE(' (' || r.company_name || ')', '')`, company: 'r.company_name',
    time: { column: 'r.start_date', kind: 'date' },
    newest: 'r.start_date', name: 'r.name', defaultOrder: 'name', noun: ['agreement', 'agreements'],
    filter: {
      company: companyIs('r.company_name'),
      agreement_status: (v: string, p) => `r.status = ${p.add(v)}`,
      name: contains('r.name'),
    },
  },
};
