/**
 * In-process job runner: the embedded default when no REDIS_URL is set. Same semantics as the BullMQ
 * driver (attempts, backoff with jitter, RetryAfterError, delays, job-id dedupe, kept finished jobs,
 * concurrency per job name, schedulers), but state lives in memory: jobs still waiting at close() are
 * dropped.
 */
import { assertValidJobId, newJobId } from './job-id';
import { consoleQueueLogger, QueueLogger } from './logger';
import { DEFAULT_KEEP_FINISHED, DEFAULT_WAIT_TIMEOUT_MS, KeepFinished } from './retention';
import { beating, DEFAULT_HEARTBEAT_MS } from './heartbeat';
import { finalError, isUnrecoverable, retryDelayMs, toError, validateBackoff } from './retry-policy';
import {
  AddJobOptions,
  BackoffOptions,
  JOB_NAMES,
  JobHandler,
  JobName,
  JobOutcome,
  JobCounts,
  JobPayload,
  JobPayloads,
  JobQueue,
  JobWaitTimeoutError,
  UnknownJobError,
} from './types';

type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed';

interface JobRecord {
  id: string;
  name: JobName;
  data: JobPayload;
  attempts: number;
  backoff?: BackoffOptions;
  state: JobState;
  attemptsMade: number;
  result?: unknown;
  error?: string;
  finishedAt?: number;
  timer?: NodeJS.Timeout;
  /** Added by a scheduler (JobContext.scheduled). */
  scheduled?: boolean;
  /** When it last became ready to run (ms since epoch): the queue's age counts from here. */
  readyAt?: number;
}

/** One job name: its handler, its FIFO of ready jobs and every job record it still keeps. */
interface Lane {
  handler?: JobHandler;
  concurrency: number;
  ready: JobRecord[];
  active: number;
  jobs: Map<string, JobRecord>;
  completed: JobRecord[];
  failed: JobRecord[];
}

interface Waiter {
  resolve(outcome: JobOutcome): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

interface Scheduler {
  timer: NodeJS.Timeout;
  pendingJob?: { name: JobName; id: string };
}

export interface InProcessJobQueueOptions {
  logger?: QueueLogger;
  keepFinished?: KeepFinished;
  /** Source of jitter; tests may pin it. */
  random?: () => number;
  /** How often a started queue beats (lastWorkerBeat). */
  heartbeatMs?: number;
}

export class InProcessJobQueue implements JobQueue {
  readonly driver = 'in-process' as const;
  private readonly logger: QueueLogger;
  private readonly keep: KeepFinished;
  private readonly random: () => number;
  private readonly lanes = new Map<JobName, Lane>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly schedulers = new Map<string, Scheduler>();
  private readonly inFlight = new Set<Promise<void>>();
  private started = false;
  private closed = false;
  private readonly heartbeatMs: number;
  private stopBeating: (() => void) | null = null;
  private lastBeat: number | null = null;

  constructor(opts: InProcessJobQueueOptions = {}) {
    this.logger = opts.logger ?? consoleQueueLogger;
    this.heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    this.keep = opts.keepFinished ?? DEFAULT_KEEP_FINISHED;
    this.random = opts.random ?? Math.random;
    for (const name of JOB_NAMES) {
      this.lanes.set(name, { concurrency: 1, ready: [], active: 0, jobs: new Map(), completed: [], failed: [] });
    }
  }

  register<N extends JobName, R>(name: N, handler: JobHandler<JobPayloads[N], R>, opts: { concurrency?: number } = {}): void {
    const lane = this.lane(name);
    if (this.started) throw new Error(`Cannot register "${name}" after start()`);
    if (lane.handler) throw new Error(`A handler for "${name}" is already registered`);
    lane.handler = handler as unknown as JobHandler;
    lane.concurrency = Math.max(1, opts.concurrency ?? 1);
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('Job queue is closed');
    const missing = JOB_NAMES.filter((name) => !this.lane(name).handler);
    if (missing.length > 0) throw new Error(`No job handler registered for: ${missing.join(', ')}`);
    this.started = true;
    for (const lane of this.lanes.values()) this.pump(lane);
    // The embedded default's worker is this process: its beat is in memory, read by its own /readyz.
    this.stopBeating ??= beating(async () => { this.lastBeat = Date.now(); }, this.heartbeatMs);
  }

  async lastWorkerBeat(): Promise<number | null> {
    return this.lastBeat;
  }

  async add<N extends JobName>(name: N, data: JobPayloads[N], opts: AddJobOptions = {}): Promise<{ id: string }> {
    if (opts.jobId !== undefined) assertValidJobId(opts.jobId);
    return this.enqueue(name, data, opts.jobId ?? newJobId(), opts);
  }

  async waitFor<R = unknown>(jobId: string, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS): Promise<JobOutcome<R>> {
    if (this.closed) throw new Error('Job queue is closed');
    const job = this.find(jobId);
    if (!job) throw new UnknownJobError(jobId);
    if (job.state === 'completed' || job.state === 'failed') return outcomeOf(job) as JobOutcome<R>;
    return new Promise<JobOutcome<R>>((resolve, reject) => {
      const waiters = this.waiters.get(jobId) ?? new Set<Waiter>();
      const waiter: Waiter = {
        resolve: resolve as (outcome: JobOutcome) => void,
        reject,
        timer: setTimeout(() => {
          waiters.delete(waiter);
          reject(new JobWaitTimeoutError(jobId, timeoutMs));
        }, timeoutMs),
      };
      waiters.add(waiter);
      this.waiters.set(jobId, waiters);
    });
  }

  async upsertScheduler<N extends JobName>(schedulerId: string, everyMs: number, name: N, data: JobPayloads[N]): Promise<void> {
    if (this.closed) throw new Error('Job queue is closed');
    if (!(everyMs > 0)) throw new Error('everyMs must be > 0');
    this.lane(name);
    this.stopScheduler(schedulerId);
    const scheduler: Scheduler = { timer: setInterval(() => this.fireScheduler(schedulerId, scheduler, name, data), everyMs) };
    this.schedulers.set(schedulerId, scheduler);
    // Like BullMQ's `every` schedulers: the first job is due at once.
    this.fireScheduler(schedulerId, scheduler, name, data);
  }

  async removeScheduler(schedulerId: string): Promise<void> {
    this.stopScheduler(schedulerId);
  }

  async schedulerIds(): Promise<string[]> {
    return [...this.schedulers.keys()];
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async counts(): Promise<JobCounts[]> {
    return [...this.lanes].map(([name, lane]) => {
      const jobs = [...lane.jobs.values()];
      const inState = (state: JobState) => jobs.filter((j) => j.state === state).length;
      const oldest = lane.ready[0]?.readyAt;
      return {
        name, waiting: inState('waiting'), delayed: inState('delayed'), active: inState('active'), failed: inState('failed'),
        oldestWaitingMs: oldest == null ? null : Math.max(0, Date.now() - oldest),
      };
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopBeating?.();
    for (const id of [...this.schedulers.keys()]) this.stopScheduler(id);
    for (const lane of this.lanes.values()) {
      lane.ready.length = 0;
      for (const job of lane.jobs.values()) if (job.timer) clearTimeout(job.timer);
    }
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    for (const [jobId, waiters] of this.waiters) {
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error(`Job queue closed before job "${jobId}" finished`));
      }
    }
    this.waiters.clear();
  }

  private enqueue(name: JobName, data: JobPayload, id: string, opts: AddJobOptions, scheduled = false): { id: string } {
    if (this.closed) throw new Error('Job queue is closed');
    const lane = this.lane(name);
    const attempts = opts.attempts ?? 1;
    if (!Number.isInteger(attempts) || attempts < 1) throw new Error('attempts must be an integer >= 1');
    validateBackoff(opts.backoff);
    this.pruneFinished(lane);
    // Dedupe: an id that exists in any kept state is a no-op, as in BullMQ.
    if (lane.jobs.has(id)) return { id };
    const job: JobRecord = {
      id,
      name,
      // Round-trip through JSON like Redis does, so handlers see the same data with either driver.
      data: JSON.parse(JSON.stringify(data)) as JobPayload,
      attempts,
      backoff: opts.backoff,
      state: 'waiting',
      attemptsMade: 0,
      scheduled,
    };
    lane.jobs.set(id, job);
    this.schedule(lane, job, opts.delay ?? 0);
    return { id };
  }

  /** Makes a job ready now, or after delayMs. */
  private schedule(lane: Lane, job: JobRecord, delayMs: number): void {
    if (delayMs > 0) {
      job.state = 'delayed';
      job.timer = setTimeout(() => {
        job.timer = undefined;
        this.schedule(lane, job, 0);
      }, delayMs);
      return;
    }
    job.state = 'waiting';
    job.readyAt = Date.now();
    lane.ready.push(job);
    this.pump(lane);
  }

  private pump(lane: Lane): void {
    if (!this.started || this.closed) return;
    while (lane.active < lane.concurrency && lane.ready.length > 0) {
      const job = lane.ready.shift()!;
      lane.active++;
      const run: Promise<void> = this.runAttempt(lane, job).finally(() => {
        lane.active--;
        this.inFlight.delete(run);
        this.pump(lane);
      });
      this.inFlight.add(run);
    }
  }

  private async runAttempt(lane: Lane, job: JobRecord): Promise<void> {
    job.state = 'active';
    const attempt = job.attemptsMade + 1;
    try {
      const result = await lane.handler!({ id: job.id, name: job.name, data: job.data, attempt, attempts: job.attempts, redelivered: attempt > 1, scheduled: job.scheduled === true });
      job.attemptsMade = attempt;
      this.finish(lane, job, 'completed', result === undefined ? undefined : JSON.parse(JSON.stringify(result)));
    } catch (thrown) {
      job.attemptsMade = attempt;
      const err = toError(thrown);
      if (isUnrecoverable(err) || attempt >= job.attempts) {
        const failure = finalError(err);
        this.logger.error(
          { jobId: job.id, jobName: job.name, tenantId: job.data.tenantId, attemptsMade: attempt, err: failure.message },
          'job failed',
        );
        this.finish(lane, job, 'failed', undefined, failure.message);
        return;
      }
      const delayMs = retryDelayMs(err, job.backoff, attempt, this.random);
      this.logger.warn(
        { jobId: job.id, jobName: job.name, tenantId: job.data.tenantId, attemptsMade: attempt, delayMs, err: finalError(err).message },
        'job attempt failed, will retry',
      );
      job.error = err.message;
      if (!this.closed) this.schedule(lane, job, delayMs);
    }
  }

  private finish(lane: Lane, job: JobRecord, state: 'completed' | 'failed', result?: unknown, error?: string): void {
    job.state = state;
    job.result = result;
    job.error = error;
    job.finishedAt = Date.now();
    (state === 'completed' ? lane.completed : lane.failed).push(job);
    this.pruneFinished(lane);
    const waiters = this.waiters.get(job.id);
    if (!waiters) return;
    this.waiters.delete(job.id);
    for (const waiter of waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcomeOf(job));
    }
  }

  /** Drops finished jobs beyond the count or age limit (separately for completed and failed, like BullMQ). */
  private pruneFinished(lane: Lane): void {
    const oldestKept = Date.now() - this.keep.ageMs;
    for (const finished of [lane.completed, lane.failed]) {
      while (finished.length > 0 && (finished.length > this.keep.count || finished[0].finishedAt! < oldestKept)) {
        const dropped = finished.shift()!;
        if (lane.jobs.get(dropped.id) === dropped) lane.jobs.delete(dropped.id);
      }
    }
  }

  /** Adds the scheduler's next job unless the previous one has not started yet (BullMQ keeps one pending). */
  private fireScheduler(schedulerId: string, scheduler: Scheduler, name: JobName, data: JobPayload): void {
    const pending = scheduler.pendingJob && this.lane(scheduler.pendingJob.name).jobs.get(scheduler.pendingJob.id);
    if (pending && (pending.state === 'waiting' || pending.state === 'delayed')) return;
    const id = `repeat:${schedulerId}:${Date.now()}`;
    try {
      this.enqueue(name, data, id, {}, true);
      scheduler.pendingJob = { name, id };
    } catch (err) {
      this.logger.error({ schedulerId, jobName: name, err: toError(err).message }, 'scheduler could not add its job');
    }
  }

  private stopScheduler(schedulerId: string): void {
    const scheduler = this.schedulers.get(schedulerId);
    if (!scheduler) return;
    clearInterval(scheduler.timer);
    this.schedulers.delete(schedulerId);
  }

  private find(jobId: string): JobRecord | undefined {
    for (const lane of this.lanes.values()) {
      this.pruneFinished(lane);
      const job = lane.jobs.get(jobId);
      if (job) return job;
    }
    return undefined;
  }

  private lane(name: JobName): Lane {
    const lane = this.lanes.get(name);
    if (!lane) throw new Error(`Unknown job name "${name}"`);
    return lane;
  }
}

function outcomeOf(job: JobRecord): JobOutcome {
  return {
    id: job.id,
    state: job.state as 'completed' | 'failed',
    // BullMQ reads a null return value back as no result; report it the same way.
    ...(job.state === 'completed' ? { result: job.result ?? undefined } : { error: job.error }),
    attemptsMade: job.attemptsMade,
  };
}
