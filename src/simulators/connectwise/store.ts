/**
 * In-memory state of the ConnectWise simulator: one dataset per instance (the companyId the
 * credentials carry), one table per resource, records kept in their native ConnectWise shape.
 */

/** A record in ConnectWise's native JSON shape. Native payloads are open-ended, hence `any`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CwRecord = Record<string, any>;

/** Seed keys (fixture file names) the simulator knows. Child resources carry their parent's id. */
export const CW_RESOURCES = [
  'boards', 'statuses', 'priorities', 'members', 'companies', 'contacts', 'tickets', 'ticket_notes',
  'projects', 'project_phases', 'project_notes', 'project_tickets', 'agreements', 'additions', 'time_entries', 'catalog',
] as const;

/** Service and project tickets (and their notes) are one table in ConnectWise, so they share one id sequence. */
const ID_SPACE: Partial<Record<string, string>> = { project_tickets: 'tickets', project_ticket_notes: 'ticket_notes' };

/** ConnectWise timestamps: UTC, second precision, `Z` suffix (`2026-03-04T15:20:11Z`). */
export function cwTime(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Rows in id order plus an id index; ids only grow, so appends keep the order. */
export class Table {
  readonly rows: CwRecord[] = [];
  private readonly byId = new Map<number, CwRecord>();

  insert(rec: CwRecord): void {
    const last = this.rows[this.rows.length - 1];
    this.rows.push(rec);
    this.byId.set(rec.id, rec);
    if (last && last.id > rec.id) this.rows.sort((a, b) => a.id - b.id);
  }
  get(id: number): CwRecord | undefined {
    return this.byId.get(id);
  }
  get size(): number {
    return this.rows.length;
  }
  /** Removes a record; its id stays used (the instance's sequence never goes back). */
  remove(id: number): boolean {
    const rec = this.byId.get(id);
    if (!rec) return false;
    this.byId.delete(id);
    this.rows.splice(this.rows.indexOf(rec), 1);
    return true;
  }
}

export class Instance {
  private readonly tables = new Map<string, Table>();
  private readonly nextIds = new Map<string, number>();

  table(resource: string): Table {
    let t = this.tables.get(resource);
    if (!t) {
      t = new Table();
      this.tables.set(resource, t);
    }
    return t;
  }

  /** Next free id in the resource's id space (above every id seeded or created so far). */
  nextId(resource: string): number {
    const space = ID_SPACE[resource] ?? resource;
    const id = this.nextIds.get(space) ?? 1;
    this.nextIds.set(space, id + 1);
    return id;
  }

  /** The resource's id space issues only ids above `above` from now on. */
  reserveAbove(resource: string, above: number): void {
    const space = ID_SPACE[resource] ?? resource;
    this.nextIds.set(space, Math.max(this.nextIds.get(space) ?? 1, above + 1));
  }

  /** Every table's rows (the live records: the caller copies them). */
  tableRows(): Record<string, readonly CwRecord[]> {
    return Object.fromEntries([...this.tables].map(([r, t]) => [r, t.rows]));
  }

  /** Per id space, the highest id issued so far. */
  issued(): Record<string, number> {
    return Object.fromEntries([...this.nextIds].map(([space, next]) => [space, next - 1]));
  }

  /** Inserts a record that already has an id, keeping the id sequence above it. */
  insert(resource: string, rec: CwRecord): CwRecord {
    const space = ID_SPACE[resource] ?? resource;
    if (typeof rec.id !== 'number') rec.id = this.nextId(resource);
    this.nextIds.set(space, Math.max(this.nextIds.get(space) ?? 1, rec.id + 1));
    this.table(resource).insert(rec);
    return rec;
  }
}

// ---- Reference objects, as ConnectWise embeds them in other records ----

const API_PATH = '/v4_6_release/apis/3.0';
const href = (path: string) => `${API_PATH}${path}`;

export function boardRef(b: CwRecord): CwRecord {
  return { id: b.id, name: b.name, _info: { board_href: href(`/service/boards/${b.id}`) } };
}
export function statusRef(s: CwRecord): CwRecord {
  return { id: s.id, name: s.name, sort: s.sortOrder, _info: { status_href: href(`/service/boards/${s.board.id}/statuses/${s.id}`) } };
}
export function priorityRef(p: CwRecord): CwRecord {
  return {
    id: p.id, name: p.name, sort: p.sortOrder,
    _info: { priority_href: href(`/service/priorities/${p.id}`), image_href: href(`/service/priorities/${p.id}/image?lm=2025-01-06T15:00:00Z`) },
  };
}
export function companyRef(c: CwRecord): CwRecord {
  return { id: c.id, identifier: c.identifier, name: c.name, _info: { company_href: href(`/company/companies/${c.id}`) } };
}
export function contactRef(c: CwRecord): CwRecord {
  return { id: c.id, name: `${c.firstName} ${c.lastName}`, _info: { contact_href: href(`/company/contacts/${c.id}`) } };
}
export function memberRef(m: CwRecord): CwRecord {
  return { id: m.id, identifier: m.identifier, name: `${m.firstName} ${m.lastName}`, _info: { member_href: href(`/system/members/${m.id}`) } };
}
export function projectRef(p: CwRecord): CwRecord {
  return { id: p.id, name: p.name, _info: { project_href: href(`/project/projects/${p.id}`) } };
}
export function phaseRef(ph: CwRecord): CwRecord {
  return { id: ph.id, name: ph.description, _info: { phase_href: href(`/project/projects/${ph.projectId}/phases/${ph.id}`) } };
}
export function ticketRef(t: CwRecord): CwRecord {
  return { id: t.id, summary: t.summary, _info: { ticket_href: href(`/service/tickets/${t.id}`) } };
}
