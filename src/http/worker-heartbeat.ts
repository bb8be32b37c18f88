/**
 * Whether any worker runs jobs (docs/architecture.md, Faults an operator will meet): the newest beat of
 * any worker (jobs/queue/heartbeat.ts), read by /readyz and /metrics. An api process with no worker
 * left its callers' jobs waiting while it answered ready.
 */
import type { JobQueue } from '../../jobs/queue/types';

export interface WorkerHeartbeat {
  /** A worker beat within the allowed staleness. */
  fresh: boolean;
  /** Seconds since the newest beat, or null when none was seen (or the queue did not answer). */
  ageSeconds: number | null;
}

export async function workerHeartbeat(queue: Pick<JobQueue, 'lastWorkerBeat'>, staleSeconds: number, now = Date.now()): Promise<WorkerHeartbeat> {
  const beat = await queue.lastWorkerBeat().catch(() => null);
  if (beat == null) return { fresh: false, ageSeconds: null };
  // A worker's clock a little ahead of this one is no older than now.
  const ageSeconds = Math.max(0, (now - beat) / 1000);
  return { fresh: ageSeconds <= staleSeconds, ageSeconds };
}
