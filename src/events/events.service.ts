/**
 * Change events: written by sync (change detection, in the page's transaction), read by the events
 * feed, and announced after commit to whoever subscribed (webhook deliveries).
 *
 * Feed order and cursors use `seq`. A sequence value is taken at insert, not at commit, so two
 * transactions could commit out of seq order and a reader paging meanwhile would step over the
 * late one. Every event insert therefore first takes a transaction-level advisory lock per tenant
 * (in the insert's own statement, before its first row takes a seq: events.store.ts): while one
 * transaction of a tenant holds seqs it has not committed, no other can take newer ones, so the
 * tenant's committed seqs only ever grow at the end and `seq > cursor` never skips or repeats. The
 * lock is taken only when a page has events, by its last statement before commit, so it is held for
 * milliseconds; it works the same on PGlite (one session, where it is always free) and PostgreSQL. A snapshot-xmin filter was the alternative, but xmin order is
 * not seq order (an older transaction can take a newer seq), so it does not close the gap.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';
import { checkKindFilter, type EventVisibility } from '../access/event-visibility';
import type { EventDraft } from './change-detector';
import { ServiceError } from '../errors/service-error';
import { listCursor, toPage, type Page } from '../shared/paging';
import { EventsStore, type EventRow, type IsvWideScope } from './events.store';

/** Event drafts written out ahead of their insert (EventsService.prepare). */
export interface PreparedEvents { rows: string[] }

/** Events of a tenant (or an ISV's own, of no tenant) that have committed: webhooks fan them out. */
export interface EventsCommitted { tenantId: string; eventIds: string[] }
export interface IsvEventsCommitted { isvId: string; eventIds: string[] }

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A tenant's events committed (after the page's, or any writer's, transaction). */
    'events.committed': CommittedReaction<EventsCommitted>;
    /** An ISV's own events (no tenant) committed. */
    'events.isv_committed': CommittedReaction<IsvEventsCommitted>;
  }
}

export type { EventRow, IsvWideScope } from './events.store';

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
/** The ISV-wide feed (`GET /events`) pages the same way. */
export const ISV_EVENTS_CURSOR = listCursor('isv_events', ['int']);

export class EventsService {
  private readonly store: EventsStore;

  /** `changes`: where committed events are told (`events.committed`, `events.isv_committed`; the webhooks feature reacts). */
  constructor(readonly ds: DataSource, private readonly changes: CommittedChanges = new CommittedChanges()) {
    this.store = new EventsStore(ds);
  }

  /**
   * Inserts events in the caller's transaction, under the tenant's feed lock (see the header); returns
   * the ids actually inserted (a dedupe key seen before inserts nothing). Call `emitCommitted` with them
   * after the transaction commits. Whatever writes events goes through here. `drafts` may be written out
   * before the transaction (`prepare`), so that it holds only the statement.
   */
  async insert(manager: EntityManager, tenantId: string, drafts: EventDraft[] | PreparedEvents): Promise<string[]> {
    const rows = Array.isArray(drafts) ? this.store.draftRows(drafts) : drafts.rows;
    if (rows.length === 0) return [];
    return this.store.insert(manager, tenantId, rows);
  }

  /** Inserts an ISV's own events (no tenant) in the caller's transaction; `emitCommittedForIsv` after commit. */
  async insertForIsv(manager: EntityManager, isvId: string, drafts: EventDraft[]): Promise<string[]> {
    const rows = this.store.draftRows(drafts);
    if (rows.length === 0) return [];
    return this.store.insertForIsv(manager, isvId, rows);
  }

  /** Tells `events.isv_committed` of an ISV's own committed events; a reaction's failure never undoes them. */
  async emitCommittedForIsv(isvId: string, eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.changes.publish('events.isv_committed', { isvId, eventIds }, { isvId, events: eventIds.length });
  }

  /**
   * One page of the ISV-wide feed (`GET /events`): the events of every tenant the caller sees that it may
   * see there, and its own events of no tenant, oldest first on `seq` (the same kind, after and cursor rules
   * as a tenant's feed). Pages never skip an event committed late (EventsStore.isvWidePage's horizon).
   */
  async isvWidePage(scope: IsvWideScope, query: EventPageQuery): Promise<Page<EventRow>> {
    checkKindFilter(scope.visibility, query.kind);
    let resumeSeq: string | null = null;
    if (query.afterEventId) {
      resumeSeq = await this.store.isvWideSeq(scope, query.afterEventId);
      if (resumeSeq === null) throw new ServiceError('validation', 'after names no event that this key can see.', { details: { field: 'after' } });
    }
    const rows = await this.store.isvWidePage(scope, query, resumeSeq);
    return toPage(rows, query.limit, ISV_EVENTS_CURSOR, (e) => [String(e.seq)]);
  }

  /** Drafts written out for a later insert, in their order. */
  prepare(drafts: EventDraft[]): PreparedEvents {
    return { rows: this.store.draftRows(drafts) };
  }

  /** Tells `events.committed` of a tenant's committed events; a reaction's failure never undoes them. */
  async emitCommitted(tenantId: string, eventIds: string[]): Promise<void> {
    if (eventIds.length === 0) return;
    await this.changes.publish('events.committed', { tenantId, eventIds }, { tenantId, events: eventIds.length });
  }

  /**
   * One page of the feed, oldest first, holding only the events the caller may see (the policy of
   * src/access/event-visibility.ts). Asking for a family the caller holds on no connection is grant_missing.
   */
  async page(tenantId: string, visibility: EventVisibility, query: EventPageQuery): Promise<Page<EventRow>> {
    checkKindFilter(visibility, query.kind);
    let resumeSeq: string | null = null;
    if (query.afterEventId) {
      // Only an event this caller may see is a resume point (any kind it is granted, not only this filter's).
      resumeSeq = await this.store.visibleSeq(tenantId, query.afterEventId, visibility);
      if (resumeSeq === null) throw new ServiceError('validation', 'after names no event of this tenant that this key can see.', { details: { field: 'after' } });
    }
    const rows = await this.store.page(tenantId, visibility, query, resumeSeq);
    return toPage(rows, query.limit, EVENTS_CURSOR, (e) => [String(e.seq)]);
  }
}
