/**
 * Batched upsert of one vendor page into its table: one SELECT of what is stored, one
 * INSERT .. SELECT FROM jsonb_array_elements(..) ON CONFLICT for what changed (which also releases the
 * records it wrote from quarantine). Unchanged records (same payload hash) are not written at all, which
 * keeps incremental and repeated syncs cheap and gives change detection the before/after it needs.
 *
 * What is written is the record in stored form (stored-text.ts: text PostgreSQL cannot hold escaped,
 * losslessly), and reactions see that same form, so hashes and before/after compare like with like.
 *
 * Where the time goes, and why the page is shaped so (measured with a CPU profile of the bench's full
 * sync and its 5,000-change sync):
 * - The vendor payload becomes JSON text once (`nativeForm`), and that one text serves the check for
 *   unstorable text, the payload hash, the dedupe key of its event and the `raw` the statement carries.
 * - The statement carries two JSON texts: the rows' values as arrays (no key repeated per row, cheaper
 *   to write here and to take apart there than an object per row) and the payloads, joined by position.
 *   What every row shares (tenant, connection, synced at) goes once, as parameters.
 * - A page is `prepare`d outside its transaction (page-pipeline.ts does it while the page before it is
 *   being written), and its write is planned there too (`expect`): the stored rows of its records are read
 *   (their payload only where it moved), and which records changed, their rows' values and the expected
 *   updates worked out. Listeners prepare their work from the plan (change detection drafts the events), so
 *   the transaction holds only statements: the upsert and the reactions' own. On the embedded default that
 *   matters most: its one connection serves nothing else while a transaction is open.
 * - A plan of one statement that no reaction adds to is written as that statement alone (`writeAlone`): no
 *   transaction, two round trips fewer a page. A first sync's page is planned without a read (its records
 *   are new, and one stored after all is caught by the version guard below), so it is one statement.
 * - Stored rows are found by one probe of the unique index per source id (`storedByIds`), never by a
 *   plan that depends on the table's statistics.
 * - A stored row is read once: where a connector compared the page first (compareStored, outside the
 *   transaction, while the page before is written), the rows it read are kept for the page's plan
 *   (comparedRows), which reads only what the compare did not cover. The upsert then overwrites a row
 *   only where it is still the version that was read (`xmin`, the row version PostgreSQL keeps for every
 *   row); a row that moved in between, or was stored since, is left alone, read again in the transaction and
 *   written then, so the before that change detection sees is always the row the write replaced.
 *
 * A record the store refuses: the page's upsert runs without a savepoint (two round trips a page fewer),
 * so its failure ends the transaction; writePage then throws PageRefusedError and the caller writes the
 * page again `careful`ly, in a new transaction where the refused records are found by halving under
 * savepoints. Each refused alone is quarantined (sync_quarantine) and the rest of the page is written.
 */
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { FetchedRecord, StoredComparison, SyncResource } from '../connectors/types';
import { escapeStored, escapeStoredText } from './stored-text';
import { movedKeys } from '../shared/same-json';
import { SyncRecordsStore, type StoredRow, type TablePlan } from './records.store';
import { Transactions } from '../db/transactions';

export { ENTITY_BY_RESOURCE, type StoredRow } from './records.store';

/** Rows kept between a page's compare and its write (RecordWriter.comparedRows): a few pages' worth. */
const COMPARED_ROWS_KEPT = 5_000;

/** A compared row's key: the sync (its start) as well, so that a page compared and never written serves no later sync. */
const comparedKey = (connectionId: string, resource: SyncResource, syncedAt: Date, sourceId: string) =>
  `${connectionId}\u0000${resource}\u0000${syncedAt.getTime()}\u0000${sourceId}`;

/** Records prepared between two turns of the event loop. */
const PREPARE_SLICE = 100;

/** A column value as the statement's JSON carries it (a Date as its ISO text, as JSON.stringify would write it). */
const jsonable = (v: unknown): unknown => (v instanceof Date ? (Number.isNaN(v.getTime()) ? null : v.toISOString()) : (v ?? null));

/**
 * Each record written carries `hash`, its payload's hash as stored (`raw_hash`), worked out when the page
 * was prepared: a reaction compares and keys by it without asking the writer again.
 */
export interface PageWriteResult {
  created: { record: FetchedRecord; id: string; hash: string }[];
  /** `measuredChanged`: the payload is the stored one but a measured field (FetchedRecord.measured) moved. */
  updated: { record: FetchedRecord; id: string; hash: string; before: StoredRow; measuredChanged?: boolean }[];
  unchanged: number;
  /** Records the store refused, kept in sync_quarantine (source id and error in stored form). */
  quarantined?: { sourceId: string; error: string }[];
  /** Rows the vendor no longer lists, removed by the deletion pass (deletions.ts), as they were stored. */
  deleted?: StoredRow[];
  /**
   * unchangedPage only: whether the store holds a record of the resource outside this page. Where the page
   * is the whole listing, false answers the deletion pass's question (deletions.ts, anyVanished) as well.
   */
  storedBeyondPage?: boolean;
  /**
   * The write updated exactly what RecordWriter.expect said, each from the row it said (nothing moved in
   * between, nothing refused): work prepared from the expected write holds for `updated`.
   */
  asExpected?: boolean;
  /**
   * unchangedPage only: whether no record of the page is left for a later check to settle (each is settled
   * after this check's own update, or has no vendor stamp to settle).
   */
  nothingToSettle?: boolean;
}

/**
 * What a page's write is expected to do, known before its transaction (RecordWriter.expect): the records it
 * will update, each with the row it replaces. A reaction may prepare its work from it (PageReaction, page-pipeline.ts).
 */
export interface ExpectedPageWrite {
  updated: PageWriteResult['updated'];
  /** How many records it will create (none stored). */
  created: number;
  /** The statements it takes: the upsert of what changed, the stamp of what is now settled. One needs no transaction of its own (writeAlone). */
  statements: number;
}

/** The page's upsert was refused: the transaction is lost, write the page again with `careful`. */
export class PageRefusedError extends Error {
  constructor(cause: unknown) {
    super(`the store refused the page: ${String((cause as Error)?.message ?? cause)}`, { cause });
    this.name = 'PageRefusedError';
  }
}

/** JSON text that may hold an escape stored-text.ts rewrites: \u0000, a \udXXX surrogate escape, or U+FFFF. */
const MAY_NEED_ESCAPE = /\\u0000|\\ud[89a-f][0-9a-f]{2}|\uffff/i;

interface NativeForm {
  /** The payload in stored form (the vendor's object itself when nothing needed escaping). */
  native: Record<string, unknown>;
  /** Its JSON text, as written to `raw`. */
  json: string;
  /** sha256 of `json`: the stored `raw_hash`. */
  hash: string;
}

/** Per payload object, its stored form: a payload is serialized and hashed once, whoever asks. */
const NATIVE_FORMS = new WeakMap<object, NativeForm>();

function nativeForm(native: Record<string, unknown>): NativeForm {
  let form = NATIVE_FORMS.get(native);
  if (form) return form;
  let json = JSON.stringify(native);
  let stored = native;
  if (MAY_NEED_ESCAPE.test(json)) {
    stored = escapeStored(native);
    if (stored !== native) json = JSON.stringify(stored);
  }
  form = { native: stored, json, hash: createHash('sha256').update(json).digest('hex') };
  NATIVE_FORMS.set(native, form);
  if (stored !== native) NATIVE_FORMS.set(stored, form);
  return form;
}

/**
 * The record as it is stored, the hash of its stored payload and the payload's JSON text. For a clean
 * record (nearly all) the record is the one given.
 */
export function storedForm(record: FetchedRecord): { record: FetchedRecord; hash: string; json: string } {
  const { native, json, hash } = nativeForm(record.native);
  const fields = escapeStored(record.fields);
  const sourceId = escapeStoredText(record.sourceId);
  if (native === record.native && fields === record.fields && sourceId === record.sourceId) return { record, hash, json };
  return { record: { ...record, native, fields, sourceId }, hash, json };
}

/** Whether a field the connector measured (FetchedRecord.measured) differs from the stored column. */
/**
 * How the fields the connector measured compare with the stored row: unmoved, only filled (every moved
 * one stored null: measured for the first time, nothing the vendor changed) or moved.
 */
function measuredChanged(plan: TablePlan, record: FetchedRecord, row: StoredRow): 'none' | 'filled' | 'moved' {
  if (!record.measured) return 'none';
  const fields = record.fields as unknown as Record<string, unknown>;
  let out: 'none' | 'filled' | 'moved' = 'none';
  for (const prop of record.measured) {
    const column = plan.byProp.get(prop);
    if (column === undefined || String(row[column.db] ?? null) === String(fields[prop] ?? null)) continue;
    if (row[column.db] != null) return 'moved';
    out = 'filled';
  }
  return out;
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

/** One record of a prepared page: its stored form, and its row's values as written when nothing is stored. */
interface PreparedRecord {
  record: FetchedRecord;
  hash: string;
  /** The payload's JSON text (`raw`). */
  json: string;
  /** Source id, payload hash, vendor stamp, then the field columns (TablePlan.fieldColumns). */
  values: unknown[];
}

/** A stored row with its payload: a read sends `raw` back only where it is none of `fetched`, the page's payloads by hash. */
function withPayload(row: StoredRow, fetched: Map<string, unknown>): StoredRow {
  if (row.raw == null) row.raw = fetched.get(row.raw_hash) ?? null;
  return row;
}

/** A record the page's write changes, with its row's values (the prepared ones, or with what the read did not measure kept). */
interface Changed {
  prepared: PreparedRecord;
  values: unknown[];
  measuredMoved: boolean;
  filledOnly: boolean;
}

/** The upsert's two texts for `rows`: their values as arrays, and their payloads, the n-th for the n-th row. */
function statementTexts(rows: Changed[]): [string, string] {
  return [JSON.stringify(rows.map((c) => c.values)), `[${rows.map((c) => c.prepared.json).join(',')}]`];
}

/** Each row as the version read: a row that is another version now, or was stored since, is not written. */
function versionsRead(rows: Changed[], before: Map<string, StoredRow>): string {
  const versions: Record<string, string> = {};
  for (const c of rows) {
    const version = before.get(c.prepared.record.sourceId)?.row_version;
    if (version !== undefined) versions[c.prepared.record.sourceId] = version;
  }
  return JSON.stringify(versions);
}

/** The updates among `rows`: each written one (`idOf`) stored before, but a first measurement of an unchanged record. */
function updatesOf(rows: Changed[], before: Map<string, StoredRow>, idOf: (c: Changed) => string | undefined): PageWriteResult['updated'] {
  const out: PageWriteResult['updated'] = [];
  for (const c of rows) {
    const id = idOf(c);
    const prev = before.get(c.prepared.record.sourceId);
    if (id !== undefined && prev && !c.filledOnly) out.push({ record: c.prepared.record, id, hash: c.prepared.hash, before: prev, measuredChanged: c.measuredMoved });
  }
  return out;
}

function plannedWrite(
  force: boolean, before: Map<string, StoredRow>, fetchedPayloads: Map<string, unknown>, decided: { changed: Changed[]; unchanged: number; nowSettled: string[] },
): PlannedWrite {
  const { changed } = decided;
  return { force, before, fetchedPayloads, ...decided, texts: statementTexts(changed), versions: versionsRead(changed, before) };
}

/** What a planned write will do, as reactions are told before it (ExpectedPageWrite). */
function expectedOf({ changed, before, nowSettled }: PlannedWrite): ExpectedPageWrite {
  return {
    updated: updatesOf(changed, before, (c) => before.get(c.prepared.record.sourceId)?.id),
    created: changed.filter((c) => !before.has(c.prepared.record.sourceId)).length,
    statements: (changed.length > 0 ? 1 : 0) + (nowSettled.length > 0 ? 1 : 0),
  };
}

/** A page made ready to write outside its transaction (RecordWriter.prepare). */
export interface PreparedPage {
  resource: SyncResource;
  scope: { tenantId: string; connectionId: string };
  syncedAt: Date;
  /** The resource's table plan (records.store.ts), looked up once for the page: its plan and write take it from here. */
  plan: TablePlan;
  /** The page as the connector gave it. */
  page: FetchedRecord[];
  /** Its records in stored form, one per source id (the last wins). */
  records: PreparedRecord[];
  /** The write planned from the compare's rows (RecordWriter.expect), taken by the page's first write. */
  planned?: PlannedWrite;
}

/** A page's write worked out outside its transaction (RecordWriter.expect). */
interface PlannedWrite {
  force: boolean;
  before: Map<string, StoredRow>;
  fetchedPayloads: Map<string, unknown>;
  changed: Changed[];
  unchanged: number;
  nowSettled: string[];
  /** The upsert's texts of `changed`: rows' values and payloads (statementTexts), and the versions read (versionsRead). */
  texts: [string, string];
  versions: string;
}

export class RecordWriter {
  /** The SQL of the record tables (records.store.ts). */
  readonly store: SyncRecordsStore;
  /**
   * What compareStored read, by connection, resource, sync and source id: the stored row (its payload only
   * where the fetched one moved), or null where nothing is stored. The page's write takes these instead of
   * reading the rows again (see the header).
   */
  private readonly comparedRows = new Map<string, StoredRow | null>();

  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(ds: DataSource) {
    this.transactions = new Transactions(ds);
    this.store = new SyncRecordsStore(ds);
  }

  /** The table plan of a resource (records.store.ts). */
  plan(resource: SyncResource): TablePlan {
    return this.store.plan(resource);
  }

  /**
   * How each of `records` stands against its stored copy (StoredComparison, connectors/types.ts): stored
   * exactly as fetched, settled or not (the settled rule above); only `bookkeeping` keys moved; another
   * key moved; or not stored at all. Keyed by the fetched record's own source id. Outside the page's
   * transaction: a connector asks it to decide which per-record calls to make, before the page is written.
   */
  async compareStored(
    resource: SyncResource, scope: { tenantId: string; connectionId: string }, records: FetchedRecord[], bookkeeping: readonly string[],
    syncedAt: Date,
  ): Promise<StoredComparison> {
    const out: StoredComparison = { settled: new Set(), unsettled: new Set(), touched: new Set(), edited: new Set(), editedUnsettled: new Set() };
    if (records.length === 0) return out;
    const fetched = new Map(records.map((r) => { const s = storedForm(r); return [s.record.sourceId, { ...s, sourceId: r.sourceId }] as const; }));
    // The stored payload comes back only where it moved. Each row is kept for the page's write (comparedRows).
    const rows = await this.store.compare<StoredRow & { synced_at: Date; vendor_updated_at: Date | null; raw: Record<string, unknown> | null }>(
      resource, scope, [...fetched.keys()], [...fetched.values()].map((f) => f.hash));
    const byId = new Map(rows.map((r) => [r.source_id, r]));
    for (const id of fetched.keys()) this.keepCompared(comparedKey(scope.connectionId, resource, syncedAt, id), byId.get(id) ?? null);
    const skip = new Set(bookkeeping);
    for (const r of rows) {
      const f = fetched.get(r.source_id);
      if (!f) continue;
      if (f.hash === r.raw_hash) {
        (settled(r.synced_at, r.vendor_updated_at) ? out.settled : out.unsettled).add(f.sourceId);
        continue;
      }
      // Only bookkeeping keys moved: a touch; anything else: an edit (the change detector's own rule).
      if (r.raw && movedKeys(f.record.native, r.raw, skip).length === 0) out.touched.add(f.sourceId);
      else {
        out.edited.add(f.sourceId);
        if (!settled(syncedAt, f.record.vendorUpdatedAt)) out.editedUnsettled.add(f.sourceId);
      }
    }
    return out;
  }

  /** What compareStored read of the page's records (null: nothing stored), by source id, taken: no later write gets it. */
  private takeCompared(prepared: PreparedPage): Map<string, StoredRow | null> {
    const { resource, scope, syncedAt, records } = prepared;
    const taken = new Map<string, StoredRow | null>();
    for (const r of records) {
      const key = comparedKey(scope.connectionId, resource, syncedAt, r.record.sourceId);
      const row = this.comparedRows.get(key);
      if (row === undefined) continue;
      this.comparedRows.delete(key);
      taken.set(r.record.sourceId, row);
    }
    return taken;
  }

  /** Keeps what compareStored read of one record for the write of its page (comparedRows). */
  private keepCompared(key: string, row: StoredRow | null): void {
    this.comparedRows.delete(key);
    this.comparedRows.set(key, row);
    // Bounded: pages compared and never written (a sync that failed between) leave their rows behind.
    for (const oldest of this.comparedRows.keys()) {
      if (this.comparedRows.size <= COMPARED_ROWS_KEPT) break;
      this.comparedRows.delete(oldest);
    }
  }

  /**
   * A record's row values: source id, payload hash, vendor stamp, then the field columns. `prev`, the
   * stored row, keeps what the read did not measure (a full read must not zero a note count).
   */
  private rowValues(plan: TablePlan, record: FetchedRecord, hash: string, prev?: StoredRow): unknown[] {
    const fields = record.fields as unknown as Record<string, unknown>;
    const unmeasured = prev ? record.unmeasured : undefined;
    const values: unknown[] = [record.sourceId, hash, jsonable(record.vendorUpdatedAt)];
    for (const c of plan.fieldColumns) values.push(jsonable(unmeasured?.includes(c.prop) ? prev![c.db] : fields[c.prop]));
    return values;
  }

  /**
   * A page in stored form, hashed, its rows' values laid out: the writer's work that needs no
   * transaction. In slices that let other work run between them (the page before this one is being
   * written meanwhile, and its statements' answers should not wait for a whole page of this).
   */
  async prepare(resource: SyncResource, scope: { tenantId: string; connectionId: string }, page: FetchedRecord[], syncedAt: Date): Promise<PreparedPage> {
    const plan = this.plan(resource);
    const bySource = new Map<string, PreparedRecord>();
    for (let i = 0; i < page.length; i++) {
      if (i > 0 && i % PREPARE_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      const stored = storedForm(page[i]);
      bySource.set(stored.record.sourceId, { ...stored, values: this.rowValues(plan, stored.record, stored.hash) });
    }
    return { resource, scope, syncedAt, plan, page, records: [...bySource.values()] };
  }

  /**
   * The digest of a prepared page as the quiet path compares it with the store: each record's source id,
   * payload hash and measured fields, in order (sync_states.quiet_listing).
   */
  listingDigest(prepared: PreparedPage): string {
    const h = createHash('sha256').update(prepared.resource);
    for (const { record, hash } of prepared.records) {
      const fields = record.fields as unknown as Record<string, unknown>;
      h.update(`\u0000${record.sourceId}\u0000${hash}`);
      if (record.measured) h.update(JSON.stringify(record.measured.map((prop) => jsonable(fields[prop]))));
    }
    return h.digest('base64');
  }

  /** The result of a page whose listing digest the last check recorded: every record stored as fetched, nothing left to settle. */
  knownPage(prepared: PreparedPage): PageWriteResult {
    return { created: [], updated: [], unchanged: prepared.records.length, quarantined: [], storedBeyondPage: false, nothingToSettle: true };
  }

  /**
   * Plans the page's write outside its transaction: the stored rows of its records (compareStored's where it
   * read them, one read for the rest), which records changed and the rows they replace. The plan is taken by
   * the page's first write with the same `force`; a row that moved since is still caught there (the upsert's
   * version guard), and the result then says it was not as expected. `firstRead` (the resource's first
   * sync, whose records are new but where an earlier attempt stopped): nothing is read, records no compare
   * read are taken as new, and one stored after all is caught by the same guard (no version was read of it).
   */
  async expect(prepared: PreparedPage, force: boolean, firstRead = false): Promise<ExpectedPageWrite | null> {
    const { scope, syncedAt, records, plan } = prepared;
    if (records.length === 0) return null;
    // The quiet path's read found a change and planned the write from it (unchangedPage).
    if (prepared.planned?.force === force) return expectedOf(prepared.planned);
    const fetchedPayloads = new Map(records.map((r) => [r.hash, r.record.native]));
    const compared = this.takeCompared(prepared);
    const before = new Map<string, StoredRow>();
    for (const row of compared.values()) if (row) before.set(row.source_id, withPayload(row, fetchedPayloads));
    const unread = compared.size === records.length ? [] : records.filter((r) => !compared.has(r.record.sourceId));
    if (unread.length > 0 && !firstRead) for (const row of await this.readStored(this.transactions.outside, plan, scope, unread, fetchedPayloads, false)) before.set(row.source_id, row);
    return expectedOf(prepared.planned = plannedWrite(force, before, fetchedPayloads, this.classify(plan, records, before, syncedAt, force)));
  }

  /**
   * Writes a planned page of one statement (ExpectedPageWrite.statements) as that statement alone, with no
   * transaction around it: two round trips fewer (a first sync's pages are all such). What it wrote is the
   * result; records it did not write because their row moved after the plan, or was stored since, are left
   * as a page of their own (`rest`) for writePage, in a transaction, where they are read again. A refused
   * statement wrote nothing: PageRefusedError, as writePage.
   */
  async writeAlone(prepared: PreparedPage): Promise<{ result: PageWriteResult; rest: PreparedPage | null }> {
    if (!prepared.planned) throw new Error('record-writer: writeAlone takes a planned page (expect)');
    const left: PreparedRecord[] = [];
    const result = (await this.write(this.transactions.outside, prepared, prepared.planned.force, false, false, left))!;
    return { result, rest: left.length > 0 ? { ...prepared, records: left, planned: undefined } : null };
  }

  /**
   * Writes one prepared page. `force` rewrites unchanged rows too (a full sync refreshes derived columns
   * such as a changed status mapping). Without `careful`, a page the store refuses throws PageRefusedError
   * and the transaction is lost; with it, refused records are quarantined and the rest written.
   */
  async writePage(manager: EntityManager, prepared: PreparedPage, force = false, careful = false): Promise<PageWriteResult> {
    return (await this.write(manager, prepared, force, careful, false))!;
  }

  /**
   * The page's result when nothing in it would be written (every record as stored: a quiet full read),
   * with no transaction needed; null, and nothing done, when something would.
   */
  async unchangedPage(manager: EntityManager, prepared: PreparedPage): Promise<PageWriteResult | null> {
    return this.write(manager, prepared, false, false, true);
  }

  /** `left`: records whose row moved after the plan go there unwritten (writeAlone), instead of being read again and written here. */
  private async write(manager: EntityManager, prepared: PreparedPage, force: boolean, careful: boolean, onlyIfUnchanged: boolean, left?: PreparedRecord[]): Promise<PageWriteResult | null> {
    const { resource, scope, syncedAt, records, plan } = prepared;
    if (records.length === 0) return { created: [], updated: [], unchanged: 0, quarantined: [] };

    // The write planned outside the transaction (expect), taken by the page's first write only.
    const planned = !onlyIfUnchanged && prepared.planned?.force === force ? prepared.planned : undefined;
    if (!onlyIfUnchanged) prepared.planned = undefined;
    const { before, fetchedPayloads, changed, unchanged, nowSettled, stored } = planned
      ? { ...planned, stored: [] }
      : await this.decide(manager, plan, prepared, force, onlyIfUnchanged);
    if (onlyIfUnchanged && changed.length > 0) {
      // Planned from this read: the write that follows reads nothing again.
      for (const row of before.values()) delete row.beyond_page;
      prepared.planned = plannedWrite(force, before, fetchedPayloads, { changed, unchanged, nowSettled });
      return null;
    }
    // Read again unchanged past its stamp's second: the stored copy now rules out a same-second change.
    if (nowSettled.length > 0) {
      await this.store.stampSynced(manager, plan, syncedAt, nowSettled);
    }
    const quarantined: { sourceId: string; error: string }[] = [];
    const result: PageWriteResult = { created: [], updated: [], unchanged, quarantined };
    if (onlyIfUnchanged) {
      result.storedBeyondPage = stored[0]?.beyond_page !== false;
      result.nothingToSettle = stored.every((row) => row.vendor_updated_at == null || settled(row.synced_at, row.vendor_updated_at) || settled(syncedAt, row.vendor_updated_at));
    }
    if (changed.length === 0) return result;

    const ids = new Map<string, string>();
    // `versions`: each row is overwritten only while it is the version read (null: whatever it is now).
    const write = async (rows: Changed[], versions: string | null) => {
      // The planned page's statement texts were written outside the transaction.
      const [values, payloads] = rows === planned?.changed ? planned.texts : statementTexts(rows);
      const returned = await this.store.upsert(manager, plan, { values, payloads }, scope, syncedAt, resource, versions);
      for (const r of returned) ids.set(r.source_id, r.id);
    };
    const writeAll = async (rows: Changed[], versions: string | null) => {
      if (!careful) {
        try {
          await write(rows, versions);
        } catch (err) {
          throw new PageRefusedError(err);
        }
        return;
      }
      // Halve what the store refuses until each refused record stands alone; write everything else.
      const writeSome = async (part: Changed[]): Promise<void> => {
        try {
          await this.store.inSavepoint(manager, () => write(part, versions));
        } catch (err) {
          if (part.length > 1) {
            const half = Math.ceil(part.length / 2);
            await writeSome(part.slice(0, half));
            await writeSome(part.slice(half));
            return;
          }
          const { record } = part[0].prepared;
          const error = escapeStoredText(String((err as Error)?.message ?? err).slice(0, 500));
          // JSON.stringify writes NUL and lone surrogates as ASCII \u escapes: the payload text is exact and storable.
          const original = prepared.page.find((p) => escapeStoredText(p.sourceId) === record.sourceId)?.native ?? record.native;
          await this.store.quarantine(manager, scope, resource, record.sourceId, error, JSON.stringify(original));
          quarantined.push({ sourceId: record.sourceId, error });
        }
      };
      await writeSome(rows);
    };
    await writeAll(changed, planned?.versions ?? versionsRead(changed, before));
    const refused = new Set(quarantined.map((q) => q.sourceId));
    const passed = changed.filter((c) => !ids.has(c.prepared.record.sourceId) && !refused.has(c.prepared.record.sourceId));
    let written = changed;
    if (passed.length > 0 && left) {
      left.push(...passed.map((c) => c.prepared));
      written = changed.filter((c) => ids.has(c.prepared.record.sourceId));
    } else if (passed.length > 0) {
      const first = changed.filter((c) => ids.has(c.prepared.record.sourceId));
      // Read again in the transaction, as they are now, and written over whatever they are.
      const again = await this.readStored(manager, plan, scope, passed.map((c) => c.prepared), fetchedPayloads, false);
      for (const id of passed.map((c) => c.prepared.record.sourceId)) before.delete(id);
      for (const row of again) before.set(row.source_id, row);
      const second = this.classify(plan, passed.map((c) => c.prepared), before, syncedAt, force);
      result.unchanged += second.unchanged;
      if (second.changed.length > 0) await writeAll(second.changed, null);
      written = [...first, ...second.changed];
    }
    for (const c of written) {
      const id = ids.get(c.prepared.record.sourceId);
      if (id !== undefined && !c.filledOnly && !before.has(c.prepared.record.sourceId)) result.created.push({ record: c.prepared.record, id, hash: c.prepared.hash });
    }
    result.updated = updatesOf(written, before, (c) => ids.get(c.prepared.record.sourceId));
    result.unchanged += written.filter((c) => c.filledOnly && ids.has(c.prepared.record.sourceId)).length;
    result.asExpected = planned !== undefined && passed.length === 0 && quarantined.length === 0;
    return result;
  }

  /**
   * What the write reads and decides in its transaction, for a page it has no plan for (expect): the stored
   * rows, from the compare where it read them (comparedRows, taken here; the quiet path reads for itself and
   * leaves them to the write that may follow it) and from the store for the rest.
   */
  private async decide(manager: EntityManager, plan: TablePlan, prepared: PreparedPage, force: boolean, onlyIfUnchanged: boolean) {
    const { scope, syncedAt, records } = prepared;
    const compared = onlyIfUnchanged ? new Map<string, StoredRow | null>() : this.takeCompared(prepared);
    // A stored payload equal to a fetched one is not sent back (by the compare or the select): it is that one.
    const fetchedPayloads = new Map(records.map((r) => [r.hash, r.record.native]));
    const unread = compared.size === records.length ? [] : records.filter((r) => !compared.has(r.record.sourceId));
    const stored: StoredRow[] = [...compared.values()].filter((row): row is StoredRow => row !== null).map((row) => withPayload(row, fetchedPayloads));
    if (unread.length > 0) stored.push(...await this.readStored(manager, plan, scope, unread, fetchedPayloads, onlyIfUnchanged));
    const before = new Map(stored.map((s) => [s.source_id, s]));
    return { before, fetchedPayloads, stored, ...this.classify(plan, records, before, syncedAt, force) };
  }

  /**
   * The stored rows of `records`, read in the page's transaction (with `quiet`, quietSelectSql's), each with
   * its payload (withPayload).
   */
  private async readStored(
    manager: EntityManager, plan: TablePlan, scope: PreparedPage['scope'], records: PreparedRecord[], fetched: Map<string, unknown>, quiet: boolean,
  ): Promise<StoredRow[]> {
    const rows = await this.store.readStored(manager, plan, scope, records.map((r) => r.record.sourceId), [...fetched.keys()], quiet);
    return rows.map((row) => withPayload(row, fetched));
  }

  /** Which records differ from their stored row (`before`), which are as stored, and which of those are settled by this read. */
  private classify(plan: TablePlan, records: PreparedRecord[], before: Map<string, StoredRow>, syncedAt: Date, force: boolean): { changed: Changed[]; unchanged: number; nowSettled: string[] } {
    const changed: Changed[] = [];
    let unchanged = 0;
    const nowSettled: string[] = [];
    for (const p of records) {
      const { record, hash } = p;
      const prev = before.get(record.sourceId);
      const measured = prev === undefined ? 'none' : measuredChanged(plan, record, prev);
      const measuredMoved = measured === 'moved';
      if (!force && prev?.raw_hash === hash && measured === 'none') {
        unchanged++;
        if (!settled(prev.synced_at, prev.vendor_updated_at) && settled(syncedAt, prev.vendor_updated_at)) nowSettled.push(prev.id);
        continue;
      }
      const keeps = prev !== undefined && record.unmeasured?.some((prop) => plan.byProp.has(prop));
      // A first measurement of an unchanged record is stored, but nothing at the vendor moved: not an update.
      const filledOnly = !force && prev?.raw_hash === hash && measured === 'filled';
      changed.push({ prepared: p, values: keeps ? this.rowValues(plan, record, hash, prev) : p.values, measuredMoved, filledOnly });
    }
    return { changed, unchanged, nowSettled };
  }
}
