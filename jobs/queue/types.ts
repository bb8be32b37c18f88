/**
 * One job-queue interface, two drivers: BullMQ on Redis (production) and an in-process runner with
 * the same semantics (embedded default). Every job payload carries its tenant id.
 */

import type { BackoffOptions, JobPayload } from './job';

export { RetryAfterError, UnrecoverableJobError, type BackoffOptions, type JobPayload } from './job';

/**
 * The typed job registry: one payload type per job name, checked where a job is added and where its
 * handler is registered (jobs/processors/index.ts registers every processor). The queue knows no
 * feature: the feature that owns a job declares its payload here from its own folder, by augmenting
 * this interface (`declare module '.../jobs/queue/types'`: src/sync/sync-job.ts,
 * src/writes/vendor-write.ts, src/webhooks/delivery-job.ts), so the import runs down to the queue.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' augmentations
export interface JobPayloads {}
export type JobName = keyof JobPayloads;

/** Every job name the service knows. Startup fails when one has no handler (see JobQueue.start). */
export const JOB_NAMES = ['sync.connection', 'vendor.write', 'webhook.deliver'] as const satisfies readonly JobName[];

export interface AddJobOptions {
  /** Dedupe: adding a job whose id is already waiting, delayed or active is a no-op returning the same job. */
  jobId?: string;
  /** Total tries, first one included. Default 1. */
  attempts?: number;
  backoff?: BackoffOptions;
  /** Delay before the first try, ms. */
  delay?: number;
}

export interface JobContext<T extends JobPayload = JobPayload> {
  id: string;
  name: JobName;
  data: T;
  /** 1 on the first try. */
  attempt: number;
  /** Total tries allowed. */
  attempts: number;
  /**
   * The job may have run before: a retry, or (BullMQ) a re-run after its worker died mid-job. A handler
   * whose effect is not idempotent checks for its earlier effect first when this is true.
   */
  redelivered: boolean;
  /** A scheduler's run (upsertScheduler), not a job someone added: it may be skipped when its work is already under way. */
  scheduled: boolean;
}

export type JobHandler<T extends JobPayload = JobPayload, R = unknown> = (job: JobContext<T>) => Promise<R>;

/** waitFor's timeout ran out while the job was still waiting, delayed or running: it goes on. */
export class JobWaitTimeoutError extends Error {
  constructor(readonly jobId: string, timeoutMs: number) {
    super(`Timed out after ${timeoutMs} ms waiting for job "${jobId}"`);
    this.name = 'JobWaitTimeoutError';
  }
}

/** waitFor was asked for an id the queue does not know (never added, or its finished record was dropped). */
export class UnknownJobError extends Error {
  constructor(readonly jobId: string) {
    super(`No job with id "${jobId}"`);
    this.name = 'UnknownJobError';
  }
}

export interface JobOutcome<R = unknown> {
  id: string;
  state: 'completed' | 'failed';
  result?: R;
  /** Error message of the last failed attempt. */
  error?: string;
  attemptsMade: number;
}

export interface JobCounts {
  name: JobName;
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
  /** How long the oldest job ready to run has waited for a worker (ms), or null when none waits. */
  oldestWaitingMs: number | null;
}

export interface JobQueue {
  readonly driver: 'in-process' | 'bullmq';
  /** Register the handler for a job name. Must happen before start(). */
  register<N extends JobName, R>(name: N, handler: JobHandler<JobPayloads[N], R>, opts?: { concurrency?: number }): void;
  /** Start processing (worker role). Throws if any JobName lacks a handler. */
  start(): Promise<void>;
  add<N extends JobName>(name: N, data: JobPayloads[N], opts?: AddJobOptions): Promise<{ id: string }>;
  /**
   * Wait for a job to finish (completed or failed after its last attempt). Rejects with JobWaitTimeoutError
   * on timeout (the job goes on) and UnknownJobError for an id it does not know.
   */
  waitFor<R = unknown>(jobId: string, timeoutMs?: number): Promise<JobOutcome<R>>;
  /** A repeating job (BullMQ job scheduler). Re-upserting the same id replaces the schedule. */
  upsertScheduler<N extends JobName>(schedulerId: string, everyMs: number, name: N, data: JobPayloads[N]): Promise<void>;
  removeScheduler(schedulerId: string): Promise<void>;
  /** The ids of the schedulers placed (an upgrade clears the ones an earlier version left). */
  schedulerIds(): Promise<string[]>;
  /** Readiness: true when the backing store answers. */
  ping(): Promise<boolean>;
  /** Jobs per name and state, for /metrics (src/http/metrics.ts); `failed` counts the failed jobs still kept. */
  counts(): Promise<JobCounts[]>;
  /**
   * When a worker last beat (ms since epoch, the beating process's clock), or null when none ever has.
   * A started queue (the worker role) beats every `heartbeatMs`; an api process's /readyz reads it.
   */
  lastWorkerBeat(): Promise<number | null>;
  /** Stop taking jobs, let the ones in flight finish, release connections. */
  close(): Promise<void>;
}
