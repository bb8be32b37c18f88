/**
 * BullMQ driver (production, REDIS_URL set).
 *
 * One BullMQ Queue per job name, one Worker per name once started: concurrency is set per job name, and a
 * backlog of syncs cannot hold up webhook deliveries or vendor writes. Consequences: a job id is unique
 * within its job name (callers derive ids from name-specific keys), and waitFor(jobId) looks the id up
 * in every queue.
 *
 * Every job carries a custom backoff type ('retry-exponential' | 'retry-fixed' | 'retry-none'): BullMQ
 * only calls the worker's settings.backoffStrategy for types that are not built in, and that strategy is
 * where a RetryAfterError's delay (BullMQ 6 passes the thrown error as the third argument) replaces the
 * exponential/fixed schedule, which it otherwise computes with BullMQ's own formula.
 */
import { Job, JobsOptions, Queue, QueueEvents, UnrecoverableError, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { assertValidJobId, newJobId } from './job-id';
import { beating, DEFAULT_HEARTBEAT_MS, HEARTBEAT_FORGET_MS } from './heartbeat';
import { consoleQueueLogger, QueueLogger } from './logger';
import { DEFAULT_KEEP_FINISHED, DEFAULT_WAIT_TIMEOUT_MS, KeepFinished } from './retention';
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

export interface BullMqJobQueueOptions {
  redisUrl: string;
  /** Redis key prefix; tests use a unique one per run. */
  prefix?: string;
  logger?: QueueLogger;
  keepFinished?: KeepFinished;
  /** A worker killed mid-job loses its lock after this long; its job is then taken up again. */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lock expired (stalled). Tests shorten it. */
  stalledIntervalMs?: number;
  /** How often a started queue beats (lastWorkerBeat). */
  heartbeatMs?: number;
}

/**
 * A dead worker's job runs again once its lock lapsed (within DEFAULT_LOCK_MS of the death: the lock is
 * renewed every half of it) and a stalled check saw it twice: about 25 s at most, so a caller waiting on a
 * sync (SYNC_WAIT_MS, 60 s) still gets its answer. BullMQ's 30 s + 30 s took up to 90 s. A live worker
 * loses its lock only if its event loop stops for the whole lock time.
 */
export const DEFAULT_LOCK_MS = 15_000;
/** A Redis command with no answer within this is an error (the client is told 503, the watchdog reconnects). */
const COMMAND_TIMEOUT_MS = 3_000;
/** How often the command connection is pinged. */
const WATCH_MS = 2_000;
/** Waits older than this are also settled by looking at their job (pollWaiters). */
const WAITER_POLL_MS = 1_000;
export const DEFAULT_STALLED_INTERVAL_MS = 5_000;

const BACKOFF_TYPE = { exponential: 'retry-exponential', fixed: 'retry-fixed', none: 'retry-none' } as const;

interface Waiter {
  since: number;
  resolve(outcome: JobOutcome): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

type Lookup = { found: 'finished'; outcome: JobOutcome } | { found: 'pending' } | { found: 'none' };

export class BullMqJobQueue implements JobQueue {
  readonly driver = 'bullmq' as const;
  private readonly logger: QueueLogger;
  private readonly prefix: string;
  private readonly keep: KeepFinished;
  private readonly lockDurationMs: number;
  private readonly stalledIntervalMs: number;
  /** Commands (queues, ping). Fails requests while Redis is down instead of queueing them forever. */
  private readonly client: IORedis;
  /** Template for workers and queue events; BullMQ duplicates it for their blocking reads. */
  private readonly blockingClient: IORedis;
  private readonly queues = new Map<JobName, Queue>();
  private readonly handlers = new Map<JobName, { handler: JobHandler; concurrency: number }>();
  private readonly workers: Worker[] = [];
  private readonly waiters = new Map<string, Set<Waiter>>();
  private events?: Promise<QueueEvents[]>;
  private started = false;
  private closed = false;
  private readonly heartbeatMs: number;
  private stopBeating: (() => void) | null = null;
  private readonly stopWatching: () => void;
  /** Polls the jobs of waits that events have not settled (a floor under the event stream; see pollWaiters). */
  private readonly waiterPoll: NodeJS.Timeout;
  /** This worker process, a member of the heartbeat set. */
  private readonly workerId = newJobId();

  constructor(opts: BullMqJobQueueOptions) {
    this.logger = opts.logger ?? consoleQueueLogger;
    this.prefix = opts.prefix ?? 'msp-jobs';
    this.keep = opts.keepFinished ?? DEFAULT_KEEP_FINISHED;
    this.lockDurationMs = opts.lockDurationMs ?? DEFAULT_LOCK_MS;
    this.stalledIntervalMs = opts.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS;
    this.heartbeatMs = opts.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
    // A command gives up after COMMAND_TIMEOUT_MS: a link that drops packets (no reset) would otherwise hold
    // it until TCP notices, minutes later. The watchdog below replaces such a connection.
    this.client = new IORedis(opts.redisUrl, { maxRetriesPerRequest: 3, commandTimeout: COMMAND_TIMEOUT_MS });
    this.blockingClient = new IORedis(opts.redisUrl, { maxRetriesPerRequest: null, lazyConnect: true });
    for (const client of [this.client, this.blockingClient]) {
      client.on('error', (err: Error) => this.logger.error({ err: err.message }, 'redis connection error'));
    }
    this.waiterPoll = setInterval(() => void this.pollWaiters(), WAITER_POLL_MS);
    this.waiterPoll.unref();
    // Both connections we own: the commands', and the one the workers share for theirs (BullMQ watches the
    // workers' blocking reads itself: RedisQueueBackend.waitForJob).
    const watching = [this.client, this.blockingClient].map((client) => watchingCommands(client, this.logger, () => this.afterReconnect()));
    this.stopWatching = () => watching.forEach((stop) => stop());
    for (const name of JOB_NAMES) {
      const queue = new Queue(name, { connection: this.client, prefix: this.prefix });
      queue.on('error', (err) => this.logger.error({ jobName: name, err: err.message }, 'job queue error'));
      this.queues.set(name, queue);
    }
  }

  register<N extends JobName, R>(name: N, handler: JobHandler<JobPayloads[N], R>, opts: { concurrency?: number } = {}): void {
    this.queue(name);
    if (this.started) throw new Error(`Cannot register "${name}" after start()`);
    if (this.handlers.has(name)) throw new Error(`A handler for "${name}" is already registered`);
    this.handlers.set(name, { handler: handler as unknown as JobHandler, concurrency: Math.max(1, opts.concurrency ?? 1) });
  }

  async start(): Promise<void> {
    if (this.closed) throw new Error('Job queue is closed');
    const missing = JOB_NAMES.filter((name) => !this.handlers.has(name));
    if (missing.length > 0) throw new Error(`No job handler registered for: ${missing.join(', ')}`);
    if (this.started) return;
    this.started = true;
    for (const [name, { handler, concurrency }] of this.handlers) {
      const worker = new Worker(name, (job: Job) => this.process(name, handler, job), {
        connection: this.blockingClient,
        prefix: this.prefix,
        concurrency,
        lockDuration: this.lockDurationMs,
        stalledInterval: this.stalledIntervalMs,
        maxStalledCount: 1,
        settings: { backoffStrategy: (attemptsMade, type, err, job) => this.backoff(attemptsMade, type, err, job) },
      });
      worker.on('failed', (job, err) => this.logFailure(name, job, err));
      worker.on('error', (err) => this.logger.error({ jobName: name, err: err.message }, 'job worker error'));
      this.workers.push(worker);
    }
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
    // One sorted set per prefix: each worker's latest beat (its clock) by its id; the newest is the answer.
    this.stopBeating = beating(async () => {
      const now = Date.now();
      await this.client.multi().zadd(this.heartbeatKey, now, this.workerId).zremrangebyscore(this.heartbeatKey, '-inf', now - HEARTBEAT_FORGET_MS).exec();
    }, this.heartbeatMs);
  }

  private get heartbeatKey(): string {
    return `${this.prefix}:workers:heartbeat`;
  }

  async lastWorkerBeat(): Promise<number | null> {
    const newest = await this.client.zrevrange(this.heartbeatKey, 0, 0, 'WITHSCORES');
    return newest.length === 2 ? Number(newest[1]) : null;
  }

  async add<N extends JobName>(name: N, data: JobPayloads[N], opts: AddJobOptions = {}): Promise<{ id: string }> {
    if (this.closed) throw new Error('Job queue is closed');
    if (opts.jobId !== undefined) assertValidJobId(opts.jobId);
    const attempts = opts.attempts ?? 1;
    if (!Number.isInteger(attempts) || attempts < 1) throw new Error('attempts must be an integer >= 1');
    validateBackoff(opts.backoff);
    const id = opts.jobId ?? newJobId();
    // BullMQ ignores an add whose id exists in any state, atomically: concurrent adds make one job.
    await this.queue(name).add(name, data, { ...this.jobOptions(attempts, opts.backoff), jobId: id, delay: opts.delay });
    return { id };
  }

  async waitFor<R = unknown>(jobId: string, timeoutMs = DEFAULT_WAIT_TIMEOUT_MS): Promise<JobOutcome<R>> {
    if (this.closed) throw new Error('Job queue is closed');
    const deadline = Date.now() + timeoutMs;
    // Listen first, then look at the job: a job finishing in between is seen either way. Setting up the
    // listener counts against the wait: with Redis unreachable it would otherwise block past the timeout.
    await withTimeout(this.ensureEvents(), timeoutMs, () => new JobWaitTimeoutError(jobId, timeoutMs));
    return new Promise<JobOutcome<R>>((resolve, reject) => {
      const waiters = this.waiters.get(jobId) ?? new Set<Waiter>();
      const waiter: Waiter = {
        since: Date.now(),
        resolve: resolve as (outcome: JobOutcome) => void,
        reject,
        timer: setTimeout(() => {
          this.dropWaiter(jobId, waiter);
          reject(new JobWaitTimeoutError(jobId, timeoutMs));
        }, Math.max(0, deadline - Date.now())),
      };
      waiters.add(waiter);
      this.waiters.set(jobId, waiters);
      this.lookup(jobId).then(
        (found) => {
          if (found.found === 'finished') this.settle(jobId, found.outcome);
          else if (found.found === 'none') this.fail(jobId, new UnknownJobError(jobId));
        },
        (err) => this.fail(jobId, toError(err)),
      );
    });
  }

  async upsertScheduler<N extends JobName>(schedulerId: string, everyMs: number, name: N, data: JobPayloads[N]): Promise<void> {
    if (this.closed) throw new Error('Job queue is closed');
    if (!(everyMs > 0)) throw new Error('everyMs must be > 0');
    // Schedulers live in a queue; one that moves to another job name must leave its old queue.
    for (const [other, queue] of this.queues) if (other !== name) await queue.removeJobScheduler(schedulerId);
    await this.queue(name).upsertJobScheduler(schedulerId, { every: everyMs }, { name, data, opts: this.jobOptions(1) });
  }

  async removeScheduler(schedulerId: string): Promise<void> {
    for (const queue of this.queues.values()) await queue.removeJobScheduler(schedulerId);
  }

  async schedulerIds(): Promise<string[]> {
    const ids = await Promise.all([...this.queues.values()].map(async (queue) => (await queue.getJobSchedulers(0, -1)).map((s) => s.key)));
    return [...new Set(ids.flat())];
  }

  async counts(): Promise<JobCounts[]> {
    return Promise.all([...this.queues].map(async ([name, queue]) => {
      const [c, [oldest]] = await Promise.all([queue.getJobCounts('waiting', 'delayed', 'active', 'failed'), queue.getJobs(['wait'], 0, 0, true)]);
      // Waiting since it was added, or since its delay ran out.
      const oldestWaitingMs = oldest ? Math.max(0, Date.now() - oldest.timestamp - (oldest.delay ?? 0)) : null;
      return { name, waiting: c.waiting ?? 0, delayed: c.delayed ?? 0, active: c.active ?? 0, failed: c.failed ?? 0, oldestWaitingMs };
    }));
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 2000)));
    try {
      return await Promise.race([this.client.ping().then((reply) => reply === 'PONG'), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopBeating?.();
    this.stopWatching();
    clearInterval(this.waiterPoll);
    // Worker.close() lets active jobs finish before it resolves.
    await Promise.allSettled(this.workers.map((worker) => worker.close()));
    await this.settleWaitersAtClose();
    const events = this.events ? await this.events.catch(() => []) : [];
    await Promise.allSettled(events.map((queueEvents) => queueEvents.close()));
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
    await Promise.allSettled([this.client, this.blockingClient].map((client) => quit(client)));
  }

  private async process(name: JobName, handler: JobHandler, job: Job): Promise<unknown> {
    const attempts = job.opts.attempts ?? 1;
    const attempt = job.attemptsMade + 1;
    try {
      return await handler({
        id: job.id!, name, data: job.data as JobPayload, attempt, attempts,
        // A stalled job (its worker died) is started again without a failed attempt: attemptsStarted tells.
        redelivered: attempt > 1 || (job.attemptsStarted ?? 0) > 1 || (job.stalledCounter ?? 0) > 0,
        // A job scheduler's run carries the scheduler's key.
        scheduled: job.repeatJobKey != null,
      });
    } catch (thrown) {
      const err = toError(thrown);
      if (isUnrecoverable(err)) throw new UnrecoverableError(err.message);
      // On the last try BullMQ fails the job with this error; a RetryAfterError fails with its cause.
      throw attempt >= attempts ? finalError(err) : err;
    }
  }

  private backoff(attemptsMade: number, type: string | undefined, err: Error | undefined, job: { opts: JobsOptions } | undefined): number {
    const stored = job?.opts.backoff;
    const configured = typeof stored === 'object' ? stored : undefined;
    let backoff: BackoffOptions | undefined;
    if (type === BACKOFF_TYPE.exponential || type === BACKOFF_TYPE.fixed) {
      backoff = {
        type: type === BACKOFF_TYPE.exponential ? 'exponential' : 'fixed',
        delay: configured?.delay ?? 0,
        jitter: configured?.jitter,
      };
    }
    return retryDelayMs(err, backoff, attemptsMade);
  }

  private jobOptions(attempts: number, backoff?: BackoffOptions): JobsOptions {
    const keep = { age: Math.ceil(this.keep.ageMs / 1000), count: this.keep.count };
    return {
      attempts,
      backoff: backoff
        ? { type: BACKOFF_TYPE[backoff.type], delay: backoff.delay, jitter: backoff.jitter }
        : { type: BACKOFF_TYPE.none, delay: 0 },
      removeOnComplete: keep,
      removeOnFail: keep,
    };
  }

  private logFailure(name: JobName, job: Job | undefined, err: Error): void {
    const fields = {
      jobId: job?.id,
      jobName: name,
      tenantId: (job?.data as JobPayload | undefined)?.tenantId,
      attemptsMade: job?.attemptsMade,
      err: finalError(err).message,
    };
    // finishedOn is set only when the job moved to failed for good.
    if (!job || job.finishedOn) this.logger.error(fields, 'job failed');
    else this.logger.warn(fields, 'job attempt failed, will retry');
  }

  /**
   * One QueueEvents per queue, started from the stream's current tail (not '$', which would only count
   * from the first blocking read) so no event after this call is missed.
   */
  private ensureEvents(): Promise<QueueEvents[]> {
    // A setup that failed (Redis down at the first wait) is tried again by the next wait, not kept.
    if (this.events) return this.events;
    const created: QueueEvents[] = [];
    this.events = Promise.all(
      [...this.queues].map(async ([name, queue]) => {
        const tail = await this.client.xrevrange(queue.keys.events, '+', '-', 'COUNT', 1);
        const queueEvents = new QueueEvents(name, {
          connection: this.blockingClient,
          prefix: this.prefix,
          lastEventId: tail[0]?.[0] ?? '0-0',
        });
        created.push(queueEvents);
        queueEvents.on('error', (err) => this.logger.error({ jobName: name, err: err.message }, 'queue events error'));
        const onFinished = (read: (queue: Queue, jobId: string) => Promise<Lookup>) => ({ jobId }: { jobId: string }) => {
          if (!this.waiters.has(jobId)) return;
          read(queue, jobId).then(
            (found) => found.found === 'finished' && this.settle(jobId, found.outcome),
            (err) => this.fail(jobId, toError(err)),
          );
        };
        // A completed job is read without asking its state first: one round trip less on every commit's
        // wait (a failed attempt may still be retried, so a failure asks). finishedIn still checks that the
        // job read has finished, in case the id was reused since the event.
        queueEvents.on('completed', onFinished((q, id) => this.finishedIn(q, id, 'completed')));
        queueEvents.on('failed', onFinished((q, id) => this.outcomeIn(q, id)));
        await queueEvents.waitUntilReady();
        return queueEvents;
      }),
    );
    const events = this.events;
    events.catch(() => {
      if (this.events === events) this.events = undefined;
      void Promise.allSettled(created.map((queueEvents) => queueEvents.close()));
    });
    return events;
  }

  /**
   * The event stream settles waits within milliseconds, but its blocking read may sit on a connection that a
   * network fault left half-dead (no reset) long after Redis is reachable again. Every WAITER_POLL_MS the
   * jobs of waits older than that are looked up directly, so a finished job is answered within about a
   * second of Redis answering, whatever the stream does.
   */
  private polling = false;
  private async pollWaiters(): Promise<void> {
    if (this.polling || this.closed || this.waiters.size === 0) return;
    this.polling = true;
    try {
      const old = Date.now() - WAITER_POLL_MS;
      const ids = [...this.waiters].filter(([, ws]) => [...ws].some((w) => w.since <= old)).map(([id]) => id);
      await Promise.all(ids.map(async (jobId) => {
        const found = await this.lookup(jobId).catch(() => undefined);
        if (found?.found === 'finished') this.settle(jobId, found.outcome);
      }));
    } finally {
      this.polling = false;
    }
  }

  /** The command connection was replaced: the event streams may sit on dead sockets too; start them again. */
  private afterReconnect(): void {
    const events = this.events;
    if (!events) return;
    this.events = undefined;
    void events.then((all) => Promise.allSettled(all.map((queueEvents) => queueEvents.close())), () => undefined);
    if (this.waiters.size > 0) void this.ensureEvents().catch(() => undefined);
  }

  /** The job in whichever queue holds it: every queue asked at once (one round trip, not one a queue). */
  private async lookup(jobId: string): Promise<Lookup> {
    const found = await Promise.all([...this.queues.values()].map((queue) => this.outcomeIn(queue, jobId)));
    return found.find((f) => f.found === 'finished') ?? (found.some((f) => f.found === 'pending') ? { found: 'pending' } : { found: 'none' });
  }

  private async outcomeIn(queue: Queue, jobId: string): Promise<Lookup> {
    const state = await queue.getJobState(jobId);
    if (state === 'unknown') return { found: 'none' };
    if (state !== 'completed' && state !== 'failed') return { found: 'pending' };
    return this.finishedIn(queue, jobId, state);
  }

  /** The outcome of a job said to be in `state` (by its state, or by its event). */
  private async finishedIn(queue: Queue, jobId: string, state: 'completed' | 'failed'): Promise<Lookup> {
    const job = await queue.getJob(jobId);
    if (!job) return { found: 'none' };
    if (!job.finishedOn) return { found: 'pending' };
    return {
      found: 'finished',
      outcome: {
        id: jobId,
        state,
        ...(state === 'completed' ? { result: job.returnvalue ?? undefined } : { error: job.failedReason }),
        attemptsMade: job.attemptsMade,
      },
    };
  }

  /** After the workers stopped: answer waiters whose job has finished, reject the rest. */
  private async settleWaitersAtClose(): Promise<void> {
    for (const jobId of [...this.waiters.keys()]) {
      const found = await this.lookup(jobId).catch(() => undefined);
      if (found?.found === 'finished') this.settle(jobId, found.outcome);
      else this.fail(jobId, new Error(`Job queue closed before job "${jobId}" finished`));
    }
  }

  private settle(jobId: string, outcome: JobOutcome): void {
    const waiters = this.waiters.get(jobId);
    this.waiters.delete(jobId);
    for (const waiter of waiters ?? []) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcome);
    }
  }

  private fail(jobId: string, err: Error): void {
    const waiters = this.waiters.get(jobId);
    this.waiters.delete(jobId);
    for (const waiter of waiters ?? []) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
    }
  }

  private dropWaiter(jobId: string, waiter: Waiter): void {
    const waiters = this.waiters.get(jobId);
    waiters?.delete(waiter);
    if (waiters?.size === 0) this.waiters.delete(jobId);
  }

  private queue(name: JobName): Queue {
    const queue = this.queues.get(name);
    if (!queue) throw new Error(`Unknown job name "${name}"`);
    return queue;
  }
}

/**
 * Pings a connection every WATCH_MS; when a ping gets no answer within COMMAND_TIMEOUT_MS while
 * the connection says it is ready, the connection is dropped and made again (a fresh TCP connection works
 * the moment the network does; the old one waits out TCP's retransmission backoff). `replaced` runs after.
 */
function watchingCommands(client: IORedis, logger: QueueLogger, replaced: () => void): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy || client.status !== 'ready') return;
    busy = true;
    withTimeout(client.ping(), COMMAND_TIMEOUT_MS, () => new Error('Command timed out')).then(
      () => { busy = false; },
      (err: Error) => {
        busy = false;
        if (!/timed out/i.test(err.message) || client.status !== 'ready') return;
        logger.warn({ err: err.message }, 'redis connection unresponsive; reconnecting');
        client.disconnect(true);
        replaced();
      },
    );
  }, WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** `promise`, or `timeoutError()` once `ms` have passed (the promise goes on, its outcome unused). */
async function withTimeout<T>(promise: Promise<T>, ms: number, timeoutError: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(timeoutError()), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function quit(client: IORedis): Promise<void> {
  if (client.status === 'end' || client.status === 'wait') {
    client.disconnect();
    return;
  }
  await client.quit().catch(() => client.disconnect());
}
