/**
 * Reads of synced records, always from the store (docs/architecture.md, Reads): keyset pagination on our id
 * (complete and disjoint even while sync writes), `updated_since`, and the envelope facts
 * (`last_synced_at` of the connections that feed the list, `sandbox`).
 */
import type { DataSource } from 'typeorm';
import { ServiceError } from '../errors/service-error';
import { capabilitiesOf, connectorsListing } from '../connectors/registry';
import type { TenantAccess } from '../access/access.service';
import { RawJson } from '../shared/raw-json';
import { unescapeStoredJsonText } from '../sync/stored-text';
import { listCursor, toPage, type ListCursor, type Page } from '../shared/paging';
import { TtlCache } from '../shared/ttl-cache';
import { agreementLineToApi, RECORD_LISTS, recordWriter, type RecordListDef, type RecordListName, type RecordRow } from './record-lists';
import { toRfc3339 } from '../shared/dates';
import { RecordsStore, type RowsQuery as ListQuery } from './records.store';

export type { RowsQuery as ListQuery } from './records.store';

export interface ListPage extends Page<RawJson> {
  lastSyncedAt: string | null;
}

/** The cursor of each record list: keyset on our id. */
const cursors = new Map<RecordListName, ListCursor>();
export function recordCursor(name: RecordListName): ListCursor {
  let c = cursors.get(name);
  if (!c) cursors.set(name, (c = listCursor(name, ['uuid'])));
  return c;
}

/** Text sync had to escape (src/sync/stored-text.ts) is read back as the vendor sent it. */
const decodedJson = (text: string) => (text.includes('\uffff') ? unescapeStoredJsonText(text) : text);

const writers = new Map<RecordListName, ReturnType<typeof recordWriter>>();
function writerOf(name: RecordListName) {
  let w = writers.get(name);
  if (!w) writers.set(name, (w = recordWriter(RECORD_LISTS[name])));
  return w;
}

export class RecordsService {
  /** (tenant, resource) -> last_synced_at; sync completion clears it. */
  private readonly syncedAt = new TtlCache<string | null>(2_000);

  private readonly store: RecordsStore;

  constructor(ds: DataSource) {
    this.store = new RecordsStore(ds);
  }

  /** Counts the times a tenant's store was emptied (sandbox reset): a read that saw it move answers unsynced. */
  private storeEmptied = 0;

  invalidateSyncedAt(): void {
    this.syncedAt.clear();
  }

  /** A tenant's records and sync states were removed: no cached time holds, nor any read under way. */
  emptied(): void {
    this.storeEmptied++;
    this.syncedAt.clear();
  }

  /**
   * One page of a list: each record as its JSON text (record-lists.ts, recordWriter), which REST writes
   * as it is; nothing is parsed or serialised again on the way.
   */
  async list(access: TenantAccess, name: RecordListName, q: ListQuery): Promise<ListPage> {
    const { rows: fetched, lastSyncedAt } = await this.fetch(access, name, q);
    const { items: rows, next_cursor } = toPage(fetched, q.limit, recordCursor(name), (r) => [r.id]);
    const def: RecordListDef = RECORD_LISTS[name];
    const lines = def.lines && rows.length > 0 ? await this.linesOf(access.tenant.id, rows) : null;
    // The connector of each record comes from the tenant's connections, already loaded with the access.
    const connectorOf = new Map(access.connections.map((c) => [c.id, JSON.stringify(c.connector)]));
    const write = writerOf(name);
    // Text sync had to escape is written back as the vendor sent it, in the finished record.
    const items = rows.map((r, i) => new RawJson(decodedJson(write(r, connectorOf.get(r.connection_id) ?? 'null', lines?.[i]))));
    return { items, next_cursor, lastSyncedAt };
  }

  /**
   * One record of a list by our id or by its `source_id` (docs/architecture.md, Reads), served like the list
   * (same visibility, capability rule and shape). A source_id that two connections share is ambiguous:
   * 422 with the ids that settle it.
   */
  async one(access: TenantAccess, name: RecordListName, recordId: string): Promise<RawJson> {
    const page = await this.list(access, name, { limit: 2, recordId });
    if (page.items.length === 0) throw ServiceError.notFound(RECORD_LISTS[name].itemsField.replace(/s$/, ''));
    if (page.items.length > 1) {
      throw new ServiceError('validation', `source_id ${recordId} names ${page.items.length} records of this tenant (one per connection); read it by its id.`,
        { details: { field: 'record_id', candidates: page.items.map((i) => (i.value() as { id?: unknown }).id) } });
    }
    return page.items[0];
  }

  /** These records (our ids) of a list, as the list shows them, in its order. */
  async byIds(access: TenantAccess, name: RecordListName, ids: string[]): Promise<RawJson[]> {
    return ids.length === 0 ? [] : (await this.list(access, name, { limit: ids.length, ids })).items;
  }

  /** The rows of one page, plus one to know whether there is more. */
  private async fetch(access: TenantAccess, name: RecordListName, q: ListQuery) {
    const def = RECORD_LISTS[name];
    const feeding = connectorsListing(def.resource);
    const ofKind = access.connections.filter((c) => c.kind === def.kind);
    if (def.requiresCapability && ofKind.length > 0 && !ofKind.some((c) => feeding.includes(c.connector))) {
      const limited = ofKind.some((c) => capabilitiesOf(c.connector).commits === 'fixture_only');
      throw ServiceError.notSupported(
        limited
          ? `The ${ofKind[0].connector} connector is the limited PSA connector: it has no ${def.itemsField} list.`
          : `No connection of this tenant supports the ${def.itemsField} list.`,
      );
    }
    const tenantId = access.tenant.id;
    const emptiedBefore = this.storeEmptied;
    const [rows, lastSyncedAt] = await Promise.all([
      this.store.rows(name, tenantId, q, ofKind.map((c) => c.id)),
      this.lastSyncedAt(tenantId, def.resource, ofKind.filter((c) => feeding.includes(c.connector)).map((c) => c.id)),
    ]);
    // The store was emptied while this read ran (a sandbox reset): the time, cached or read, may be from
    // before, and these rows are no synced list.
    return { rows, lastSyncedAt: this.storeEmptied === emptiedBefore ? lastSyncedAt : null };
  }

  /** The JSON text of each agreement's lines, in the order of `rows`. */
  private async linesOf(tenantId: string, rows: RecordRow[]): Promise<string[]> {
    const lines = await this.store.linesOf(tenantId, rows);
    const byAgreement = new Map<string, Record<string, unknown>[]>();
    for (const l of lines) {
      const k = `${l.connection_id}:${l.agreement_source_id}`;
      if (!byAgreement.has(k)) byAgreement.set(k, []);
      byAgreement.get(k)!.push(agreementLineToApi(l));
    }
    return rows.map((r) => JSON.stringify(byAgreement.get(`${r.connection_id}:${r.source_id}`) ?? []));
  }

  /** Oldest successful sync among the connections that feed the list; null if one never synced. */
  private async lastSyncedAt(tenantId: string, resource: string, connectionIds: string[]): Promise<string | null> {
    if (connectionIds.length === 0) return null;
    return this.syncedAt.getOrLoad(`${tenantId}:${resource}:${connectionIds.join(',')}`, async () => {
      const row = await this.store.oldestSync(resource, connectionIds);
      return row && row.n === connectionIds.length ? toRfc3339(row.oldest) : null;
    });
  }
}
