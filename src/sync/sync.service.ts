/**
 * Sync of one connection: every resource its connector knows, full on the first run and incremental
 * (the vendor's last-updated filter from the stored watermark) after. Here the sync is scheduled and
 * accounted: which resources it reads (claims), the budget its vendor calls wait in and what they cost,
 * each resource's sync state (watermark, status, next check) and the sync's audit and outcome. What
 * happens to each page, from its fetch to its webhooks, is page-pipeline.ts. A failure is recorded in
 * sync_states (served by `status`) and re-thrown so the job retries, and the last good data stays served.
 */
import type { DataSource } from 'typeorm';
import { TtlCache } from '../shared/ttl-cache';
import type { Connection, SyncState } from '../../entities';
import type { Logger } from 'pino';
import { readConnector } from '../connectors/registry';
import type { ReadConnector, SyncContext, SyncResource } from '../connectors/types';
import { VendorHttpClient, VendorHttpError } from '../connectors/vendor-http';
import type { SecretBox } from '../security/secret-box';
import type { AuditService } from '../audit/audit.service';
import { RecordWriter, SETTLED_AFTER_MS } from './record-writer';
import type { ConnectionBudgets } from '../budget/connection-budgets';
import { DeletionScanner } from './deletions';
import { recordSync } from '../http/metrics';
import type { BudgetGate, BudgetLease } from '../budget/budget';
import { planFreshness, type FreshnessPlan } from './freshness';
import { SyncStatesStore } from './sync-states.store';
import { SyncConnectionsStore, type ConnectionWithStates } from './sync-connections.store';
import { FollowingRuns } from '../shared/following-runs';
import type { CommittedChanges, CommittedReaction } from '../shared/committed-changes';
import { PagePipeline, type ResourceRead } from './page-pipeline';

export type { ConnectionWithStates } from './sync-connections.store';
export type { PageReaction, PageScope } from './page-pipeline';

const NO_LEASE: BudgetLease = { release: async () => undefined };

/** How a connection's sync ended, as its reactions hear it: whole, or the failure (as met, and as recorded) that ended it. */
export type SyncOutcome = { ok: true } | { ok: false; error: unknown; message: string; resource: string };

/** A connection's sync ended (whole or failed part-way): work owed to all its pages at once. */
export interface SyncEnded { tenantId: string; connection: Connection; outcome: SyncOutcome }

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A connection's sync ended, after its last page committed; `outcome` says whether whole (connection events classify it). */
    'sync.ended': CommittedReaction<SyncEnded>;
  }
}

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

/** One connection's sync under way: what its resources share, and what it has checked so far. */
interface SyncRun {
  connection: Connection;
  connector: ReadConnector;
  opts: SyncOptions;
  /** The resources a scheduled check claimed (null: a sync someone asked for). */
  due: ReadonlySet<SyncResource> | null;
  report: SyncReport;
  /** Every vendor call this sync made so far (what a check costs plans the next ones). */
  calls: () => number;
  /** The context each resource's read starts from (its own `since`, `baseline` and compare added). */
  ctx: Omit<SyncContext, 'since' | 'baseline' | 'compareStored'>;
  /** The connection's states as read once: each checked resource's state, and the plan's history after. */
  stored: SyncState[];
  checked: SyncState[];
  /**
   * Scheduled checks whose state is written once, with its next check (planNext): a probe that found
   * nothing, and a re-read of a synced resource. A first read or a sync someone asked for writes its state
   * as each resource ends, so that status follows it.
   */
  writtenWithPlan: Set<SyncState>;
}

/** A resource's read as startResource began it. */
interface StartedRead { state: SyncState; callsBefore: number; report: ResourceReport; read: ResourceRead }

export class SyncService {
  private readonly statesStore: SyncStatesStore;
  private readonly connections: SyncConnectionsStore;
  /** What happens to each page of a resource's read (page-pipeline.ts). */
  private readonly pages: PagePipeline;
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
    ds: DataSource,
    private readonly box: SecretBox,
    private readonly audit: AuditService,
    private readonly logger: Logger,
    /** Where a page's write and a sync's end are told (`records.page_written`, `sync.ended`). */
    private readonly changes: CommittedChanges,
    private readonly http: VendorHttpClient = new VendorHttpClient(),
    private readonly budgets: ConnectionBudgets | null = null,
    /** The vendors' day the connectors read (a contract's current billing period); tests fix it. */
    private readonly vendorNow: () => number = Date.now,
    readonly deletions: DeletionScanner = new DeletionScanner(),
  ) {
    this.statesStore = new SyncStatesStore(ds);
    this.connections = new SyncConnectionsStore(ds);
    this.pages = new PagePipeline(ds, new RecordWriter(ds), changes, this.statesStore, deletions, audit, logger);
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
    return this.planOf(connection, await this.statesStore.statesOf(connection.id)).tickMs;
  }

  async syncConnection(connectionId: string, opts: SyncOptions = {}): Promise<SyncReport> {
    if (opts.claimed) return this.runSync(connectionId, opts);
    const key = `${connectionId} ${opts.resources ? [...opts.resources].sort().join(',') : '*'}`;
    return this.askedFor.run(key, opts, (asked) => this.runSync(connectionId, asked));
  }

  /** Schedules and accounts one sync: claims, the budget its calls wait in, each resource's read (syncResource), the plan, the audit and the end. */
  private async runSync(connectionId: string, opts: SyncOptions): Promise<SyncReport> {
    const syncStarted = performance.now(); // /metrics
    const due = opts.claimed ?? null;
    // A scheduled check reads its connection and states in one statement (a hot resource is checked every few
    // seconds), or the sweep read them for it; another sync claims its resources first, which may make their
    // states, and reads them after.
    const { connection, states: claimedStates } = opts.loaded ?? await this.connections.connectionOf(connectionId, due !== null);
    const connector = readConnector(connection.connector);
    const report: SyncReport = {
      connectionId, tenantId: connection.tenantId, connector: connection.connector, ok: true, resources: [],
    };
    const wanted = connector.resources.filter((r) => !opts.resources || opts.resources.includes(r));
    if (!due) await this.statesStore.claimDue(connection.tenantId, connectionId, wanted, false);
    // A check with nothing claimed ends here: no vendor call, no write, nothing to tell.
    if (due && due.size === 0) return report;
    const run: SyncRun = {
      connection, connector, opts, due, report, ...this.vendorSession(connection),
      stored: claimedStates ?? await this.statesStore.statesOf(connectionId), checked: [], writtenWithPlan: new Set(),
    };
    for (const resource of wanted.filter((r) => !due || due.has(r))) {
      const read = await this.startResource(run, resource);
      if (!read) continue;
      try {
        await this.readResource(run, read);
      } catch (err) {
        await this.failed(run, read, err);
        recordSync(connection.kind, report, syncStarted);
        throw new SyncFailedError(report);
      }
    }
    await this.planNext(run);
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
   * What the sync's vendor calls go through: the connection's credentials, and one budget, which sync waits
   * behind writes inside (it slows down, it does not fail on it), every attempt counted; and the reads the
   * sync's resources share (SyncContext.shared: kept for the sync; a failed one is not kept).
   */
  private vendorSession(connection: Connection): Pick<SyncRun, 'calls' | 'ctx'> {
    let calls = 0;
    const gate = this.budgets ? this.budgets.gate(connection, 'sync') : null;
    const counted: BudgetGate = { connector: connection.connector, acquire: async () => { calls++; return gate ? gate.acquire() : NO_LEASE; } };
    const sharedReads = new TtlCache<unknown>(Infinity);
    return {
      calls: () => calls,
      ctx: {
        baseUrl: connection.baseUrl.replace(/\/$/, ''),
        credentials: this.box.openJson<Record<string, string>>(connection.credentialsEncrypted),
        statusMapping: connection.statusMapping,
        http: this.http.withBudget(counted),
        now: this.vendorNow,
        concurrency: this.budgets ? this.budgets.limits(connection).concurrent : undefined,
        shared: <T>(key: string, read: () => Promise<T>) => sharedReads.getOrLoad(key, read) as Promise<T>,
      },
    };
  }

  /**
   * One resource's check begins: its state, and a probe where one says nothing changed (null: the check
   * ends there); else its read, marked as running where status shows it.
   */
  private async startResource(run: SyncRun, resource: SyncResource): Promise<StartedRead | null> {
    const { connection, connector, opts, due } = run;
    const state = run.stored.find((s) => s.resource === resource) ?? this.statesStore.newState(connection.tenantId, connection.id, resource);
    run.checked.push(state);
    const callsBefore = run.calls();
    const incremental = !opts.full && connector.incremental.includes(resource) && state.watermark != null;
    const baseline = state.lastSyncedAt == null;
    const started = new Date();
    const ctx: SyncContext = { ...run.ctx, since: incremental ? state.watermark : null, baseline };
    if (due && incremental && await this.nothingChanged(connector, resource, ctx, state, connection.id).catch(() => false)) {
      // Confirmed current by one cheap call: nothing is read, the store is as fresh as this check.
      Object.assign(state, { checkedAt: started, lastStatus: 'ok', lastError: null, quietChecks: (state.quietChecks ?? 0) + 1 });
      state.callsPerCheck = averagedCost(state.callsPerCheck, run.calls() - callsBefore);
      run.writtenWithPlan.add(state);
      run.report.resources.push({ resource, mode: 'probe', fetched: 0, created: 0, updated: 0, unchanged: 0, quarantined: 0 });
      return null;
    }
    state.lastAttemptAt = started;
    // Status shows a read under way: a sync someone asked for, or a first read. A scheduled re-read of a
    // synced resource (every few seconds on a hot RMM list) writes its state once, with its next check.
    if (due && !baseline) run.writtenWithPlan.add(state);
    else {
      state.lastStatus = 'running';
      await this.saveState(state);
    }
    const knownListing = state.quietListing ?? null;
    state.quietListing = null;
    return {
      state, callsBefore,
      report: { resource, mode: incremental ? 'incremental' : 'full', fetched: 0, created: 0, updated: 0, unchanged: 0, quarantined: 0 },
      read: { connection, connector, resource, ctx, baseline, incremental, full: opts.full === true, started, knownListing, stateId: state.id, watermark: state.watermark },
    };
  }

  /** A resource's pages through the page pipeline (page-pipeline.ts), and the state its read ends with. */
  private async readResource(run: SyncRun, { state, callsBefore, report: r, read }: StartedRead): Promise<void> {
    const end = await this.pages.readResource(read, r);
    // The listing's digest: null unless the listing was one quiet page (a second page clears it).
    Object.assign(state, {
      quietListing: end.listing, lastStatus: 'ok', lastError: null, lastSyncedAt: new Date(), checkedAt: read.started, lastMode: r.mode,
      watermark: end.watermark, recordsSeen: r.fetched, quarantined: r.quarantined,
    });
    const changed = r.created + r.updated + (r.deleted ?? 0) > 0;
    state.quietChecks = changed ? 0 : (state.quietChecks ?? 0) + 1;
    // What a check costs from now on: not a first or forced full read of a resource read incrementally after.
    if (!read.baseline && !(run.opts.full && read.connector.incremental.includes(read.resource))) {
      state.callsPerCheck = averagedCost(state.callsPerCheck, run.calls() - callsBefore);
    }
    if (!run.writtenWithPlan.has(state)) await this.saveState(state);
    run.report.resources.push(r);
  }

  /** A resource's read failed: recorded on its state, audited, logged, and the sync ends (planned, told) failed. */
  private async failed(run: SyncRun, { state, report: r, read: { resource } }: StartedRead, err: unknown): Promise<void> {
    const { connection, report } = run;
    const message = describeSyncError(err);
    state.lastStatus = 'failed';
    state.lastError = message;
    // Written with its next check when its check was to be (planNext), else now.
    if (!run.writtenWithPlan.has(state)) await this.saveState(state);
    report.ok = false;
    report.error = `${resource}: ${message}`;
    report.resources.push(r);
    await this.audit.write({
      tenantId: connection.tenantId, action: 'sync.failed', outcome: 'failed', connectionId: connection.id,
      detail: { connector: connection.connector, resource, error: message },
    });
    // A sandbox connection fails against our own simulators: nothing for an operator to act on (docs/architecture.md, Running it).
    if (!run.opts.rehearsed) this.logger[connection.settings?.fixture === true ? 'info' : 'warn']({ connectionId: connection.id, connector: connection.connector, resource, err: message }, 'sync failed');
    await this.planNext(run);
    await this.ended(connection, { ok: false, error: err, message, resource });
  }

  /**
   * Connections with every one of their sync states, in one statement however many (a sweep claims checks
   * of many connections at once). A connection gone since its claim is not in the answer.
   */
  connectionsWithStates(ids: readonly string[]): Promise<Map<string, ConnectionWithStates>> {
    return this.connections.withStates(ids);
  }

  /** What a check sets on a resource's state, in one statement (its row exists: the claim made it). */
  private async saveState(state: SyncState): Promise<void> {
    if (!state.id) { await this.statesStore.saveNew(state); return; }
    await this.statesStore.writeChecks([{ state }]);
  }

  /**
   * "Anything changed since?" where the connector has the call, and only when the watermark's second is
   * settled (the last read began SETTLED_AFTER past it): a change in that second would hide from a strict
   * "after" filter, and the inclusive incremental read is what finds it. A deletion scan that is due reads.
   */
  private async nothingChanged(connector: ReadConnector, resource: SyncResource, ctx: SyncContext, state: SyncState, connectionId: string): Promise<boolean> {
    if (!connector.changedSince || !state.watermark || !state.lastAttemptAt) return false;
    if (state.lastAttemptAt.getTime() < state.watermark.getTime() + SETTLED_AFTER_MS) return false;
    if (this.deletions.due(connectionId, resource)) return false;
    const probe = connector.changedSince(resource, ctx);
    return probe === null ? false : !(await probe);
  }

  /** After a run: each resource's interval and next check (what makes it due again, src/sync/sweeper.ts) from the connection's plan. */
  private async planNext({ connection, stored, checked, writtenWithPlan, due }: SyncRun): Promise<void> {
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

  /** Tells `sync.ended`: a reaction's failure is logged, never the sync's. */
  private ended(connection: Connection, outcome: SyncOutcome): Promise<void> {
    return this.changes.publish('sync.ended', { tenantId: connection.tenantId, connection, outcome }, { connectionId: connection.id });
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
