/**
 * Sync as jobs and schedules. Scheduled checks are claimed from the store by each worker's sweeper
 * (src/sync/sweeper.ts) when their sync_states row falls due; placing a connection's schedule is making
 * those rows. On-demand syncs are queue jobs that the caller waits for for a bounded time, then answers
 * with the sync to poll. Job ids derive from the connection id.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import { readConnector } from '../connectors/registry';
import { JobWaitTimeoutError, UnknownJobError, type JobQueue } from '../../jobs/queue/types';
import type { SyncReport } from './sync.service';
import { SyncStatesStore } from './sync-states.store';
import { SyncConnectionsStore } from './sync-connections.store';

export interface ConnectionSyncResult {
  connection_id: string;
  connector: string;
  ok: boolean;
  error: string | null;
  resources: { resource: string; mode: string; fetched: number; created: number; updated: number; unchanged: number }[];
}

/** A sync call's wait when the caller names none (the start's own sandbox sync): SYNC_WAIT_MS is the callers'. */
const DEFAULT_SYNC_WAIT_MS = 10 * 60_000;

/** A tenant sync as a caller sees it: finished (every connection's result) or still running after the wait. */
export type TenantSyncOutcome =
  | { state: 'finished'; syncId: string; connections: ConnectionSyncResult[] }
  | { state: 'running'; syncId: string; connections: ConnectionSyncResult[]; pending: string[] };

type ScheduledConnection = Pick<Connection, 'id' | 'tenantId' | 'connector'>;

/** How often a connection's scheduled checks come round (its freshness plan's tick). */
export type TickPlanner = (connection: Pick<Connection, 'id' | 'connector' | 'settings'>) => Promise<number>;

/** Connections planned per statement when a worker places every schedule at start. */
const SCHEDULE_CHUNK = 500;

export class SyncJobs {
  private readonly states: SyncStatesStore;
  private readonly connections: SyncConnectionsStore;

  constructor(
    ds: DataSource, private readonly queue: JobQueue,
    /** null: no schedule (SYNC_INTERVAL_SECONDS=0). */
    private readonly tickMs: TickPlanner | null,
  ) {
    this.states = new SyncStatesStore(ds);
    this.connections = new SyncConnectionsStore(ds);
  }

  /** Places a connection's schedule: its resources without a state yet are due now (their first sync). */
  async schedule(connection: ScheduledConnection): Promise<void> {
    await this.place([connection]);
  }

  private async place(connections: ScheduledConnection[]): Promise<void> {
    if (!this.tickMs) return;
    await this.states.ensureStates(connections.map((c) => ({ tenantId: c.tenantId, connectionId: c.id, resources: readConnector(c.connector).resources })));
  }

  /** The connection's schedule as it stands: its tick and when it is checked next (null: no schedule). */
  async scheduleOf(connection: Pick<Connection, 'id' | 'connector' | 'settings'>): Promise<{ intervalMs: number | null; nextAt: Date | null }> {
    const intervalMs = this.tickMs ? await this.tickMs(connection) : 0;
    if (intervalMs <= 0) return { intervalMs: null, nextAt: null };
    return { intervalMs, nextAt: await this.states.nextCheckOf(connection.id) };
  }

  /**
   * Every connection's schedule, placed when a worker starts (a thousand tenants' in a few statements), and
   * the per-connection job schedulers an earlier version placed removed: the sweeper does their work now.
   */
  async scheduleAll(): Promise<void> {
    const all = await this.connections.everyConnection();
    for (let i = 0; i < all.length; i += SCHEDULE_CHUNK) await this.place(all.slice(i, i + SCHEDULE_CHUNK));
    for (const id of await this.queue.schedulerIds()) if (id.startsWith('sync-')) await this.queue.removeScheduler(id);
  }

  /**
   * After our own writes: one incremental sync of the tickets soon, shared by every write in the same
   * two-second window (the job id is the window), so a burst of commits costs one sync, not one each. A
   * window's refresh that comes while the one before still runs starts after it (SyncService.syncConnection).
   */
  async refreshTicketsSoon(tenantId: string, connectionId: string): Promise<void> {
    const windowId = Math.floor(Date.now() / 2000);
    await this.queue.add(
      'sync.connection', { tenantId, connectionId, resources: ['tickets'] },
      { jobId: `sync-${connectionId}-tickets-${windowId}`, delay: 2000 },
    );
  }

  /**
   * Runs a sync of every connection of the tenant now and waits for it up to `waitMs`. Past that the
   * answer is `running` with the sync's id: its jobs go on (a dead worker's job is re-run by another,
   * jobs/queue/bullmq.ts) and `awaitTenantSync` answers once they have finished.
   */
  async syncTenantNow(tenantId: string, opts: { full?: boolean; waitMs?: number } = {}): Promise<TenantSyncOutcome> {
    const connections = await this.connections.ofTenant(tenantId);
    const syncId = randomUUID();
    await Promise.all(connections.map((c) => this.queue.add(
      'sync.connection',
      { tenantId, connectionId: c.id, full: opts.full === true },
      // On demand: one attempt; the vendor client already retried 429/503 inside it.
      { jobId: syncJobId(c.id, syncId), attempts: 1 },
    )));
    return (await this.awaitTenantSync(tenantId, syncId, opts.waitMs ?? DEFAULT_SYNC_WAIT_MS))!;
  }

  /**
   * Waits up to `waitMs` for the jobs of sync `syncId` (one per connection the tenant had when it
   * started). null: no such sync (never started, its finished records were dropped after an hour, or
   * the in-process runner that held it restarted).
   */
  async awaitTenantSync(tenantId: string, syncId: string, waitMs: number): Promise<TenantSyncOutcome | null> {
    const connections = await this.connections.ofTenant(tenantId);
    const waited = await Promise.all(connections.map(async (c) => {
      try {
        return { c, outcome: await this.queue.waitFor<SyncReport>(syncJobId(c.id, syncId), waitMs) };
      } catch (err) {
        if (err instanceof JobWaitTimeoutError) return { c, outcome: 'running' as const };
        if (err instanceof UnknownJobError) return { c, outcome: null };
        throw err;
      }
    }));
    const mine = waited.filter((w) => w.outcome !== null);
    if (mine.length === 0 && connections.length > 0) return null;
    const connectionsDone: ConnectionSyncResult[] = [];
    const pending: string[] = [];
    for (const { c, outcome } of mine) {
      if (outcome === 'running') { pending.push(c.id); continue; }
      connectionsDone.push({
        connection_id: c.id,
        connector: c.connector,
        ok: outcome!.state === 'completed',
        error: outcome!.state === 'completed' ? null : (outcome!.error ?? 'sync failed'),
        resources: outcome!.result?.resources ?? [],
      });
    }
    return pending.length === 0
      ? { state: 'finished', syncId, connections: connectionsDone }
      : { state: 'running', syncId, connections: connectionsDone, pending };
  }
}

/** One on-demand sync's job for one connection: the sync id ties a tenant's jobs together for the poll. */
function syncJobId(connectionId: string, syncId: string): string {
  return `sync-${connectionId}-${syncId}`;
}
