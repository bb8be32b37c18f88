/**
 * In-memory state of the Kaseya BMS simulator: one dataset per instance (the tenant the user signs in
 * to), one table per resource, records kept in BMS API 2.0's output shapes (TicketOutputDto,
 * AccountSummaryOutputDto, ...). Notes and time logs carry their ticket's id in `TicketId`, which the
 * API does not answer (the simulator strips it, see routes.ts).
 */

/** A record in BMS's JSON shape. Native payloads are open-ended, hence `any`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BmsRecord = Record<string, any>;

/** Seed keys (fixture file names) the simulator knows. */
export const BMS_RESOURCES = [
  'statuses', 'priorities', 'queues', 'worktypes', 'roles', 'tickettypes', 'sources', 'employees', 'accounts',
  'contacts', 'tickets', 'notes', 'timelogs', 'contracts', 'services', 'recurring_services', 'projects',
] as const;
export type BmsResource = (typeof BMS_RESOURCES)[number];

export function isBmsResource(name: string): name is BmsResource {
  return (BMS_RESOURCES as readonly string[]).includes(name);
}

/** Where each resource keeps its last-change time (what the incremental filters compare). */
export const CHANGE_FIELD: Partial<Record<BmsResource, string>> = {
  tickets: 'LastActivityUpdate', accounts: 'ModifiedOn', contacts: 'ModifiedOn', notes: 'ModifiedOn', timelogs: 'ModifiedOn',
};

/** BMS times: ISO 8601 UTC (`2026-11-02T09:15:00.123Z`). */
export function bmsTime(d: Date): string {
  return d.toISOString();
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}

export class BmsInstance {
  /** The vendor clock's next stamp (the simulator gives each instance its monotonic clock). */
  stamp: () => string = () => bmsTime(new Date());
  private readonly tables = new Map<BmsResource, BmsRecord[]>();
  private readonly lastIds = new Map<BmsResource, number>();

  table(resource: BmsResource): BmsRecord[] {
    let t = this.tables.get(resource);
    if (!t) this.tables.set(resource, (t = []));
    return t;
  }

  get(resource: BmsResource, id: unknown): BmsRecord | undefined {
    const n = Number(id);
    return Number.isInteger(n) ? this.table(resource).find((r) => r.Id === n) : undefined;
  }

  insert(resource: BmsResource, rec: BmsRecord): BmsRecord {
    const rows = this.table(resource);
    rows.push(rec);
    rows.sort((a, b) => a.Id - b.Id);
    const last = this.lastIds.get(resource);
    if (last !== undefined && typeof rec.Id === 'number' && rec.Id > last) this.lastIds.set(resource, rec.Id);
    return rec;
  }

  nextId(resource: BmsResource): number {
    const last = this.lastIds.get(resource) ?? Math.max(0, ...this.table(resource).map((r) => Number(r.Id) || 0));
    this.lastIds.set(resource, last + 1);
    return last + 1;
  }

  reserveAbove(resource: BmsResource, above: number): void {
    const last = this.nextId(resource) - 1;
    this.lastIds.set(resource, Math.max(last, above));
  }

  tableRows(): Record<string, readonly BmsRecord[]> {
    return Object.fromEntries(this.tables);
  }

  issued(): Record<string, number> {
    return Object.fromEntries(this.lastIds);
  }
}
