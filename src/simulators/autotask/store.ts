/**
 * In-memory state of one Autotask database (an "instance"): a table per entity, ordered by id
 * (Autotask pages by id), and the instance's field information (picklists differ per database).
 */
import { defaultFields, ENTITIES, mergeFields, type EntityName, type FieldInfo } from './fields';

export type Row = Record<string, unknown> & { id: number };

/** An Autotask refusal: the status and the `{errors: [...]}` body Autotask answers with. */
export class AutotaskError extends Error {
  constructor(readonly status: number, readonly errors: string[], readonly headers: Record<string, string> = {}) {
    super(errors.join('; '));
    this.name = 'AutotaskError';
  }
}

/** Rows of one entity, kept sorted by id so that id-keyed paging is a binary search. */
export class Table {
  private rows: Row[] = [];
  private byId = new Map<number, Row>();
  private maxId = 0;

  constructor(readonly firstId: number) {}

  get size(): number {
    return this.rows.length;
  }
  all(): readonly Row[] {
    return this.rows;
  }
  get(id: number): Row | undefined {
    return this.byId.get(id);
  }
  nextId(): number {
    return Math.max(this.maxId + 1, this.firstId);
  }
  /** Appends rows; keeps id order even when a seed lists them unordered. */
  insertMany(rows: Row[]): void {
    let ordered = true;
    for (const row of rows) {
      if (this.byId.has(row.id)) throw new Error(`duplicate id ${row.id}`);
      if (this.rows.length && row.id < this.rows[this.rows.length - 1].id) ordered = false;
      this.rows.push(row);
      this.byId.set(row.id, row);
      if (row.id > this.maxId) this.maxId = row.id;
    }
    if (!ordered) this.rows.sort((a, b) => a.id - b.id);
  }
  insert(row: Row): void {
    this.insertMany([row]);
  }
  /** Index of the first row whose id is greater than `afterId`. */
  indexAfter(afterId: number): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.rows[mid].id <= afterId) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Where new ids start per entity: Autotask ids are large integers; distinct ranges help reading. */
const FIRST_IDS: Record<EntityName, number> = {
  Tickets: 7_000, TicketNotes: 30_000, TimeEntries: 50_000, Resources: 29_682_885, Roles: 29_683_400,
  BillingCodes: 29_682_800, Companies: 0, Contacts: 30_682_000, Contracts: 29_684_000,
  ContractServices: 29_684_500, ContractServiceUnits: 29_690_000, Projects: 29_685_000, Services: 29_686_000,
  ContractServiceAdjustments: 29_695_000, ProjectNotes: 29_687_000, Tasks: 29_688_000,
};

export class InstanceState {
  readonly tables = new Map<EntityName, Table>();
  private fieldOverrides = new Map<EntityName, FieldInfo[]>();
  private fieldCache = new Map<EntityName, FieldInfo[]>();
  private templates = new Map<EntityName, Record<string, null>>();
  /** Ticket numbers are T<yyyymmdd>.<nnnn>; the counter runs per day. */
  ticketNumberSeq = new Map<string, number>();

  constructor(readonly name: string) {
    for (const e of ENTITIES) this.tables.set(e, new Table(FIRST_IDS[e]));
  }

  table(entity: EntityName): Table {
    return this.tables.get(entity)!;
  }

  setFieldOverrides(entity: EntityName, fields: FieldInfo[]): void {
    this.fieldOverrides.set(entity, fields);
    this.fieldCache.delete(entity);
    this.templates.delete(entity);
  }

  /** The field information the instance was seeded with, per entity (the built-in fields are not repeated). */
  overrides(): ReadonlyMap<EntityName, FieldInfo[]> {
    return this.fieldOverrides;
  }

  fields(entity: EntityName): FieldInfo[] {
    let f = this.fieldCache.get(entity);
    if (!f) {
      f = mergeFields(defaultFields()[entity], this.fieldOverrides.get(entity));
      this.fieldCache.set(entity, f);
    }
    return f;
  }

  /** The field of that name (Autotask field names are case-insensitive). */
  field(entity: EntityName, name: string): FieldInfo | undefined {
    const n = name.toLowerCase();
    return this.fields(entity).find((f) => f.name.toLowerCase() === n);
  }

  /** A row with every field of the entity present (null when unset), as Autotask returns them. */
  normalize(entity: EntityName, record: Record<string, unknown>): Row {
    // Copying a template keeps rows in V8's fast object layout (grow builds 50,000 of them).
    let template = this.templates.get(entity);
    if (!template) {
      template = Object.fromEntries(this.fields(entity).map((f) => [f.name, null]));
      this.templates.set(entity, template);
    }
    const row: Record<string, unknown> = { ...template };
    for (const k in record) {
      const v = record[k];
      if (v !== undefined) row[k] = v;
    }
    if (!Array.isArray(row.userDefinedFields)) row.userDefinedFields = [];
    return row as Row;
  }

  nextTicketNumber(at: Date): string {
    const day = at.toISOString().slice(0, 10).replace(/-/g, '');
    const n = (this.ticketNumberSeq.get(day) ?? 0) + 1;
    this.ticketNumberSeq.set(day, n);
    return `T${day}.${String(n).padStart(4, '0')}`;
  }
}

/** The entity a path segment names (Autotask paths are case-insensitive), or undefined. */
export function entityFromPath(segment: string): EntityName | undefined {
  const s = segment.toLowerCase();
  return ENTITIES.find((e) => e.toLowerCase() === s);
}

export function clone<T>(value: T): T {
  return structuredClone(value);
}
