/**
 * The events feed's store (docs/architecture.md, Events and webhooks): the tenant's feed lock, the
 * insert of drafted events and the feed's pages. Why the lock exists and when it is taken is told in
 * events.service.ts; which events a caller may see is src/access/event-visibility.ts's SQL predicate.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { visibleWhere, type EventVisibility } from '../access/event-visibility';
import { rowsToFetch } from '../shared/paging';
import type { EventDraft } from './change-detector';

/** A stored event row as the feed reads it (snake_case columns). */
export type EventRow = Record<string, any> & { id: string; seq: string; kind: string };

/** Namespace of our advisory locks (first key of the two-key form): 'EVNT'. */
const EVENTS_LOCK_NAMESPACE = 0x45564e54 & 0x7fffffff;

const COLUMNS: [column: string, prop: keyof EventDraft | 'tenantId', sqlType: string][] = [
  ['tenant_id', 'tenantId', 'uuid'], ['connection_id', 'connectionId', 'uuid'], ['kind', 'kind', 'text'], ['type', 'type', 'text'],
  ['dedupe_key', 'dedupeKey', 'text'], ['occurred_at', 'occurredAt', 'timestamptz'], ['actor', 'actor', 'text'],
  ['summary', 'summary', 'text'], ['subject_ref', 'subjectRef', 'text'], ['incident_id', 'incidentId', 'text'],
  ['canonical_ticket_id', 'canonicalTicketId', 'uuid'], ['canonical_device_id', 'canonicalDeviceId', 'uuid'],
  ['canonical_company_id', 'canonicalCompanyId', 'uuid'], ['previous_status', 'previousStatus', 'text'],
  ['new_status', 'newStatus', 'text'], ['vendor', 'vendor', 'text'], ['vendor_id', 'vendorId', 'text'],
  ['vendor_url', 'vendorUrl', 'text'], ['detail', 'detail', 'jsonb'],
];
/**
 * The drafts go as one JSON array of value arrays (in COLUMNS order, tenant aside: $2), inserted in their
 * order (the feed's seq is taken row by row): arrays of plain values are the cheapest JSON to write here
 * and to take apart there, where an object per event repeated every key. The tenant's feed lock
 * (events.service.ts) is taken in the same statement, before any row takes its seq: every row comes out of
 * a join with the lock's one-row CTE, so none exists before the lock is held. One round trip fewer in
 * each page's transaction, which on a busy process is one wait fewer for its event loop.
 */
const DRAFT_COLUMNS = COLUMNS.filter(([column]) => column !== 'tenant_id');
const INSERT_SQL =
  `WITH feed_lock AS MATERIALIZED (SELECT pg_advisory_xact_lock($3::int, hashtext($4::text))) ` +
  `INSERT INTO "events" ("tenant_id", ${DRAFT_COLUMNS.map(([c]) => `"${c}"`).join(', ')}) ` +
  `SELECT $2::uuid, ${DRAFT_COLUMNS.map(([, , t], k) => (t === 'jsonb' ? `NULLIF(v->${k}, 'null')` : `(v->>${k})::${t}`)).join(', ')} ` +
  'FROM feed_lock, jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(v, ord) ORDER BY ord ' +
  'ON CONFLICT (tenant_id, dedupe_key) DO NOTHING RETURNING id';

/**
 * An ISV's own events (no tenant: src/events/connection-state.ts, a connect session for a new MSP that
 * expired), under the ISV's feed lock (the same namespace, keyed `isv:<id>`), deduped per ISV.
 */
const ISV_INSERT_SQL =
  `WITH feed_lock AS MATERIALIZED (SELECT pg_advisory_xact_lock($3::int, hashtext($4::text))) ` +
  `INSERT INTO "events" ("tenant_id", "isv_id", ${DRAFT_COLUMNS.map(([c]) => `"${c}"`).join(', ')}) ` +
  `SELECT NULL, $2::uuid, ${DRAFT_COLUMNS.map(([, , t], k) => (t === 'jsonb' ? `NULLIF(v->${k}, 'null')` : `(v->>${k})::${t}`)).join(', ')} ` +
  'FROM feed_lock, jsonb_array_elements($1::jsonb) WITH ORDINALITY AS x(v, ord) ORDER BY ord ' +
  'ON CONFLICT ("isv_id", "dedupe_key") WHERE "tenant_id" IS NULL DO NOTHING RETURNING id';

/** The feed lock's key of an ISV's own events. */
export const isvFeedKey = (isvId: string) => `isv:${isvId}`;

/** What the ISV-wide feed shows one caller (AccessService.isvWideVisibility). */
export interface IsvWideScope {
  tenantIds: readonly string[];
  /** The ISV whose own events (no tenant) it lists; null for the MSP key and admin. */
  isvId: string | null;
  visibility: EventVisibility;
  /** Tenants where health rows that name no connection are visible to it. */
  healthTenants: readonly string[];
}

export class EventsStore {
  constructor(private readonly ds: DataSource) {}

  /** Inserts an ISV's own events (draftRows) under its feed lock; answers the ids inserted. */
  async insertForIsv(manager: EntityManager, isvId: string, rows: string[]): Promise<string[]> {
    const inserted: { id: string }[] = await manager.query(ISV_INSERT_SQL, [`[${rows.join(',')}]`, isvId, EVENTS_LOCK_NAMESPACE, isvFeedKey(isvId)]);
    return inserted.map((r) => r.id);
  }

  /**
   * The ISV-wide feed's predicate: the caller's events of every tenant it sees (the one visibility policy,
   * over all of them at once), and its own events of no tenant.
   */
  private isvWideWhere(scope: IsvWideScope, filter: string | null, p: (v: unknown) => string): string {
    const tenantEvents = `(tenant_id = ANY(${p(scope.tenantIds)}::uuid[]) AND ${visibleWhere(scope.visibility, filter, p)}` +
      ` AND NOT (kind = 'health' AND connection_id IS NULL AND tenant_id <> ALL(${p(scope.healthTenants)}::uuid[])))`;
    if (!scope.isvId) return tenantEvents;
    const noGrant = { families: { ticket: [], device: [], company: [], health: [] } } as EventVisibility;
    return `(${tenantEvents} OR (tenant_id IS NULL AND isv_id = ${p(scope.isvId)}::uuid AND ${visibleWhere(noGrant, filter, p)}))`;
  }

  /**
   * The ISV-wide feed's horizon: the highest seq below which every event of the scope has committed or
   * never will. Seqs are taken in one order across tenants but committed per tenant, so the sequence's last
   * value is read first and then every tenant's (and the ISV's) feed lock is taken shared: an insert that
   * took a seq up to that value holds its lock until it commits (events.service.ts), so once every lock
   * was had, nothing at or below the horizon is still to come. Run in the page's transaction.
   */
  private async horizon(m: EntityManager, scope: IsvWideScope): Promise<string> {
    const [seq]: { last_value: string; is_called: boolean }[] = await m.query('SELECT last_value, is_called FROM events_seq_seq');
    const keys = [...scope.tenantIds, ...(scope.isvId ? [isvFeedKey(scope.isvId)] : [])];
    if (keys.length) await m.query('SELECT count(pg_advisory_xact_lock_shared($1::int, hashtext(k))) FROM unnest($2::text[]) AS k', [EVENTS_LOCK_NAMESPACE, keys]);
    return seq?.is_called ? String(seq.last_value) : '0';
  }

  /** The seq of an event the caller may see in the ISV-wide feed; else null. */
  async isvWideSeq(scope: IsvWideScope, eventId: string): Promise<string | null> {
    const params: unknown[] = [eventId];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    const [row]: { seq: string }[] = await this.ds.query(`SELECT seq FROM "events" WHERE id = $1::uuid AND ${this.isvWideWhere(scope, null, p)}`, params);
    return row ? row.seq : null;
  }

  /** One page of the ISV-wide feed, oldest first on seq, up to the horizon (one more row than the limit). */
  isvWidePage(scope: IsvWideScope, query: { kind: string | null; after: string | null; updatedSince?: string | null; limit: number }, resumeSeq: string | null): Promise<EventRow[]> {
    return this.ds.transaction(async (m) => {
      const horizon = await this.horizon(m, scope);
      const params: unknown[] = [horizon];
      const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
      let sql = `SELECT * FROM "events" WHERE seq <= $1::bigint AND ${this.isvWideWhere(scope, query.kind, p)}`;
      if (query.after) sql += ` AND seq > ${p(query.after)}::bigint`;
      if (query.updatedSince) sql += ` AND created_at >= ${p(query.updatedSince)}::timestamptz`;
      if (resumeSeq !== null) sql += ` AND seq > ${p(resumeSeq)}::bigint`;
      sql += ` ORDER BY seq LIMIT ${p(rowsToFetch(query.limit))}`;
      return m.query(sql, params);
    });
  }

  /** Each draft as the insert's JSON carries it (one array of values per draft): work that needs no transaction. */
  draftRows(drafts: EventDraft[]): string[] {
    return drafts.map((d) => JSON.stringify(DRAFT_COLUMNS.map(([, prop]) => {
      const v = d[prop as keyof EventDraft];
      return v instanceof Date ? v.toISOString() : (v ?? null);
    })));
  }

  /**
   * Inserts the drafts (draftRows) in order under the tenant's feed lock; answers the ids inserted (a
   * dedupe key seen before inserts nothing).
   */
  async insert(manager: EntityManager, tenantId: string, rows: string[]): Promise<string[]> {
    const inserted: { id: string }[] = await manager.query(INSERT_SQL, [`[${rows.join(',')}]`, tenantId, EVENTS_LOCK_NAMESPACE, tenantId]);
    return inserted.map((r) => r.id);
  }

  /** The seq of the tenant's event `eventId` when the caller may see it (any kind it is granted); else null. */
  async visibleSeq(tenantId: string, eventId: string, visibility: EventVisibility): Promise<string | null> {
    const at = [tenantId];
    const q = (v: unknown) => { at.push(v as string); return `$${at.length}`; };
    const [row]: { seq: string }[] = await this.ds.query(
      `SELECT seq FROM "events" WHERE tenant_id = $1 AND id = ${q(eventId)}::uuid AND ${visibleWhere(visibility, null, q)}`, at);
    return row ? row.seq : null;
  }

  /** The rows of one page of the feed, oldest first (one more than the limit: the next page's marker). */
  page(tenantId: string, visibility: EventVisibility, query: { kind: string | null; after: string | null; updatedSince?: string | null; limit: number }, resumeSeq: string | null): Promise<EventRow[]> {
    const params: unknown[] = [tenantId];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    let sql = `SELECT * FROM "events" WHERE tenant_id = $1 AND ${visibleWhere(visibility, query.kind, p)}`;
    if (query.after) sql += ` AND seq > ${p(query.after)}::bigint`;
    if (query.updatedSince) sql += ` AND created_at >= ${p(query.updatedSince)}::timestamptz`;
    if (resumeSeq !== null) sql += ` AND seq > ${p(resumeSeq)}::bigint`;
    sql += ` ORDER BY seq LIMIT ${p(rowsToFetch(query.limit))}`;
    return this.ds.query(sql, params);
  }
}
