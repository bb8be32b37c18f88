/**
 * The scheduled checks (docs/architecture.md, Freshness): each worker process claims the fleet's due
 * resources from the store, the earliest deadline first, and checks them with up to `slots` connections at
 * once. A check is one run of SyncService over a connection's claimed resources; its end plans each
 * resource's next check (sync_states.next_check_at), which is what makes it due again.
 *
 * Why not a queue job per check: a hot resource is checked every 5-10 s, and a thousand tenants make
 * hundreds of checks a second. A job per check cost the worker more than the check itself (the job's
 * Redis round trips and a claim statement each), and a first-in-first-out queue let a slow vendor's
 * backlog hold back every other tenant. Claiming by lateness is fair by construction, and a second worker
 * process shares the work through the claims (rows one process is claiming are skipped by the other).
 * On-demand syncs and the refresh after our own writes stay queue jobs (src/sync/sync-jobs.ts).
 */
import type { Logger } from 'pino';
import type { SyncResource } from '../connectors/types';
import type { ConnectionWithStates, SyncService } from './sync.service';
import type { SyncStatesStore } from './sync-states.store';
import { inRootSpan } from '../telemetry/spans';

/** How long the sweeper waits before it looks again when nothing was due. */
export const SWEEP_IDLE_MS = 250;

export class FreshnessSweeper {
  private readonly running = new Set<Promise<void>>();
  private stopped = true;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly sync: Pick<SyncService, 'syncConnection' | 'connectionsWithStates'>,
    private readonly states: Pick<SyncStatesStore, 'claimNext'>,
    private readonly logger: Logger,
    private readonly slots: number,
    private readonly idleMs = SWEEP_IDLE_MS,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  /** Stops claiming, and waits for the checks under way (each is bounded by its vendor calls' timeouts). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await Promise.all(this.running);
  }

  private async run(): Promise<void> {
    // A claim sorts every due resource of the fleet by deadline: with checks under way, it waits until a
    // sixteenth of the slots are free (12 of 192, a few tens of milliseconds on a busy worker), not one.
    const batch = Math.max(1, Math.floor(this.slots / 16));
    while (!this.stopped) {
      const free = this.slots - this.running.size;
      if (free <= 0 || (free < batch && this.running.size > 0)) { await this.pause(null); continue; }
      let claimed: Awaited<ReturnType<SyncStatesStore['claimNext']>> = [];
      try {
        claimed = await this.states.claimNext(free);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'claiming due sync checks failed');
      }
      const byConnection = new Map<string, Set<SyncResource>>();
      for (const c of claimed) byConnection.set(c.connectionId, (byConnection.get(c.connectionId) ?? new Set()).add(c.resource));
      // The claimed connections and their states in one statement, not one a check (a hot resource is
      // checked every few seconds, so this is most of what a quiet check asks of the store). Should it fail,
      // each check reads its own.
      let loaded = new Map<string, ConnectionWithStates>();
      try {
        loaded = await this.sync.connectionsWithStates([...byConnection.keys()]);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'reading the claimed connections failed');
      }
      for (const [connectionId, resources] of byConnection) this.check(connectionId, resources, loaded.get(connectionId));
      // Fewer due than free slots: nothing more is due now; look again shortly (or when a slot frees, if full).
      if (claimed.length < free) await this.pause(this.idleMs);
    }
  }

  private check(connectionId: string, resources: Set<SyncResource>, loaded: ConnectionWithStates | undefined): void {
    // Each check is a trace of its own (src/telemetry), its vendor calls the children.
    const sync = () => this.sync.syncConnection(connectionId, { claimed: resources, loaded });
    const run: Promise<void> = inRootSpan('sync check', { tenantId: loaded?.connection.tenantId }, { 'msp.connection_id': connectionId }, sync)
      // A failed check is recorded in its state (and audited) by the sync itself, and planned again: nothing to retry here.
      .then(() => undefined, (err: Error) => this.logger.debug({ connectionId, err: err.message }, 'scheduled check failed'))
      .finally(() => { this.running.delete(run); this.wake?.(); });
    this.running.add(run);
  }

  /** Until `ms` pass (null: until a check ends), or stop. One pause at a time: only the loop pauses. */
  private pause(ms: number | null): Promise<void> {
    return new Promise((resolve) => {
      const timer = ms === null ? undefined : setTimeout(() => this.wake?.(), ms);
      this.wake = () => { clearTimeout(timer); this.wake = null; resolve(); };
    });
  }
}
