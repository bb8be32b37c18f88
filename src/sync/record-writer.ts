/**
 * Batched upsert of one vendor page into its table: one SELECT of what is stored, one
 * INSERT .. SELECT FROM jsonb_to_recordset(..) ON CONFLICT for what changed. Unchanged records (same
 * payload hash) are not written at all, which keeps incremental and repeated syncs cheap and gives
 * change detection the before/after it needs.
 *
 * What is written is the record in stored form (stored-text.ts: text PostgreSQL cannot hold escaped,
 * losslessly), and listeners see that same form, so hashes and before/after compare like with like.
 * A page the store refuses is retried record by record; a record refused on its own is quarantined
 * (sync_quarantine) and the rest of the page is written.
 */
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager, EntityTarget } from 'typeorm';
import {
  AgreementLineRecord, AgreementRecord, BoardRecord, CompanyRecord, ContactRecord, DeviceRecord, IncidentRecord,
  InstalledApplicationRecord, MemberRecord, PackageRecord, PriorityRecord, ProductRecord, ProjectRecord, StatusRecord, SubscriptionRecord,
  TicketRecord,
} from '../../entities';
import type { FetchedRecord, StoredComparison, SyncResource } from '../connectors/types';
import { escapeStored, escapeStoredText } from './stored-text';
import { sameJson } from '../shared/same-json';

export const ENTITY_BY_RESOURCE: Record<SyncResource, EntityTarget<object>> = {
  tickets: TicketRecord, companies: CompanyRecord, contacts: ContactRecord, members: MemberRecord,
  boards: BoardRecord, statuses: StatusRecord, priorities: PriorityRecord, devices: DeviceRecord,
  applications: InstalledApplicationRecord, incidents: IncidentRecord, agreements: AgreementRecord,
  agreement_lines: AgreementLineRecord, projects: ProjectRecord, products: ProductRecord,
  subscriptions: SubscriptionRecord, packages: PackageRecord,
};

interface TablePlan {
  table: string;
  columns: { db: string; prop: string; sqlType: string }[];
  insertSql: string;
}

export interface StoredRow {
  id: string;
  source_id: string;
  raw_hash: string;
  [column: string]: unknown;
}

export interface PageWriteResult {
  created: { record: FetchedRecord; id: string }[];
  /** `measuredChanged`: the payload is the stored one but a measured field (FetchedRecord.measured) moved. */
  updated: { record: FetchedRecord; id: string; before: StoredRow; measuredChanged?: boolean }[];
  unchanged: number;
  /** Records the store refused, kept in sync_quarantine (source id and error in stored form). */
  quarantined?: { sourceId: string; error: string }[];
  /** Rows the vendor no longer lists, removed by the deletion pass (deletions.ts), as they were stored. */
  deleted?: StoredRow[];
}

export function payloadHash(native: unknown): string {
  return createHash('sha256').update(JSON.stringify(native)).digest('hex');
}

/** Whether a field the connector measured (FetchedRecord.measured) differs from the stored column. */
function measuredChanged(columns: readonly { db: string; prop: string }[], record: FetchedRecord, row: StoredRow): boolean {
  if (!record.measured) return false;
  const fields = record.fields as unknown as Record<string, unknown>;
  return record.measured.some((prop) => {
    const column = columns.find((c) => c.prop === prop);
    return column !== undefined && String(row[column.db] ?? null) !== String(fields[prop] ?? null);
  });
}

/**
 * How long after a record's vendor stamp its sync must have begun for the stored copy to rule out a
 * same-second change: one second for the whole-second stamp, one for clock skew between us and the vendor.
 */
export const SETTLED_AFTER_MS = 2_000;

/** The one settled rule: a copy stored by a sync begun at `syncedAt` rules out a change in its stamp's second. */
function settled(syncedAt: unknown, vendorUpdatedAt: unknown): boolean {
  if (syncedAt == null || vendorUpdatedAt == null) return false;
  return new Date(syncedAt as string | Date).getTime() >= new Date(vendorUpdatedAt as string | Date).getTime() + SETTLED_AFTER_MS;
}

/** JSON text that may hold an escape stored-text.ts rewrites: \u0000, a \udXXX surrogate escape, or U+FFFF. */
const MAY_NEED_ESCAPE = /\\u0000|\\ud[89a-f][0-9a-f]{2}|\uffff/i;

/**
 * The record as it is stored, and the hash of its stored payload. For a clean record (nearly all)
 * both are what they were: one JSON.stringify serves the check and the hash.
 */
export function storedForm(record: FetchedRecord): { record: FetchedRecord; hash: string } {
  let json = JSON.stringify(record.native);
  let native = record.native;
  if (MAY_NEED_ESCAPE.test(json)) {
    native = escapeStored(native);
    if (native !== record.native) json = JSON.stringify(native);
  }
  const fields = escapeStored(record.fields);
  const sourceId = escapeStoredText(record.sourceId);
  const hash = createHash('sha256').update(json).digest('hex');
  if (native === record.native && fields === record.fields && sourceId === record.sourceId) return { record, hash };
  return { record: { ...record, native, fields, sourceId }, hash };
}

/** `native` without `keys` (the same object when it has none of them). */
function withoutKeys(native: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  if (!keys.some((k) => k in native)) return native;
  const out = { ...native };
  for (const k of keys) delete out[k];
  return out;
}

const QUARANTINE_SQL =
  'INSERT INTO sync_quarantine (tenant_id, connection_id, resource, source_id, error, payload) VALUES ($1, $2, $3, $4, $5, $6) ' +
  'ON CONFLICT (connection_id, resource, source_id) DO UPDATE SET error = EXCLUDED.error, payload = EXCLUDED.payload, ' +
  'attempts = sync_quarantine.attempts + 1, updated_at = now()';

export class RecordWriter {
  private readonly plans = new Map<SyncResource, TablePlan>();

  constructor(private readonly ds: DataSource) {}

  plan(resource: SyncResource): TablePlan {
    let p = this.plans.get(resource);
    if (p) return p;
    const meta = this.ds.getMetadata(ENTITY_BY_RESOURCE[resource]);
    const columns = meta.columns
      .filter((c) => !c.isPrimary)
      .map((c) => ({ db: c.databaseName, prop: c.propertyName, sqlType: String(c.type) }));
    const names = columns.map((c) => `"${c.db}"`).join(', ');
    const recordset = columns.map((c) => `"${c.db}" ${c.sqlType}`).join(', ');
    const updates = columns.filter((c) => !['tenant_id', 'connection_id', 'source_id'].includes(c.db))
      .map((c) => `"${c.db}" = EXCLUDED."${c.db}"`).join(', ');
    const insertSql =
      `INSERT INTO "${meta.tableName}" (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS x(${recordset}) ` +
      `ON CONFLICT (tenant_id, connection_id, source_id) DO UPDATE SET ${updates} RETURNING id, source_id`;
    p = { table: meta.tableName, columns, insertSql };
    this.plans.set(resource, p);
    return p;
  }

  /**
   * How each of `records` stands against its stored copy (StoredComparison, connectors/types.ts): stored
   * exactly as fetched, settled or not (the settled rule above); only `bookkeeping` keys moved; another
   * key moved; or not stored at all. Keyed by the fetched record's own source id. Outside the page's
   * transaction: a connector asks it to decide which per-record calls to make, before the page is written.
   */
  async compareStored(
    resource: SyncResource, scope: { tenantId: string; connectionId: string }, records: FetchedRecord[], bookkeeping: readonly string[],
  ): Promise<StoredComparison> {
    const out: StoredComparison = { settled: new Set(), unsettled: new Set(), touched: new Set(), edited: new Set() };
    if (records.length === 0) return out;
    const fetched = new Map(records.map((r) => { const s = storedForm(r); return [s.record.sourceId, { ...s, sourceId: r.sourceId }] as const; }));
    // The stored payload less its bookkeeping keys comes back only where the hash differs.
    const rows: { source_id: string; raw_hash: string; synced_at: Date; vendor_updated_at: Date | null; visible: Record<string, unknown> | null }[] = await this.ds.query(
      `SELECT t.source_id, t.raw_hash, t.synced_at, t.vendor_updated_at, CASE WHEN t.raw_hash <> f.hash THEN t.raw - $5::text[] END AS visible ` +
      `FROM unnest($3::text[], $4::text[]) AS f(source_id, hash) JOIN "${this.plan(resource).table}" t ` +
      'ON t.tenant_id = $1 AND t.connection_id = $2 AND t.source_id = f.source_id',
      [scope.tenantId, scope.connectionId, [...fetched.keys()], [...fetched.values()].map((f) => f.hash), [...bookkeeping]],
    );
    for (const r of rows) {
      const f = fetched.get(r.source_id);
      if (!f) continue;
      if (r.visible == null) (settled(r.synced_at, r.vendor_updated_at) ? out.settled : out.unsettled).add(f.sourceId);
      else (sameJson(withoutKeys(f.record.native, bookkeeping), r.visible) ? out.touched : out.edited).add(f.sourceId);
    }
    return out;
  }

  /**
   * Writes one page. `force` rewrites unchanged rows too (a full sync refreshes derived columns such
   * as a changed status mapping).
   */
  async writePage(
    manager: EntityManager,
    resource: SyncResource,
    scope: { tenantId: string; connectionId: string },
    page: FetchedRecord[],
    syncedAt: Date,
    force = false,
  ): Promise<PageWriteResult> {
    const plan = this.plan(resource);
    const bySource = new Map<string, { record: FetchedRecord; hash: string }>();
    for (const r of page) {
      const stored = storedForm(r);
      bySource.set(stored.record.sourceId, stored);
    }
    const records = [...bySource.values()];
    if (records.length === 0) return { created: [], updated: [], unchanged: 0, quarantined: [] };

    const stored: StoredRow[] = await manager.query(
      `SELECT * FROM "${plan.table}" WHERE tenant_id = $1 AND connection_id = $2 AND source_id = ANY($3::text[])`,
      [scope.tenantId, scope.connectionId, records.map((r) => r.record.sourceId)],
    );
    const before = new Map(stored.map((s) => [s.source_id, s]));
    const changed: { record: FetchedRecord; row: Record<string, unknown>; measuredMoved: boolean }[] = [];
    let unchanged = 0;
    const nowSettled: string[] = [];
    for (const { record, hash } of records) {
      const prev = before.get(record.sourceId);
      const measuredMoved = prev !== undefined && measuredChanged(plan.columns, record, prev);
      if (!force && prev?.raw_hash === hash && !measuredMoved) {
        unchanged++;
        if (!settled(prev.synced_at, prev.vendor_updated_at) && settled(syncedAt, prev.vendor_updated_at)) nowSettled.push(prev.id);
        continue;
      }
      const values: Record<string, unknown> = {
        ...record.fields,
        tenantId: scope.tenantId,
        connectionId: scope.connectionId,
        sourceId: record.sourceId,
        raw: record.native,
        rawHash: hash,
        vendorUpdatedAt: record.vendorUpdatedAt,
        syncedAt,
      };
      const row: Record<string, unknown> = {};
      for (const c of plan.columns) row[c.db] = values[c.prop] ?? null;
      // What this read could not measure stays as stored (a full read must not zero a note count).
      if (prev) for (const prop of record.unmeasured ?? []) {
        const column = plan.columns.find((c) => c.prop === prop);
        if (column) row[column.db] = prev[column.db] ?? null;
      }
      changed.push({ record, row, measuredMoved });
    }
    // Read again unchanged past its stamp's second: the stored copy now rules out a same-second change.
    if (nowSettled.length > 0) {
      await manager.query(`UPDATE "${plan.table}" SET synced_at = $1 WHERE id = ANY($2::uuid[])`, [syncedAt, nowSettled]);
    }
    const quarantined: { sourceId: string; error: string }[] = [];
    const result: PageWriteResult = { created: [], updated: [], unchanged, quarantined };
    if (changed.length === 0) return result;

    const ids = new Map<string, string>();
    const keep = (returned: { id: string; source_id: string }[]) => { for (const r of returned) ids.set(r.source_id, r.id); };
    try {
      keep(await this.inSavepoint(manager, () => manager.query(plan.insertSql, [JSON.stringify(changed.map((c) => c.row))])));
    } catch {
      // The page was refused as a whole: find the record(s) at fault one by one, keep the rest.
      for (const c of changed) {
        try {
          keep(await this.inSavepoint(manager, () => manager.query(plan.insertSql, [JSON.stringify([c.row])])));
        } catch (err) {
          const error = escapeStoredText(String((err as Error)?.message ?? err).slice(0, 500));
          // JSON.stringify writes NUL and lone surrogates as ASCII \u escapes: the payload text is exact and storable.
          const original = page.find((p) => escapeStoredText(p.sourceId) === c.record.sourceId)?.native ?? c.record.native;
          await manager.query(QUARANTINE_SQL, [scope.tenantId, scope.connectionId, resource, c.record.sourceId, error, JSON.stringify(original)]);
          quarantined.push({ sourceId: c.record.sourceId, error });
        }
      }
    }
    if (ids.size > 0) {
      // A record that stores now leaves quarantine (it was fixed at the vendor, or we learned to store it).
      await manager.query(
        'DELETE FROM sync_quarantine WHERE connection_id = $1 AND resource = $2 AND source_id = ANY($3::text[])',
        [scope.connectionId, resource, [...ids.keys()]],
      );
    }
    for (const { record, measuredMoved } of changed) {
      const id = ids.get(record.sourceId);
      if (id === undefined) continue;
      const prev = before.get(record.sourceId);
      if (prev) result.updated.push({ record, id, before: prev, measuredChanged: measuredMoved });
      else result.created.push({ record, id });
    }
    return result;
  }

  /** Runs one statement under a savepoint, so that its failure leaves the page's transaction usable. */
  private async inSavepoint<T>(manager: EntityManager, run: () => Promise<T>): Promise<T> {
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
}
