/**
 * In-memory state of the HaloPSA simulator: one dataset per instance (the dataset the client id
 * selects), one table per resource, records kept in Halo's native JSON shape.
 */

/** A record in Halo's native JSON shape. Native payloads are open-ended, hence `any`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HaloRecord = Record<string, any>;

/** Seed keys (fixture file names) the simulator knows. */
export const HALO_RESOURCES = [
  'teams', 'statuses', 'priorities', 'agents', 'clients', 'users', 'tickets', 'projects', 'actions',
  'contracts', 'recurring_invoices', 'items',
] as const;
export type HaloResource = (typeof HALO_RESOURCES)[number];

export function isHaloResource(name: string): name is HaloResource {
  return (HALO_RESOURCES as readonly string[]).includes(name);
}

/** Where each resource keeps its last-updated time, under Halo's own field names. */
export const LAST_UPDATE_FIELD: Partial<Record<HaloResource, string>> = {
  tickets: 'last_update',
  projects: 'last_update',
  clients: 'alastupdate',
  users: 'ulastupdate',
  agents: 'last_modified',
  teams: 'last_modified',
  contracts: 'last_modified',
  recurring_invoices: 'last_modified',
  items: 'lastmodified',
};

/** Halo's built-in Closed status; the only status that closes a ticket. */
export const HALO_CLOSED_STATUS_ID = 9;

/** Tickets and projects are one table (Faults) in Halo, so they share one id sequence. */
const ID_SPACE: Partial<Record<HaloResource, HaloResource>> = { projects: 'tickets' };

/** Halo times: UTC with no zone suffix (`2026-11-02T09:15:00.123`). */
export function haloTime(d: Date): string {
  return d.toISOString().slice(0, 23);
}

/** Parses a Halo time; one without a zone is UTC (that is what Halo sends). Null when unparseable. */
export function parseHaloTime(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const iso = hasZone || !value.includes('T') ? value : `${value}Z`;
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(iso) ? `${iso}T00:00:00Z` : iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Rows in id order plus an id index; new ids only grow, so appends keep the order. */
export class Table {
  readonly rows: HaloRecord[] = [];
  private readonly byId = new Map<string, HaloRecord>();

  insert(rec: HaloRecord): void {
    const last = this.rows[this.rows.length - 1];
    this.rows.push(rec);
    this.byId.set(String(rec.id), rec);
    if (last && typeof rec.id === 'number' && last.id > rec.id) this.rows.sort((a, b) => a.id - b.id);
  }
  get(id: string | number): HaloRecord | undefined {
    return this.byId.get(String(id));
  }
  maxNumericId(): number {
    let max = 0;
    for (const r of this.rows) if (typeof r.id === 'number' && r.id > max) max = r.id;
    return max;
  }
}

export class HaloInstance {
  private readonly tables = new Map<HaloResource, Table>();
  private readonly lastIds = new Map<HaloResource, number>();

  table(resource: HaloResource): Table {
    let t = this.tables.get(resource);
    if (!t) {
      t = new Table();
      this.tables.set(resource, t);
    }
    return t;
  }

  /** The next free id of a resource's id space. */
  nextId(resource: HaloResource): number {
    const space = ID_SPACE[resource] ?? resource;
    let last = this.lastIds.get(space);
    if (last === undefined) {
      const members = HALO_RESOURCES.filter((r) => (ID_SPACE[r] ?? r) === space);
      last = Math.max(0, ...members.map((r) => this.table(r).maxNumericId()));
    }
    this.lastIds.set(space, last + 1);
    return last + 1;
  }

  /** Every table's rows (the live records: the caller copies them). */
  tableRows(): Record<string, readonly HaloRecord[]> {
    return Object.fromEntries([...this.tables].map(([r, t]) => [r, t.rows]));
  }

  /** Per id space, the highest id issued so far (spaces that issued none are left out: their rows say it). */
  issued(): Record<string, number> {
    return Object.fromEntries(this.lastIds);
  }

  /** Inserts a record, keeping the id sequence past any id the record brought with it. */
  insert(resource: HaloResource, rec: HaloRecord): void {
    this.table(resource).insert(rec);
    const space = ID_SPACE[resource] ?? resource;
    const last = this.lastIds.get(space);
    if (last !== undefined && typeof rec.id === 'number' && rec.id > last) this.lastIds.set(space, rec.id);
  }

  /** The resource's id space issues only ids above `above` from now on. */
  reserveAbove(resource: HaloResource, above: number): void {
    const last = this.nextId(resource) - 1;
    this.lastIds.set(ID_SPACE[resource] ?? resource, Math.max(last, above));
  }

  /** Reserve `count` consecutive ids at once (bulk growth). Returns the first. */
  reserveIds(resource: HaloResource, count: number): number {
    const first = this.nextId(resource);
    const space = ID_SPACE[resource] ?? resource;
    this.lastIds.set(space, first + count - 1);
    return first;
  }

  /** A ticket or a project: both are Faults in Halo and take actions. */
  fault(id: number): { resource: 'tickets' | 'projects'; record: HaloRecord } | undefined {
    const t = this.table('tickets').get(id);
    if (t) return { resource: 'tickets', record: t };
    const p = this.table('projects').get(id);
    return p ? { resource: 'projects', record: p } : undefined;
  }
}
