/**
 * Change events: written by sync (change detection, in the page's transaction), read by the events
 * feed, and announced after commit to whoever subscribed (webhook deliveries).
 *
 * Feed order and cursors use `seq`. A sequence value is taken at insert, not at commit, so two
 * transactions could commit out of seq order and a reader paging meanwhile would step over the
 * late one. Every event insert therefore first takes a transaction-level advisory lock per tenant
 * (`insert` below): while one transaction of a tenant holds seqs it has not committed, no other can
 * take newer ones, so the tenant's committed seqs only ever grow at the end and `seq > cursor`
 * never skips or repeats. The lock is taken only when a page has events, as its last statement
 * before commit, so it is held for milliseconds; it works the same on PGlite (one session, where
 * it is always free) and PostgreSQL. A snapshot-xmin filter was the alternative, but xmin order is
 * not seq order (an older transaction can take a newer seq), so it does not close the gap.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Logger } from 'pino';
import { checkKindFilter, visibleWhere, type EventVisibility } from '../access/event-visibility';
import type { EventDraft } from './change-detector';
import { ServiceError } from '../errors/service-error';
import { listCursor, rowsToFetch, toPage, type Page } from '../shared/paging';

export type EventsCommittedHandler = (tenantId: string, eventIds: string[]) => Promise<void>;

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
const NAMES = COLUMNS.map(([c]) => `"${c}"`).join(', ');
const RECORDSET = [...COLUMNS.map(([c, , t]) => `"${c}" ${t}`), 'ord integer'].join(', ');
const INSERT_SQL =
  `INSERT INTO "events" (${NAMES}) SELECT ${NAMES} FROM jsonb_to_recordset($1::jsonb) AS x(${RECORDSET}) ORDER BY ord ` +
  'ON CONFLICT (tenant_id, dedupe_key) DO NOTHING RETURNING id';

export interface EventPageQuery {
  /** An exact kind, a family, sandbox_reset, or null for every kind the caller is granted. */
  kind: string | null;
  /** seq of the last event of the previous page (the decoded cursor). */
  after: string | null;
  /** Or the id of the last event the caller processed: the page starts right after it. */
  afterEventId?: string | null;
  limit: number;
  /** Only events written at or after this time (RFC 3339). */
  updatedSince?: string | null;
}

/** The feed pages oldest first on `seq`. */
export const EVENTS_CURSOR = listCursor('events', ['int']);

export class EventsService {
  private readonly handlers: EventsCommittedHandler[] = [];
  private logger: Logger | null = null;

  constructor(readonly ds: DataSource) {}

  useLogger(logger: Logger): void {
    this.logger = logger;
  }

  /** Subscribes to events once their transaction has committed (the webhooks feature does). */
  onEventsCommitted(handler: EventsCommittedHandler): void {
    this.handlers.push(handler);
  }

  /**
   * Inserts events in the caller's transaction; returns the ids actually inserted (a dedupe key
   * seen before inserts nothing). Call `emitCommitted` with them after the transaction commits.
   */
  async insert(manager: EntityManager, tenantId: string, drafts: EventDraft[]): Promise<string[]> {
    if (drafts.length === 0) return [];
    await this.lockFeed(manager, tenantId);
    const rows = drafts.map((d, ord) => {
      const values: Record<string, unknown> = { ...d, tenantId };
      const row: Record<string, unknown> = { ord };
      for (const [column, prop] of COLUMNS) {
        const v = values[prop];
        row[column] = v instanceof Date ? v.toISOString() : (v ?? null);
      }
      return row;
    });
    const inserted: { id: string }[] = await manager.query(INSERT_SQL, [JSON.stringify(rows)]);
    return inserted.map((r) => r.id);
  }

  /**
   * Any code that inserts events itself (sandbox reset, finding health rows) calls this first in
   * the same transaction, so that the tenant's feed stays in commit order (see the header).
   */
  async lockFeed(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [EVENTS_LOCK_NAMESPACE, tenantId]);
  }

  /** Tells the subscribers about committed events; a subscriber's failure never undoes them. */
  async emitCommitted(tenantId: string, eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    for (const handler of this.handlers) {
      try {
        await handler(tenantId, eventIds);
      } catch (err) {
        this.logger?.error({ err, tenantId, events: eventIds.length }, 'events subscriber failed');
      }
    }
  }

  /**
   * One page of the feed, oldest first, holding only the events the caller may see (the policy of
   * src/access/event-visibility.ts). Asking for a family the caller holds on no connection is grant_missing.
   */
  async page(tenantId: string, visibility: EventVisibility, query: EventPageQuery): Promise<Page<EventRow>> {
    checkKindFilter(visibility, query.kind);
    const params: unknown[] = [tenantId];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    let sql = `SELECT * FROM "events" WHERE tenant_id = $1 AND ${visibleWhere(visibility, query.kind, p)}`;
    if (query.after) sql += ` AND seq > ${p(query.after)}::bigint`;
    if (query.updatedSince) sql += ` AND created_at >= ${p(query.updatedSince)}::timestamptz`;
    if (query.afterEventId) {
      // Only an event this caller may see is a resume point (any kind it is granted, not only this filter's).
      const at = [tenantId];
      const q = (v: unknown) => { at.push(v as string); return `$${at.length}`; };
      const [row]: { seq: string }[] = await this.ds.query(
        `SELECT seq FROM "events" WHERE tenant_id = $1 AND id = ${q(query.afterEventId)}::uuid AND ${visibleWhere(visibility, null, q)}`, at);
      if (!row) throw new ServiceError('validation', 'after names no event of this tenant that this key can see.', { details: { field: 'after' } });
      sql += ` AND seq > ${p(row.seq)}::bigint`;
    }
    sql += ` ORDER BY seq LIMIT ${p(rowsToFetch(query.limit))}`;
    const rows: EventRow[] = await this.ds.query(sql, params);
    return toPage(rows, query.limit, EVENTS_CURSOR, (e) => [String(e.seq)]);
  }
}
