/**
 * The life of a page of vendor records, in one module (docs/architecture.md, Sync). A resource's read is
 * its pages, each through the same steps, in this order:
 *
 *  1. fetch    the connector's next page (connectors/*), completed where the connector asks for the store's
 *              answer first (PageCompletion: compareStored, then its per-record calls), and prepared (stored
 *              form, hashes, row values: RecordWriter.prepare) while the page before it is written;
 *  2. compare  a full re-read's page against the store: a page the store holds as fetched (a quiet RMM list
 *              every few seconds) ends here, with no transaction and no reaction (comparePage);
 *  3. plan     what its write will do, worked out before the transaction (RecordWriter.expect), and what each
 *              reaction prepares from that plan (change detection drafts the updates' events) (planPage);
 *  4. write    the records, and inside the same transaction every `records.page_written` reaction (the
 *              events of what changed, src/events/change-listener.ts); a page of one statement that no
 *              reaction writes with is that statement alone; a page the store refuses is written again
 *              carefully, its refused records quarantined (writePage);
 *  5. account  the counts of the resource's report, each quarantined record audited, the watermark (accountPage);
 *  6. notify   once the transaction has committed, what the reactions owe it (`events.committed`, whose
 *              reaction enqueues the webhook deliveries, src/webhooks/feature.ts), in page order while the next
 *              page is fetched and written (notifyAfterCommit).
 *
 * After the last page, the deletion pass (deletions.ts): what a complete listing no longer holds leaves the
 * store, in one transaction with the same reactions (removeVanished).
 *
 * Scheduling and accounting of the whole sync (claims, budget, watermark and sync state) stay in
 * sync.service.ts, which calls `readResource` once per resource.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Logger } from 'pino';
import type { Connection } from '../../entities';
import type { FetchedPage, FetchedRecord, ReadConnector, SyncContext, SyncResource } from '../connectors/types';
import type { AuditService } from '../audit/audit.service';
import type { AfterCommit, CommittedChanges } from '../shared/committed-changes';
import { PageRefusedError, type ExpectedPageWrite, type PageWriteResult, type PreparedPage, type RecordWriter } from './record-writer';
import { listIds, type DeletionScanner } from './deletions';
import { escapeStoredText } from './stored-text';
import type { SyncStatesStore } from './sync-states.store';
import { Transactions } from '../db/transactions';

/** The page its reactions hear of. */
export interface PageScope { tenantId: string; connection: Connection; resource: SyncResource; baseline: boolean }

/**
 * A reaction to a written page (`records.page_written`). `Prepared`: what it works out from the plan, before
 * the page's transaction.
 */
export interface PageReaction<Prepared = unknown> {
  /**
   * Called before the page's transaction where the write is known in advance (RecordWriter.expect): work
   * done here is not done while the transaction is open. What it answers comes back to `written` when the
   * write did what was expected (PageWriteResult.asExpected).
   */
  prepare?(scope: PageScope, expected: ExpectedPageWrite): Prepared | undefined;
  /**
   * Whether `written` writes to the store for a write that goes as `expected` (absent: it never does, it
   * only reads the result). A page whose write is one statement and that no reaction writes with is written
   * without a transaction (RecordWriter.writeAlone); `written` is then called after that statement.
   */
  writesWith?(scope: PageScope, expected: ExpectedPageWrite): boolean;
  /**
   * Called inside the page's transaction (or the deletion pass's) with what changed: change detection
   * writes events here; a failure undoes the page. It may return work to run once the transaction has
   * committed (announce the events).
   */
  written(manager: EntityManager, scope: PageScope, result: PageWriteResult, prepared?: Prepared): Promise<void | AfterCommit>;
}

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A page of records (or the deletion pass) is being written: reactions run inside its transaction. */
    'records.page_written': PageReaction;
  }
}

/** One resource's read, as sync.service.ts starts it. */
export interface ResourceRead {
  connection: Connection;
  connector: ReadConnector;
  resource: SyncResource;
  ctx: SyncContext;
  /** The resource's first sync: an import, which raises no events. */
  baseline: boolean;
  incremental: boolean;
  /** A forced full sync (SyncOptions.full): every record rewritten. */
  full: boolean;
  /** When the read began: the records' synced_at. */
  started: Date;
  /** The digest of the one-page listing the last check found quiet (sync_states.quiet_listing), and the state's row. */
  knownListing: string | null;
  stateId: string | undefined;
  watermark: Date | null;
}

/** What a resource's read counted (ResourceReport's counts). */
export interface ResourceCounts { fetched: number; created: number; updated: number; unchanged: number; quarantined: number; deleted?: number }

/** What a resource's read ends with, for its sync state. */
export interface ResourceReadEnd {
  watermark: Date | null;
  /** The digest of a quiet one-page listing with nothing left to settle, else null (sync_states.quiet_listing). */
  listing: string | null;
}

/** A resource's read under way: what its pages share. */
interface Pass extends ResourceRead {
  scope: PageScope;
  counts: ResourceCounts;
  /** A full listing's ids in stored form, for the deletion pass; null on an incremental read. */
  seen: Set<string> | null;
  pagesRead: number;
  /** The first page was the whole listing, and nothing is stored beside it: nothing vanished. */
  nothingBeyond: boolean;
  listing: string | null;
  /** What each committed page owes, in page order; the resource is not done before all of it ran. */
  announced: Promise<void>;
}

export class PagePipeline {
  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(
    ds: DataSource,
    private readonly writer: RecordWriter,
    private readonly changes: CommittedChanges,
    private readonly statesStore: SyncStatesStore,
    private readonly deletions: DeletionScanner,
    private readonly audit: AuditService,
    private readonly logger: Logger,
  ) {
    this.transactions = new Transactions(ds);}

  /**
   * Every page of one resource through its steps, then the deletion pass; `counts` is filled as pages
   * commit. A failure is thrown once what committed pages owe has run.
   */
  async readResource(read: ResourceRead, counts: ResourceCounts): Promise<ResourceReadEnd> {
    const { connection, resource, baseline } = read;
    const pass: Pass = {
      ...read, counts, scope: { tenantId: connection.tenantId, connection, resource, baseline },
      seen: read.incremental ? null : new Set<string>(), pagesRead: 0, nothingBeyond: false, listing: null, announced: Promise.resolve(),
    };
    try {
      const scope = { tenantId: connection.tenantId, connectionId: connection.id };
      // Step 1, fetch: the next page is fetched and prepared while this one is written (the vendor, the page's own work and the store side by side).
      // A page the connector completes with the store's answer (PageCompletion) is compared first, outside any transaction.
      const pages = prefetch(read.connector.fetch(resource, read.ctx), async (page) => {
        const completion = (page as FetchedPage).completion;
        if (completion) await completion.complete(await this.writer.compareStored(resource, scope, page, completion.bookkeeping, read.started));
        return this.writer.prepare(resource, scope, page as FetchedRecord[], read.started);
      });
      for await (const prepared of pages) await this.runPage(pass, prepared);
      await pass.announced;
      await this.deletionPass(pass);
    } catch (err) {
      // Pages that committed before the failure are announced all the same.
      await pass.announced.catch(() => undefined);
      throw err;
    }
    return { watermark: pass.watermark, listing: pass.listing };
  }

  /** One page through its steps. */
  private async runPage(pass: Pass, prepared: PreparedPage): Promise<void> {
    pass.counts.fetched += prepared.page.length;
    if (pass.seen) for (const rec of prepared.page) pass.seen.add(escapeStoredText(rec.sourceId));
    const quiet = await this.comparePage(pass, prepared);
    const afterCommit: AfterCommit[] = [];
    const result = quiet ?? await this.writePage(pass, await this.planPage(pass, prepared), afterCommit);
    this.notifyAfterCommit(pass, afterCommit);
    await this.accountPage(pass, prepared, result);
  }

  /**
   * Step 2, compare: a full re-read's page the store already holds as fetched needs no transaction and tells
   * no reaction. Not tried where pages are mostly new or changed (a baseline, an incremental read, a forced
   * full sync): the try would cost them one more read. A one-page listing whose digest the last check
   * recorded reads nothing of the store.
   */
  private async comparePage(pass: Pass, prepared: PreparedPage): Promise<PageWriteResult | null> {
    const quietRead = !pass.incremental && !pass.baseline && !pass.full;
    // Only a first page can be a listing recorded whole (a one-page listing).
    const digest = quietRead && pass.pagesRead === 0 ? this.writer.listingDigest(prepared) : null;
    const quiet = !quietRead ? null
      : digest !== null && digest === pass.knownListing ? this.writer.knownPage(prepared)
      : await this.writer.unchangedPage(this.transactions.outside, prepared);
    pass.nothingBeyond = ++pass.pagesRead === 1 && quiet?.storedBeyondPage === false;
    pass.listing = pass.nothingBeyond && quiet?.nothingToSettle === true ? digest : null;
    return quiet;
  }

  /** Step 3, plan: the write worked out before the transaction (the stored rows read then, none on a first read), and what each reaction prepares from it. */
  private async planPage(pass: Pass, prepared: PreparedPage): Promise<PlannedPage> {
    const expected = await this.writer.expect(prepared, pass.full, pass.baseline);
    const reactions = this.changes.reactionsTo('records.page_written').map(({ reaction }) => reaction);
    const preparedWork = expected ? reactions.map((r) => r.prepare?.(pass.scope, expected)) : [];
    return { prepared, expected, reactions, preparedWork };
  }

  /**
   * Step 4, write: the records and, in the same transaction, every reaction to the written page. One
   * statement with nothing beside it (no listing to forget, no reaction writing) needs no transaction.
   */
  private async writePage(pass: Pass, planned: PlannedPage, afterCommit: AfterCommit[]): Promise<PageWriteResult> {
    const { prepared, expected, reactions, preparedWork } = planned;
    const react = async (manager: EntityManager, res: PageWriteResult) => {
      for (const [i, reaction] of reactions.entries()) {
        const after = await reaction.written(manager, pass.scope, res, res.asExpected ? preparedWork[i] : undefined);
        if (after) afterCommit.push(after);
      }
    };
    const inTransaction = (page: PreparedPage, careful: boolean) => {
      // What an attempt that rolled back owed is not owed.
      const owedBefore = afterCommit.length;
      return this.transactions.run(async (manager) => {
        afterCommit.length = owedBefore;
        await this.forgetListing(pass, manager);
        const res = await this.writer.writePage(manager, page, pass.full, careful);
        await react(manager, res);
        return res;
      });
    };
    // A page the store refuses (a record no column takes) lost its transaction: written again, carefully.
    const written = (page: PreparedPage) => inTransaction(page, false).catch((err: unknown) => {
      if (err instanceof PageRefusedError) return inTransaction(page, true);
      throw err;
    });
    const alone = expected !== null && expected.statements <= 1 && pass.knownListing === null &&
      !reactions.some((r) => r.writesWith?.(pass.scope, expected));
    return alone ? this.writeAlone(prepared, react, inTransaction, written) : written(prepared);
  }

  /**
   * A page's planned write as its one statement, with no transaction (RecordWriter.writeAlone); the reactions
   * hear of what it wrote once it has. Records whose row moved after the plan are written after it, in a
   * transaction (`written`). A refused statement wrote nothing: the page is written carefully, as any refused one.
   */
  private async writeAlone(
    prepared: PreparedPage, react: (manager: EntityManager, res: PageWriteResult) => Promise<void>,
    inTransaction: (page: PreparedPage, careful: boolean) => Promise<PageWriteResult>, written: (page: PreparedPage) => Promise<PageWriteResult>,
  ): Promise<PageWriteResult> {
    let alone: Awaited<ReturnType<RecordWriter['writeAlone']>>;
    try {
      alone = await this.writer.writeAlone(prepared);
    } catch (err) {
      if (err instanceof PageRefusedError) return inTransaction(prepared, true);
      throw err;
    }
    await react(this.transactions.outside, alone.result);
    if (!alone.rest) return alone.result;
    const rest = await written(alone.rest);
    return {
      created: [...alone.result.created, ...rest.created], updated: [...alone.result.updated, ...rest.updated],
      unchanged: alone.result.unchanged + rest.unchanged, quarantined: [...(alone.result.quarantined ?? []), ...(rest.quarantined ?? [])],
    };
  }

  /** A write forgets the recorded quiet listing in its own transaction: a sync that dies after its page committed leaves nothing that would vouch for the store. */
  private async forgetListing(pass: Pass, manager: EntityManager): Promise<void> {
    if (pass.knownListing !== null && pass.stateId) await this.statesStore.forgetQuietListing(manager, pass.stateId);
  }

  /** Step 5, account: the page's counts, each quarantined record audited, the watermark it carries. */
  private async accountPage(pass: Pass, prepared: PreparedPage, result: PageWriteResult): Promise<void> {
    const { connection, resource, counts } = pass;
    counts.created += result.created.length;
    counts.updated += result.updated.length;
    counts.unchanged += result.unchanged;
    for (const q of result.quarantined ?? []) {
      counts.quarantined++;
      await this.audit.write({
        tenantId: connection.tenantId, action: 'sync.record_quarantined', outcome: 'failed', connectionId: connection.id,
        subjectRef: `${resource}/${q.sourceId}`,
        detail: { connector: connection.connector, resource, source_id: q.sourceId, error: q.error },
      });
      this.logger.warn({ connectionId: connection.id, connector: connection.connector, resource, sourceId: q.sourceId, err: q.error }, 'record quarantined');
    }
    for (const rec of prepared.page) {
      if (rec.vendorUpdatedAt && (!pass.watermark || rec.vendorUpdatedAt > pass.watermark)) pass.watermark = rec.vendorUpdatedAt;
    }
  }

  /** Step 6, notify: what the committed page owes its reactions runs after the pages before it, while the next page is fetched. */
  private notifyAfterCommit(pass: Pass, owed: AfterCommit[]): void {
    if (owed.length > 0) pass.announced = pass.announced.then(async () => { for (const after of owed) await after(); });
    // A page's announcement that failed surfaces at the end of the resource; keep it handled meanwhile.
    pass.announced.catch(() => undefined);
  }

  /** Every page arrived: what the vendor no longer lists leaves the store (deletions.ts). */
  private async deletionPass(pass: Pass): Promise<void> {
    const { connection, resource } = pass;
    const present = pass.seen ?? (this.deletions.due(connection.id, resource)
      ? await listIds(pass.connector, resource, { ...pass.ctx, since: null }) : null);
    if (!present) return;
    this.deletions.scanned(connection.id, resource);
    // The page's compare already answered whether anything else is stored (one statement fewer on a quiet RMM list).
    pass.counts.deleted = pass.nothingBeyond ? 0 : await this.removeVanished(pass, present);
  }

  /** The deletion pass's write: removes what the vendor no longer lists and tells the reactions, in one transaction. */
  private async removeVanished(pass: Pass, present: Set<string>): Promise<number> {
    const afterCommit: AfterCommit[] = [];
    const scope = { tenantId: pass.connection.tenantId, connectionId: pass.connection.id };
    // Nothing vanished (the usual case): one read, no transaction.
    if (!(await this.writer.store.anyVanished(this.transactions.outside, pass.resource, scope, present))) return 0;
    const deleted = await this.transactions.run(async (manager) => {
      await this.forgetListing(pass, manager);
      const rows = await this.writer.store.removeVanished(manager, pass.resource, scope, present);
      if (rows.length === 0) return rows;
      const result: PageWriteResult = { created: [], updated: [], unchanged: 0, quarantined: [], deleted: rows };
      for (const { reaction } of this.changes.reactionsTo('records.page_written')) {
        const after = await reaction.written(manager, pass.scope, result);
        if (after) afterCommit.push(after);
      }
      return rows;
    });
    for (const after of afterCommit) await after();
    return deleted.length;
  }
}

/** A page planned before its transaction (planPage): the write expected, the reactions and what each prepared. */
interface PlannedPage {
  prepared: PreparedPage;
  expected: ExpectedPageWrite | null;
  reactions: PageReaction[];
  preparedWork: unknown[];
}

/**
 * Iterates `source` one page ahead: the next page is being fetched, then made `ready`, while the caller
 * handles this one.
 */
async function* prefetch<T, U>(source: AsyncIterable<T>, ready: (page: T) => Promise<U>): AsyncGenerator<U> {
  const it = source[Symbol.asyncIterator]();
  const advance = () => it.next().then(async (r): Promise<IteratorResult<U, undefined>> => (r.done ? { done: true, value: undefined } : { done: false, value: await ready(r.value) }));
  let next = advance();
  try {
    for (;;) {
      const current = await next;
      if (current.done) return;
      next = advance();
      // A fetch that fails while the current page is written surfaces at the next await; keep it handled meanwhile.
      next.catch(() => undefined);
      yield current.value;
    }
  } finally {
    await it.return?.();
  }
}
