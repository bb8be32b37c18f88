/**
 * The SQL of the sync's record tables (docs/architecture.md, Sync): each resource's table plan (its
 * statements, built once from the entity's columns), and the statements of a page's compare, read, upsert,
 * settled stamp and quarantine, and of the deletion pass. The rules of what to write live in
 * record-writer.ts and deletions.ts; here only how it is read and written.
 */
import type { DataSource, EntityManager, EntityTarget } from 'typeorm';
import {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord, IncidentRecord,
  InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProductRecord, ProjectRecord, StatusRecord, SubscriptionRecord,
  TicketRecord,
} from '../../entities';
import type { SyncResource } from '../connectors/types';

export const ENTITY_BY_RESOURCE: Record<SyncResource, EntityTarget<object>> = {
  tickets: TicketRecord, companies: CompanyRecord, contacts: ContactRecord, members: MemberRecord,
  boards: BoardRecord, statuses: StatusRecord, priorities: PriorityRecord, devices: DeviceRecord,
  applications: InstalledApplicationRecord, incidents: IncidentRecord, agreements: AgreementRecord,
  agreement_lines: AgreementLineRecord, projects: ProjectRecord, products: ProductRecord,
  subscriptions: SubscriptionRecord, packages: PackageRecord,
};

/** Columns the writer fills itself rather than from the connector's fields. */
const OWN_COLUMNS = new Set(['tenantId', 'connectionId', 'sourceId', 'raw', 'rawHash', 'vendorUpdatedAt', 'syncedAt']);

/**
 * The stored rows of a connection's `table` whose source ids are `$3` (with `$1` tenant, `$2` connection),
 * as `t`: one probe of the unique index per id, whatever the planner knows of the table. (Written as
 * `source_id = ANY($3)`, a table with no statistics yet, just after its first sync filled it, was read
 * whole for every page: the planner took the tenant for three rows.) With `withHash`, `$4` pairs each id
 * with its fetched payload's hash, as `k.hash`.
 */
function storedByIds(table: string, columns: string, withHash = false): string {
  const keys = withHash ? 'unnest($3::text[], $4::text[]) AS k(source_id, hash)' : 'unnest($3::text[]) AS k(source_id)';
  return `${keys} CROSS JOIN LATERAL (SELECT ${columns} FROM "${table}" ` +
    'WHERE tenant_id = $1 AND connection_id = $2 AND source_id = k.source_id LIMIT 1) t';
}

export interface TablePlan {
  table: string;
  columns: { db: string; prop: string; sqlType: string }[];
  byProp: Map<string, { db: string; prop: string }>;
  /** The columns filled from the connector's fields, in the order of a row's values after its own three. */
  fieldColumns: { db: string; prop: string }[];
  /** The columns read back before a write, with the row's version: every one but `raw`, which comes only where the payload moved. */
  selectSql: string;
  /** selectSql, and whether the connection stores a record of the resource outside the page (`beyond_page`). */
  quietSelectSql: string;
  /** compareStored's read: per source id ($3) with its fetched hash ($4), the row as selectSql reads it, `raw` where the hash moved. */
  compareSql: string;
  insertSql: string;
}

export interface StoredRow {
  id: string;
  source_id: string;
  raw_hash: string;
  /** The row's version as read (`xmin` as text): the upsert overwrites the row only while it is still this one. */
  row_version?: string;
  [column: string]: unknown;
}

const QUARANTINE_SQL =
  'INSERT INTO sync_quarantine (tenant_id, connection_id, resource, source_id, error, payload) VALUES ($1, $2, $3, $4, $5, $6) ' +
  'ON CONFLICT (connection_id, resource, source_id) DO UPDATE SET error = EXCLUDED.error, payload = EXCLUDED.payload, ' +
  'attempts = sync_quarantine.attempts + 1, updated_at = now()';

/** A page's scope: the connection whose rows it reads and writes. */
export interface RowScope { tenantId: string; connectionId: string }

export class SyncRecordsStore {
  private readonly plans = new Map<SyncResource, TablePlan>();

  constructor(private readonly ds: DataSource) {}

  plan(resource: SyncResource): TablePlan {
    let p = this.plans.get(resource);
    if (p) return p;
    const meta = this.ds.getMetadata(ENTITY_BY_RESOURCE[resource]);
    const columns = meta.columns
      .filter((c) => !c.isPrimary)
      .map((c) => ({ db: c.databaseName, prop: c.propertyName, sqlType: String(c.type) }));
    const table = meta.tableName;
    const fieldColumns = columns.filter((c) => !OWN_COLUMNS.has(c.prop)).map((c) => ({ db: c.db, prop: c.prop, sqlType: c.sqlType }));
    // A row is two JSON texts: its values as an array ($1: source id, payload hash, vendor stamp, then the
    // field columns) and its payload ($2, the n-th of an array as the n-th row); what every row of the page
    // shares goes once ($3 tenant, $4 connection, $5 synced at). Arrays of plain values are the cheapest JSON
    // to write here and to take apart there (an object per row repeated every key, on both sides).
    const value = (k: number, sqlType: string) => (sqlType === 'jsonb' ? `NULLIF(v->${k}, 'null')` : `(v->>${k})::${sqlType}`);
    const own: [string, string][] = [
      ['tenant_id', '$3::uuid'], ['connection_id', '$4::uuid'], ['synced_at', '$5::timestamptz'],
      ['source_id', value(0, 'text')], ['raw_hash', value(1, 'text')], ['vendor_updated_at', value(2, 'timestamptz')], ['raw', 'r'],
    ];
    const targets = [...own.map(([db]) => db), ...fieldColumns.map((c) => c.db)];
    const sources = [...own.map(([, sql]) => sql), ...fieldColumns.map((c, i) => value(3 + i, c.sqlType))];
    if (targets.length !== columns.length) throw new Error(`record-writer: ${table} has columns the writer does not fill`);
    const updates = columns.filter((c) => !['tenant_id', 'connection_id', 'source_id'].includes(c.db))
      .map((c) => `"${c.db}" = EXCLUDED."${c.db}"`).join(', ');
    // $6 resource: the rows written leave quarantine (fixed at the vendor, or we learned to store them).
    // $7 maps each source id to the version of its row that was read: a row that is another version now (or
    // was not read at all) is not overwritten and not returned; null writes every row.
    const insertSql =
      `WITH written AS (INSERT INTO "${table}" (${targets.map((c) => `"${c}"`).join(', ')}) SELECT ${sources.join(', ')} ` +
      'FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS a(v, i) JOIN jsonb_array_elements($2::jsonb) WITH ORDINALITY AS b(r, i) USING (i) ' +
      `ON CONFLICT (tenant_id, connection_id, source_id) DO UPDATE SET ${updates} ` +
      `WHERE $7::jsonb IS NULL OR "${table}".xmin::text = ($7::jsonb ->> "${table}".source_id) RETURNING id, source_id), ` +
      'released AS (DELETE FROM sync_quarantine q USING written w WHERE q.connection_id = $4::uuid AND q.resource = $6 AND q.source_id = w.source_id) ' +
      'SELECT id, source_id FROM written';
    const selected = ['id', ...columns.map((c) => c.db).filter((c) => c !== 'raw')].map((c) => `t."${c}"`).join(', ');
    const versioned = `*, xmin::text AS row_version`;
    const selectSql = `SELECT ${selected}, t.row_version, CASE WHEN t.raw_hash = ANY($4::text[]) THEN NULL ELSE t.raw END AS raw FROM ${storedByIds(table, versioned)}`;
    // An uncorrelated subquery: evaluated once for the statement, not per row.
    const quietSelectSql = `SELECT ${selected}, t.row_version, CASE WHEN t.raw_hash = ANY($4::text[]) THEN NULL ELSE t.raw END AS raw, ` +
      `EXISTS (SELECT 1 FROM "${table}" o WHERE o.tenant_id = $1 AND o.connection_id = $2 AND NOT (o.source_id = ANY($3::text[]))) AS beyond_page ` +
      `FROM ${storedByIds(table, versioned)}`;
    // The whole row, as selectSql reads it, for the page's write that follows (comparedRows).
    const compareSql = `SELECT ${selected}, t.row_version, CASE WHEN t.raw_hash = k.hash THEN NULL ELSE t.raw END AS raw ` +
      `FROM ${storedByIds(table, versioned, true)}`;
    p = { table, columns, byProp: new Map(columns.map((c) => [c.prop, c])), fieldColumns, selectSql, quietSelectSql, compareSql, insertSql };
    this.plans.set(resource, p);
    return p;
  }

  /** compareStored's read (TablePlan.compareSql), outside any transaction: per source id with its fetched hash. */
  compare<Row>(resource: SyncResource, scope: RowScope, sourceIds: string[], hashes: string[]): Promise<Row[]> {
    return this.ds.query(this.plan(resource).compareSql, [scope.tenantId, scope.connectionId, sourceIds, hashes]);
  }

  /** The stored rows of `sourceIds` (with `quiet`, quietSelectSql's), a payload only where its hash is none of `fetchedHashes`. */
  readStored(manager: EntityManager, plan: TablePlan, scope: RowScope, sourceIds: string[], fetchedHashes: string[], quiet: boolean): Promise<StoredRow[]> {
    return manager.query(quiet ? plan.quietSelectSql : plan.selectSql, [scope.tenantId, scope.connectionId, sourceIds, fetchedHashes]);
  }

  /** Rows read again unchanged past their stamp's second: stamped with this sync's start. */
  async stampSynced(manager: EntityManager, plan: TablePlan, syncedAt: Date, ids: string[]): Promise<void> {
    await manager.query(`UPDATE "${plan.table}" SET synced_at = $1 WHERE id = ANY($2::uuid[])`, [syncedAt, ids]);
  }

  /** The page's upsert (TablePlan.insertSql): the ids and source ids of the rows it wrote. */
  upsert(
    manager: EntityManager, plan: TablePlan, texts: { values: string; payloads: string }, scope: RowScope, syncedAt: Date, resource: SyncResource, versions: string | null,
  ): Promise<{ id: string; source_id: string }[]> {
    return manager.query(plan.insertSql, [texts.values, texts.payloads, scope.tenantId, scope.connectionId, syncedAt, resource, versions]);
  }

  /** A record the store refused, kept in sync_quarantine (its attempts counted). */
  async quarantine(manager: EntityManager, scope: RowScope, resource: SyncResource, sourceId: string, error: string, payload: string): Promise<void> {
    await manager.query(QUARANTINE_SQL, [scope.tenantId, scope.connectionId, resource, sourceId, error, payload]);
  }

  /** Runs one statement under a savepoint, so that its failure leaves the page's transaction usable. */
  async inSavepoint<T>(manager: EntityManager, run: () => Promise<T>): Promise<T> {
    await manager.query('SAVEPOINT record_writer');
    try {
      const out = await run();
      await manager.query('RELEASE SAVEPOINT record_writer');
      return out;
    } catch (err) {
      await manager.query('ROLLBACK TO SAVEPOINT record_writer');
      await manager.query('RELEASE SAVEPOINT record_writer');
      throw err;
    }
  }

  /** Whether any stored record of the resource is missing from `present` (removeVanished would remove something). */
  async anyVanished(manager: EntityManager, resource: SyncResource, scope: RowScope, present: Set<string>): Promise<boolean> {
    const { table } = this.plan(resource);
    const [row]: { vanished: boolean }[] = await manager.query(
      `SELECT EXISTS (SELECT 1 FROM "${table}" WHERE tenant_id = $1 AND connection_id = $2 AND NOT (source_id = ANY($3::text[]))) AS vanished`,
      [scope.tenantId, scope.connectionId, [...present]],
    );
    return row?.vanished === true;
  }

  /**
   * Removes the connection's rows of `resource` whose source id is not in `present`, inside the caller's
   * transaction, and answers what was removed (the rows as they were) for the deletion events.
   */
  removeVanished(manager: EntityManager, resource: SyncResource, scope: RowScope, present: Set<string>): Promise<StoredRow[]> {
    const { table } = this.plan(resource);
    return manager.query(
      `DELETE FROM "${table}" WHERE tenant_id = $1 AND connection_id = $2 AND NOT (source_id = ANY($3::text[])) RETURNING *`,
      [scope.tenantId, scope.connectionId, [...present]],
    ).then((r: StoredRow[] | [StoredRow[], number]) => (Array.isArray(r[0]) ? (r[0] as StoredRow[]) : (r as StoredRow[])));
  }
}
