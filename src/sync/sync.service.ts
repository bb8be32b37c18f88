/**
 * Sync of one connection: every resource its connector knows, full on the first run and incremental
 * (the vendor's last-updated filter from the stored watermark) after. Each page is written in its own
 * transaction; a failure is recorded in sync_states (served by `status`) and re-thrown so the job
 * retries, and the last good data stays served. A record the store refuses does not fail its page:
 * the writer quarantines it, and here it is counted (report and sync_states.quarantined) and audited.
 */
import { EntityNotFoundError, type DataSource, type EntityManager } from 'typeorm';
import { TtlCache } from '../shared/ttl-cache';
import { Connection, SyncState } from '../../entities';
import type { Logger } from 'pino';
import { readConnector } from '../connectors/registry';
import type { FetchedRecord, SyncContext, SyncResource } from '../connectors/types';
import { VendorHttpClient, VendorHttpError } from '../connectors/vendor-http';
import type { SecretBox } from '../security/secret-box';
import type { AuditService } from '../audit/audit.service';
import { PageRefusedError, RecordWriter, SETTLED_AFTER_MS, type ExpectedPageWrite, type PageWriteResult, type PreparedPage } from './record-writer';
import type { ConnectionBudgets } from '../budget/connection-budgets';
import { anyVanished, DeletionScanner, listIds, removeVanished } from './deletions';
import { escapeStoredText } from './stored-text';
import { recordSync } from '../http/metrics';
import type { BudgetGate, BudgetLease } from '../budget/budget';
import { planFreshness, type FreshnessPlan } from './freshness';
import { SyncStatesStore } from './sync-states.store';
import { FollowingRuns } from '../shared/following-runs';

const NO_LEASE: BudgetLease = { release: async () => undefined };

/** How a connection's sync ended, as its listeners hear it: whole, or the failure (as met, and as recorded) that ended it. */
export type SyncOutcome = { ok: true } | { ok: false; error: unknown; message: string; resource: string };

export interface SyncOptions {
  /** Ignore watermarks and rewrite every record. */
  full?: boolean;
  /** Only these resources (a refresh after our own write); default every resource of the connector. */
  resources?: SyncResource[];
  /**
   * A scheduled check (src/sync/sweeper.ts) of these resources, already claimed: only they are checked, and one
   * with a "changed since?" call is read only when that call says something changed. Without it, the sync
   * claims every resource it reads, so that scheduled checks leave them to it meanwhile.
   */
  claimed?: ReadonlySet<SyncResource>;
  /**
   * The connection and its states, read after the claim with those of the other connections the sweep claimed
   * (connectionsWithStates): one statement a sweep, not one a check. Without it, a scheduled check reads its own.
   */
  loaded?: ConnectionWithStates;
  /**
   * The sandbox's rehearsed failure (sandbox.service.ts, rehearseFailure): a failure it caused on purpose is
   * recorded and audited as any other, but not logged, as there is nothing for an operator to act on.
   */
  rehearsed?: boolean;
}

/** A connection and every one of its sync states, as a scheduled check reads them. */
export interface ConnectionWithStates { connection: Connection; states: SyncState[] }

export interface ResourceReport {
  resource: SyncResource;
  /** `probe`: a scheduled check whose "changed since?" call found nothing; nothing was read. */
  mode: 'full' | 'incremental' | 'probe';
  fetched: number;
  created: number;
  updated: number;
  unchanged: number;
  /** Records the store refused this run, kept in sync_quarantine. */
  quarantined: number;
  /** Records the vendor no longer lists, removed from the store (deletions.ts). */
  deleted?: number;
}

export interface SyncReport {
  connectionId: string;
  tenantId: string;
  connector: string;
  ok: boolean;
  error?: string;
  resources: ResourceReport[];
}

/** The page a listener hears of. */
export interface PageScope { tenantId: string; connection: Connection; resource: SyncResource; baseline: boolean }

/** What other features hear of a sync. `Prepared`: what a listener works out before a page's transaction. */
export interface SyncListener<Prepared = unknown> {
  /**
   * Called before the page's transaction where the write is known in advance (RecordWriter.expect): work
   * done here is not done while the transaction is open. What it answers comes back to onPageWritten when
   * the write did what was expected (PageWriteResult.asExpected).
   */
  beforePageWritten?(scope: PageScope, expected: ExpectedPageWrite): Prepared | undefined;
  /**
   * Whether onPageWritten writes to the store for a write that goes as `expected` (absent: it never does, it
   * only reads the result). A page whose write is one statement and that no listener writes with is written
   * without a transaction (RecordWriter.writeAlone); onPageWritten is then called after that statement.
   */
  writesWith?(scope: PageScope, expected: ExpectedPageWrite): boolean;
  /**
   * Called inside the page's transaction with what changed: change detection writes events here.
   * It may return a callback to run once the transaction has committed (enqueue webhook deliveries).
   */
  onPageWritten?(manager: EntityManager, scope: PageScope, result: PageWriteResult, prepared?: Prepared): Promise<void | (() => Promise<void>)>;
  /**
   * Called once after a connection's sync ended (whole or failed part-way): work owed to all its pages at once.
   * `outcome`: whether it ended whole, or the failure that ended it (the connection events classify it).
   */
  onSyncEnded?(scope: { tenantId: string; connection: Connection; outcome: SyncOutcome }): Promise<void>;
}

export class SyncService {
  private readonly writer: RecordWriter;
  private readonly listeners: SyncListener[] = [];
  private readonly statesStore: SyncStatesStore;
  /**
   * Syncs someone asked for (a caller, the refresh after our own write, a full read after a mapping change),
   * one at a time per connection and resources in this process: one asked for while such a sync runs starts
   * after it, from the watermark it saved and with the connection as it is then, shared by every caller that
   * came meanwhile, full if any of them asked for full (docs/architecture.md, Freshness).
   */
  private readonly askedFor = new FollowingRuns<SyncReport, SyncOptions>(
    // A run shared with any caller but the sandbox's rehearsal logs its failure.
    (a, b) => ({ resources: a.resources, full: a.full === true || b.full === true, rehearsed: a.rehearsed === true && b.rehearsed === true }),
  );
  /** The operator's SYNC_INTERVAL_SECONDS for every resource (null: by cadence and change rate; src/sync/freshness.ts). */
  fixedIntervalMs: number | null = null;

  constructor(
    private readonly ds: DataSource,
    private readonly box: SecretBox,
    private readonly audit: AuditService,
    private readonly logger: Logger,
    private readonly http: VendorHttpClient = new VendorHttpClient(),
    private readonly budgets: ConnectionBudgets | null = null,
    /** The vendors' day the connectors read (a contract's current billing period); tests fix it. */
    private readonly vendorNow: () => number = Date.now,
    readonly deletions: DeletionScanner = new DeletionScanner(),
  ) {
    this.writer = new RecordWriter(ds);
    this.statesStore = new SyncStatesStore(ds);
  }

  /** The freshness plan of a connection from its states (src/sync/freshness.ts). */
  planOf(connection: Pick<Connection, 'id' | 'connector' | 'settings'>, states: Pick<SyncState, 'resource' | 'quietChecks' | 'callsPerCheck'>[]): FreshnessPlan {
    const byResource = new Map(states.map((s) => [s.resource, s]));
    const requestsPerHour = this.budgets ? this.budgets.limits(connection).requestsPerHour : Number.MAX_SAFE_INTEGER;
    return planFreshness(readConnector(connection.connector).resources.map((resource) => ({
      resource, quietChecks: byResource.get(resource)?.quietChecks ?? 0, callsPerCheck: byResource.get(resource)?.callsPerCheck ?? null,
    })), requestsPerHour, this.fixedIntervalMs);
  }

  /** The tick of a connection's plan (how often its checks come round) as its stored states make it now. */
  async currentTick(connection: Pick<Connection, 'id' | 'connector' | 'settings'>): Promise<number> {
    return this.planOf(connection, await this.ds.getRepository(SyncState).findBy({ connectionId: connection.id })).tickMs;
  }

  addListener<Prepared>(listener: SyncListener<Prepared>): void {
    this.listeners.push(listener as SyncListener);
  }

  async syncConnection(connectionId: string, opts: SyncOptions = {}): Promise<SyncReport> {
    if (opts.claimed) return this.runSync(connectionId, opts);
    const key = `${connectionId} ${opts.resources ? [...opts.resources].sort().join(',') : '*'}`;
    return this.askedFor.run(key, opts, (asked) => this.runSync(connectionId, asked));
  }

  private async runSync(connectionId: string, opts: SyncOptions): Promise<SyncReport> {
    const syncStarted = performance.now(); // /metrics
    const due = opts.claimed ?? null;
    // A scheduled check reads its connection and states in one statement (a hot resource is checked every few
    // seconds), or the sweep read them for it; another sync claims its resources first, which may make their
    // states, and reads them after.
    const { connection, states: claimedStates } = opts.loaded ?? await this.connectionOf(connectionId, due !== null);
    const connector = readConnector(connection.connector);
    const credentials = this.box.openJson<Record<string, string>>(connection.credentialsEncrypted);
    const report: SyncReport = {
      connectionId, tenantId: connection.tenantId, connector: connection.connector, ok: true, resources: [],
    };
    const states = this.ds.getRepository(SyncState);
    // Sync waits behind writes inside the connection's one budget; it slows down, it does not fail on it.
    // Every attempt is counted: what a check costs plans the next ones (src/sync/freshness.ts).
    let calls = 0;
    const gate = this.budgets ? this.budgets.gate(connection, 'sync') : null;
    const counted: BudgetGate = { connector: connection.connector, acquire: async () => { calls++; return gate ? gate.acquire() : NO_LEASE; } };
    const http = this.http.withBudget(counted);
    const concurrency = this.budgets ? this.budgets.limits(connection).concurrent : undefined;
    const wanted = connector.resources.filter((r) => !opts.resources || opts.resources.includes(r));
    if (!due) await this.statesStore.claimDue(connection.tenantId, connectionId, wanted, false);
    // A check with nothing claimed ends here: no vendor call, no write, nothing to tell.
    if (due && due.size === 0) return report;
    // The connection's states, read once: each checked resource's state, and the plan's history after.
    const stored = claimedStates ?? await states.findBy({ connectionId });
    const checked: SyncState[] = [];
    // Scheduled checks whose state is written once, with its next check (planNext): a probe that found
    // nothing, and a re-read of a synced resource. A first read or a sync someone asked for writes its state
    // as each resource ends, so that status follows it.
    const writtenWithPlan = new Set<SyncState>();
    // Reads this sync's resources share (SyncContext.shared): kept for the sync; a failed one is not kept.
    const sharedReads = new TtlCache<unknown>(Infinity);
    const shared = <T>(key: string, read: () => Promise<T>) => sharedReads.getOrLoad(key, read) as Promise<T>;

    for (const resource of wanted.filter((r) => !due || due.has(r))) {
      const state = stored.find((s) => s.resource === resource) ??
        states.create({ tenantId: connection.tenantId, connectionId, resource, lastStatus: 'never', recordsSeen: 0, quietChecks: 0 });
      checked.push(state);
      const callsBefore = calls;
      const incremental = !opts.full && connector.incremental.includes(resource) && state.watermark != null;
      const baseline = state.lastSyncedAt == null;
      const started = new Date();
      const ctx: SyncContext = {
        baseUrl: connection.baseUrl.replace(/\/$/, ''),
        credentials,
        statusMapping: connection.statusMapping,
        since: incremental ? state.watermark : null,
        http,
        now: this.vendorNow,
        concurrency,
        baseline,
        compareStored: (records, bookkeeping) =>
          this.writer.compareStored(resource, { tenantId: connection.tenantId, connectionId }, records, bookkeeping, started),
        shared,
      };
      if (due && incremental && await this.nothingChanged(connector, resource, ctx, state, connectionId).catch(() => false)) {
        // Confirmed current by one cheap call: nothing is read, the store is as fresh as this check.
        state.checkedAt = started;
        state.lastStatus = 'ok';
        state.lastError = null;
        state.quietChecks = (state.quietChecks ?? 0) + 1;
        state.callsPerCheck = averagedCost(state.callsPerCheck, calls - callsBefore);
        writtenWithPlan.add(state);
        report.resources.push({ resource, mode: 'probe', fetched: 0, created: 0, updated: 0, unchanged: 0, quarantined: 0 });
        continue;
      }
      const mode = incremental ? 'incremental' : 'full';
      state.lastAttemptAt = started;
      // Status shows a read under way: a sync someone asked for, or a first read. A scheduled re-read of a
      // synced resource (every few seconds on a hot RMM list) writes its state once, with its next check.
      if (due && !baseline) writtenWithPlan.add(state);
      else {
        state.lastStatus = 'running';
        await this.saveState(state);
      }

      const r: ResourceReport = { resource, mode, fetched: 0, created: 0, updated: 0, unchanged: 0, quarantined: 0 };
      let watermark = state.watermark;
      // What each committed page owes its listeners (webhook fan-out), in page order, while the next page is
      // fetched and written; the resource is not done (nor its watermark saved) before all of it ran.
      let announced: Promise<void> = Promise.resolve();
      try {
        const pages = connector.fetch(resource, ctx);
        // A full listing's ids, for the deletion pass (stored form, as rows are keyed).
        const seen = incremental ? null : new Set<string>();
        const scope = { tenantId: connection.tenantId, connectionId };
        // A full listing of one page the store holds as fetched, with nothing stored beside it: nothing vanished.
        let pagesRead = 0;
        let nothingBeyond = false;
        // Such a listing, nothing in it left to settle, is recorded by its digest (sync_states.quiet_listing): the next
        // check whose listing has the same digest reads nothing of the store. A write forgets it (forgetListing).
        const knownListing = state.quietListing ?? null;
        let listing: string | null = null;
        state.quietListing = null;
        const forgetListing = async (manager: EntityManager) => {
          if (knownListing !== null && state.id) await this.statesStore.forgetQuietListing(manager, state.id);
        };
        // Fetch and prepare the next page while this one is written: the vendor (HTTP), the page's own
        // work (stored form, hashes, rows) and the store work side by side.
        for await (const prepared of prefetch(pages, (page) => this.writer.prepare(resource, scope, page as FetchedRecord[], started))) {
          const { page } = prepared;
          r.fetched += page.length;
          if (seen) for (const rec of page) seen.add(escapeStoredText(rec.sourceId));
          const afterCommit: (() => Promise<void>)[] = [];
          // A full read's page the store already holds as fetched (a quiet RMM list every few seconds) needs no
          // transaction and tells no listener. Not tried where pages are mostly new or changed (a baseline, an
          // incremental read, a forced full sync): the try would cost them one more read.
          const quietRead = !incremental && !baseline && opts.full !== true;
          // Only a first page can be a listing recorded whole (a one-page listing).
          const digest = quietRead && pagesRead === 0 ? this.writer.listingDigest(prepared) : null;
          const quiet = !quietRead ? null
            : digest !== null && digest === knownListing ? this.writer.knownPage(prepared)
            : await this.writer.unchangedPage(this.ds.manager, prepared);
          nothingBeyond = ++pagesRead === 1 && quiet?.storedBeyondPage === false;
          listing = nothingBeyond && quiet?.nothingToSettle === true ? digest : null;
          const pageScope: PageScope = { tenantId: connection.tenantId, connection, resource, baseline };
          // Planned before the transaction (the stored rows read then, none on a first read); the listeners prepare from it.
          const expected = quiet ? null : await this.writer.expect(prepared, opts.full === true, baseline);
          const preparedWork = expected ? this.listeners.map((l) => l.beforePageWritten?.(pageScope, expected)) : [];
          const tell = async (manager: EntityManager, res: PageWriteResult) => {
            for (const [i, l] of this.listeners.entries()) {
              const after = await l.onPageWritten?.(manager, pageScope, res, res.asExpected ? preparedWork[i] : undefined);
              if (after) afterCommit.push(after);
            }
          };
          const write = (page: PreparedPage, careful: boolean) => {
            // What an attempt that rolled back owed is not owed.
            const owedBefore = afterCommit.length;
            return this.ds.transaction(async (manager) => {
              afterCommit.length = owedBefore;
              await forgetListing(manager);
              const res = await this.writer.writePage(manager, page, opts.full === true, careful);
              await tell(manager, res);
              return res;
            });
          };
          // A page the store refuses (a record no column takes) lost its transaction: written again, carefully.
          const written = (page: PreparedPage) => write(page, false).catch((err: unknown) => {
            if (err instanceof PageRefusedError) return write(page, true);
            throw err;
          });
          // One statement with nothing beside it needs no transaction: no listing to forget, no listener writing.
          const alone = expected !== null && expected.statements <= 1 && knownListing === null &&
            !this.listeners.some((l) => l.writesWith?.(pageScope, expected));
          const result = quiet ?? (alone ? await this.writeAlone(prepared, tell, write, written) : await written(prepared));
          const owed = afterCommit;
          if (owed.length > 0) announced = announced.then(async () => { for (const after of owed) await after(); });
          // A page's announcement that failed surfaces at the end of the resource; keep it handled meanwhile.
          announced.catch(() => undefined);
          r.created += result.created.length;
          r.updated += result.updated.length;
          r.unchanged += result.unchanged;
          for (const q of result.quarantined ?? []) {
            r.quarantined++;
            await this.audit.write({
              tenantId: connection.tenantId, action: 'sync.record_quarantined', outcome: 'failed', connectionId,
              subjectRef: `${resource}/${q.sourceId}`,
              detail: { connector: connection.connector, resource, source_id: q.sourceId, error: q.error },
            });
            this.logger.warn({ connectionId, connector: connection.connector, resource, sourceId: q.sourceId, err: q.error }, 'record quarantined');
          }
          for (const rec of page) {
            if (rec.vendorUpdatedAt && (!watermark || rec.vendorUpdatedAt > watermark)) watermark = rec.vendorUpdatedAt;
          }
        }
        await announced;
        // Every page arrived: what the vendor no longer lists leaves the store (deletions.ts).
        const present = seen ?? (this.deletions.due(connectionId, resource)
          ? await listIds(connector, resource, { ...ctx, since: null }) : null);
        if (present) {
          this.deletions.scanned(connectionId, resource);
          // The page's compare already answered whether anything else is stored (one statement fewer on a quiet RMM list).
          r.deleted = nothingBeyond ? 0 : await this.removeVanished(connection, resource, baseline, present, forgetListing);
        }
        // Null unless the listing was that one page (a second page clears it).
        state.quietListing = listing;
        state.lastStatus = 'ok';
        state.lastError = null;
        state.lastSyncedAt = new Date();
        state.checkedAt = started;
        state.lastMode = mode;
        state.watermark = watermark;
        state.recordsSeen = r.fetched;
        state.quarantined = r.quarantined;
        const changed = r.created + r.updated + (r.deleted ?? 0) > 0;
        state.quietChecks = changed ? 0 : (state.quietChecks ?? 0) + 1;
        // What a check costs from now on: not a first or forced full read of a resource read incrementally after.
        if (!baseline && !(opts.full && connector.incremental.includes(resource))) state.callsPerCheck = averagedCost(state.callsPerCheck, calls - callsBefore);
        if (!writtenWithPlan.has(state)) await this.saveState(state);
        report.resources.push(r);
      } catch (err) {
        // Pages that committed before the failure are announced all the same.
        await announced.catch(() => undefined);
        const message = describeSyncError(err);
        state.lastStatus = 'failed';
        state.lastError = message;
        // Written with its next check when its check was to be (planNext), else now.
        if (!writtenWithPlan.has(state)) await this.saveState(state);
        report.ok = false;
        report.error = `${resource}: ${message}`;
        report.resources.push(r);
        await this.audit.write({
          tenantId: connection.tenantId, action: 'sync.failed', outcome: 'failed', connectionId,
          detail: { connector: connection.connector, resource, error: message },
        });
        // A sandbox connection fails against our own simulators: nothing for an operator to act on (docs/architecture.md, Running it).
        if (!opts.rehearsed) this.logger[connection.settings?.fixture === true ? 'info' : 'warn']({ connectionId, connector: connection.connector, resource, err: message }, 'sync failed');
        await this.planNext(connection, stored, checked, writtenWithPlan, due);
        await this.ended(connection, { ok: false, error: err, message, resource });
        recordSync(connection.kind, report, syncStarted);
        throw new SyncFailedError(report);
      }
    }
    await this.planNext(connection, stored, checked, writtenWithPlan, due);
    // A scheduled check that changed nothing is not an event of the audit log (it runs every few seconds).
    const eventful = !due || report.resources.some((x) => x.created + x.updated + (x.deleted ?? 0) + x.quarantined > 0);
    if (eventful) await this.audit.write({
      tenantId: connection.tenantId, action: 'sync.completed', outcome: 'ok', connectionId,
      detail: {
        connector: connection.connector,
        resources: Object.fromEntries(report.resources.map((x) => [x.resource, { mode: x.mode, fetched: x.fetched, created: x.created, updated: x.updated, ...(x.quarantined ? { quarantined: x.quarantined } : {}) }])),
      },
    });
    await this.ended(connection, { ok: true });
    recordSync(connection.kind, report, syncStarted);
    return report;
  }

  /**
   * Connections with every one of their sync states, in one statement however many (a sweep claims checks
   * of many connections at once). A connection gone since its claim is not in the answer.
   */
  async connectionsWithStates(ids: readonly string[]): Promise<Map<string, ConnectionWithStates>> {
    if (ids.length === 0) return new Map();
    const found = await this.ds.getRepository(Connection).createQueryBuilder('c')
      .leftJoinAndMapMany('c.syncStates', SyncState, 's', 's.connection_id = c.id')
      .where('c.id IN (:...ids)', { ids: [...ids] }).getMany() as (Connection & { syncStates?: SyncState[] })[];
    return new Map(found.map((c) => {
      const states = c.syncStates ?? [];
      delete c.syncStates;
      return [c.id, { connection: c, states }];
    }));
  }

  /** The connection, and with `withStates` its sync states, in one statement. */
  private async connectionOf(id: string, withStates: boolean): Promise<{ connection: Connection; states: SyncState[] | null }> {
    if (!withStates) return { connection: await this.ds.getRepository(Connection).findOneByOrFail({ id }), states: null };
    const found = (await this.connectionsWithStates([id])).get(id);
    if (!found) throw new EntityNotFoundError(Connection, { id });
    return found;
  }

  /**
   * A page's planned write as its one statement, with no transaction (RecordWriter.writeAlone); the listeners
   * hear of what it wrote once it has. Records whose row moved after the plan are written after it, in a
   * transaction (`written`). A refused statement wrote nothing: the page is written carefully, as any refused one.
   */
  private async writeAlone(
    prepared: PreparedPage, tell: (manager: EntityManager, res: PageWriteResult) => Promise<void>,
    write: (page: PreparedPage, careful: boolean) => Promise<PageWriteResult>, written: (page: PreparedPage) => Promise<PageWriteResult>,
  ): Promise<PageWriteResult> {
    let alone: Awaited<ReturnType<RecordWriter['writeAlone']>>;
    try {
      alone = await this.writer.writeAlone(prepared);
    } catch (err) {
      if (err instanceof PageRefusedError) return write(prepared, true);
      throw err;
    }
    await tell(this.ds.manager, alone.result);
    if (!alone.rest) return alone.result;
    const rest = await written(alone.rest);
    return {
      created: [...alone.result.created, ...rest.created], updated: [...alone.result.updated, ...rest.updated],
      unchanged: alone.result.unchanged + rest.unchanged, quarantined: [...(alone.result.quarantined ?? []), ...(rest.quarantined ?? [])],
    };
  }

  /** What a check sets on a resource's state, in one statement (its row exists: the claim made it). */
  private async saveState(state: SyncState): Promise<void> {
    if (!state.id) { await this.ds.getRepository(SyncState).save(state); return; }
    await this.statesStore.writeChecks([{ state }]);
  }

  /**
   * "Anything changed since?" where the connector has the call, and only when the watermark's second is
   * settled (the last read began SETTLED_AFTER past it): a change in that second would hide from a strict
   * "after" filter, and the inclusive incremental read is what finds it. A deletion scan that is due reads.
   */
  private async nothingChanged(connector: ReturnType<typeof readConnector>, resource: SyncResource, ctx: SyncContext, state: SyncState, connectionId: string): Promise<boolean> {
    if (!connector.changedSince || !state.watermark || !state.lastAttemptAt) return false;
    if (state.lastAttemptAt.getTime() < state.watermark.getTime() + SETTLED_AFTER_MS) return false;
    if (this.deletions.due(connectionId, resource)) return false;
    const probe = connector.changedSince(resource, ctx);
    return probe === null ? false : !(await probe);
  }

  /** After a run: each resource's interval and next check (what makes it due again, src/sync/sweeper.ts) from the connection's plan. */
  private async planNext(
    connection: Connection, stored: SyncState[], checked: SyncState[], writtenWithPlan: Set<SyncState>, due: ReadonlySet<SyncResource> | null,
  ): Promise<void> {
    // The states as this run read and changed them (a state it made itself among them).
    const all = [...stored, ...checked.filter((c) => !stored.includes(c))];
    const plan = this.planOf(connection, all);
    const now = Date.now();
    // The scheduled checks' states, what they found and their next check, in one statement for the run.
    const planned: Parameters<SyncStatesStore['writeChecks']>[0] = [];
    const replanned: Parameters<SyncStatesStore['writePlans']>[0] = [];
    for (const s of all) {
      const interval = plan.intervals.get(s.resource as SyncResource);
      if (interval === undefined) continue;
      const done = checked.find((c) => c.resource === s.resource);
      // Checked: due again one interval after this check began (a failed one too: the vendor is not
      // hammered every check). Claimed by this run but not reached: due at once. Others: as they were.
      const nextCheckAt = done ? new Date((done.lastStatus === 'ok' ? done.checkedAt?.getTime() ?? now : now) + interval)
        : due?.has(s.resource as SyncResource) ? new Date(now) : s.nextCheckAt;
      const intervalSeconds = Math.round(interval / 1000);
      // A scheduled check's state: what it found and its next check, in one statement (other reads saved theirs as they ended).
      if (done && writtenWithPlan.has(done)) planned.push({ state: done, plan: { intervalSeconds, nextCheckAt } });
      else if (s.id && (intervalSeconds !== s.intervalSeconds || nextCheckAt?.getTime() !== s.nextCheckAt?.getTime())) {
        replanned.push({ id: s.id, intervalSeconds, nextCheckAt });
      }
    }
    await this.statesStore.writeChecks(planned);
    await this.statesStore.writePlans(replanned);
  }

  private async ended(connection: Connection, outcome: SyncOutcome): Promise<void> {
    for (const l of this.listeners) {
      await l.onSyncEnded?.({ tenantId: connection.tenantId, connection, outcome }).catch((err: Error) =>
        this.logger.error({ connectionId: connection.id, err: err.message }, 'a sync-ended listener failed'));
    }
  }

  /** The deletion pass: removes what the vendor no longer lists and tells the listeners, in one transaction. */
  private async removeVanished(
    connection: Connection, resource: SyncResource, baseline: boolean, present: Set<string>, beforeWrite: (manager: EntityManager) => Promise<void>,
  ): Promise<number> {
    const afterCommit: (() => Promise<void>)[] = [];
    // Nothing vanished (the usual case): one read, no transaction.
    if (!(await anyVanished(this.ds.manager, this.writer, resource, { tenantId: connection.tenantId, connectionId: connection.id }, present))) return 0;
    const deleted = await this.ds.transaction(async (manager) => {
      await beforeWrite(manager);
      const rows = await removeVanished(manager, this.writer, resource, { tenantId: connection.tenantId, connectionId: connection.id }, present);
      if (rows.length === 0) return rows;
      const result: PageWriteResult = { created: [], updated: [], unchanged: 0, quarantined: [], deleted: rows };
      for (const l of this.listeners) {
        const after = await l.onPageWritten?.(manager, { tenantId: connection.tenantId, connection, resource, baseline }, result);
        if (after) afterCommit.push(after);
      }
      return rows;
    });
    for (const after of afterCommit) await after();
    return deleted.length;
  }
}

export class SyncFailedError extends Error {
  constructor(readonly report: SyncReport) {
    super(`sync of ${report.connector} connection ${report.connectionId} failed: ${report.error}`);
    this.name = 'SyncFailedError';
  }
}

/** A check's cost, averaged with the last ones: one busy read (thousands of changes) does not stretch the plan for long. */
function averagedCost(previous: number | null, now: number): number {
  return previous == null ? now : Math.ceil((previous + now) / 2);
}

/** A sync error as we record it: the vendor status and a short reason, never credentials or bodies. */
function describeSyncError(err: unknown): string {
  if (err instanceof VendorHttpError) {
    // A connector that explains a refusal in words for the MSP (a revoked authorisation) is recorded so.
    const explanation = (err as { explanation?: unknown }).explanation;
    if (typeof explanation === 'string') return explanation.slice(0, 300);
    return err.network ? `vendor unreachable after ${err.attempts} attempts` : `vendor answered HTTP ${err.status} after ${err.attempts} attempts`;
  }
  return (err as Error)?.message?.slice(0, 300) ?? String(err);
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
