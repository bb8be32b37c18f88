/**
 * Sync as jobs: a job scheduler per connection (every SYNC_INTERVAL_SECONDS), and on-demand syncs that
 * wait for their jobs. Job ids derive from the connection id.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Connection } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { SyncReport } from './sync.service';

export interface ConnectionSyncResult {
  connection_id: string;
  connector: string;
  ok: boolean;
  error: string | null;
  resources: { resource: string; mode: string; fetched: number; created: number; updated: number; unchanged: number }[];
}

export class SyncJobs {
  constructor(
    private readonly ds: DataSource, private readonly queue: JobQueue,
    /** The connection's scheduled interval (configured, or what its API budget allows); 0 = no schedule. */
    private readonly intervalMs: (connection: Pick<Connection, 'id' | 'connector' | 'settings'>) => number,
  ) {}

  async schedule(connection: Pick<Connection, 'id' | 'tenantId' | 'connector' | 'settings'>): Promise<void> {
    const intervalMs = this.intervalMs(connection);
    if (intervalMs <= 0) return;
    await this.queue.upsertScheduler(
      `sync-${connection.id}`, intervalMs, 'sync.connection', { tenantId: connection.tenantId, connectionId: connection.id },
    );
  }

  /** Stops the schedule of a removed connection (its one-off jobs find no connection and end). */
  async unschedule(connectionId: string): Promise<void> {
    await this.queue.removeScheduler(`sync-${connectionId}`);
  }

  async scheduleAll(): Promise<void> {
    for (const c of await this.ds.getRepository(Connection).find()) await this.schedule(c);
  }

  /**
   * After our own writes: one incremental sync of the tickets soon, shared by every write in the same
   * two-second window (the job id is the window), so a burst of commits costs one sync, not one each.
   */
  async refreshTicketsSoon(tenantId: string, connectionId: string): Promise<void> {
    const windowId = Math.floor(Date.now() / 2000);
    await this.queue.add(
      'sync.connection', { tenantId, connectionId, resources: ['tickets'] },
      { jobId: `sync-${connectionId}-tickets-${windowId}`, delay: 2000 },
    );
  }

  /** Runs a sync of every connection of the tenant now and waits for all of them. */
  async syncTenantNow(tenantId: string, opts: { full?: boolean; timeoutMs?: number } = {}): Promise<ConnectionSyncResult[]> {
    const connections = await this.ds.getRepository(Connection).find({ where: { tenantId }, order: { createdAt: 'ASC' } });
    const jobs = await Promise.all(connections.map(async (c) => {
      const { id } = await this.queue.add(
        'sync.connection',
        { tenantId, connectionId: c.id, full: opts.full === true },
        // On demand: one attempt; the vendor client already retried 429/503 inside it.
        { jobId: `sync-${c.id}-${randomUUID()}`, attempts: 1 },
      );
      return { c, id };
    }));
    const results: ConnectionSyncResult[] = [];
    for (const { c, id } of jobs) {
      const outcome = await this.queue.waitFor<SyncReport>(id, opts.timeoutMs ?? 10 * 60_000);
      const report = outcome.result;
      results.push({
        connection_id: c.id,
        connector: c.connector,
        ok: outcome.state === 'completed',
        error: outcome.state === 'completed' ? null : (outcome.error ?? 'sync failed'),
        resources: report?.resources ?? [],
      });
    }
    return results;
  }
}
