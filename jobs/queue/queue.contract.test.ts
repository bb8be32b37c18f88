/**
 * One behaviour suite for both job-queue drivers: in-process always, BullMQ when REDIS_URL is set.
 * Timing checks only assert lower bounds and orderings derived from the configured delays.
 */
import { forgetRedisKeys } from '../../test/support/runtime';
import { BullMqJobQueue } from './bullmq';
import { InProcessJobQueue } from './in-process';
import { QueueLogger } from './logger';
import { KeepFinished } from './retention';
import {
  JOB_NAMES,
  JobContext,
  JobHandler,
  AddJobOptions,
  JobName,
  JobPayload,
  JobQueue,
  JobWaitTimeoutError,
  RetryAfterError,
  UnknownJobError,
  UnrecoverableJobError,
} from './types';

/** The contract is about the queue, not the payloads: it adds and handles payloads of its own. */
interface UntypedQueue {
  add(name: JobName, data: JobPayload & Record<string, unknown>, opts?: AddJobOptions): Promise<{ id: string }>;
  register(name: JobName, handler: JobHandler<any, any>, opts?: { concurrency?: number }): void;
  upsertScheduler(schedulerId: string, everyMs: number, name: JobName, data: JobPayload & Record<string, unknown>): Promise<void>;
}
const untyped = (q: JobQueue) => q as unknown as UntypedQueue;

interface LogEntry {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}
interface DriverOptions {
  logger: QueueLogger;
  keepFinished?: KeepFinished;
}
type Factory = (opts: DriverOptions) => JobQueue;

const redisUrl = process.env.REDIS_URL;
const runPrefix = `jq-test-${process.pid}-${Date.now()}`;
let prefixSeq = 0;

const drivers: Array<[string, Factory]> = [['in-process', (opts) => new InProcessJobQueue(opts)]];
if (redisUrl) {
  drivers.push([
    'bullmq',
    (opts) => new BullMqJobQueue({ redisUrl, prefix: `${runPrefix}-${++prefixSeq}`, stalledIntervalMs: 1000, ...opts }),
  ]);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls until cond() holds; bounded so a broken queue fails the test instead of hanging it. */
async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
}

const noop: JobHandler = async () => undefined;

type Handlers = Partial<Record<JobName, JobHandler<any, any>>>;

function registerAll(queue: JobQueue, handlers: Handlers, concurrency: Partial<Record<JobName, number>> = {}): void {
  for (const name of JOB_NAMES) untyped(queue).register(name, handlers[name] ?? noop, { concurrency: concurrency[name] });
}

// This run's keys (jobs left delayed on purpose, kept finished jobs, schedulers).
afterAll(() => forgetRedisKeys(redisUrl, runPrefix));

describe.each(drivers)('job queue contract: %s', (driver, make) => {
  let opened: JobQueue[] = [];
  let logs: LogEntry[] = [];
  const logger: QueueLogger = {
    info: (obj, msg) => logs.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => logs.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => logs.push({ level: 'error', obj, msg }),
  };

  function open(opts: Partial<DriverOptions> = {}): JobQueue {
    const queue = make({ logger, ...opts });
    opened.push(queue);
    return queue;
  }

  async function started(handlers: Handlers, concurrency?: Partial<Record<JobName, number>>): Promise<JobQueue> {
    const queue = open();
    registerAll(queue, handlers, concurrency);
    await queue.start();
    return queue;
  }

  beforeEach(() => {
    logs = [];
  });

  afterEach(async () => {
    await Promise.all(opened.map((queue) => queue.close()));
    opened = [];
  });

  it(`is the ${driver} driver and answers ping`, async () => {
    const queue = open();
    expect(queue.driver).toBe(driver);
    expect(await queue.ping()).toBe(true);
  });

  it('returns the handler result through waitFor, with the job data as added', async () => {
    const seen: Array<JobContext<any>> = [];
    const queue = await started({
      'sync.connection': async (job: JobContext<{ tenantId: string; connectionId: string }>) => {
        seen.push(job);
        return { synced: 42, connectionId: job.data.connectionId };
      },
    });
    const { id } = await untyped(queue).add('sync.connection', { tenantId: 'sandbox-alpha', connectionId: 'c-1' });

    const outcome = await queue.waitFor(id, 5000);

    expect(outcome).toEqual({ id, state: 'completed', result: { synced: 42, connectionId: 'c-1' }, attemptsMade: 1 });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      id,
      name: 'sync.connection',
      data: { tenantId: 'sandbox-alpha', connectionId: 'c-1' },
      attempt: 1,
      attempts: 1,
      scheduled: false,
    });
    // A finished job answers at once, again.
    await expect(queue.waitFor(id, 5000)).resolves.toEqual(outcome);
  });

  it('retries until an attempt succeeds (fails twice, completes on attempt 3)', async () => {
    const attemptsSeen: number[] = [];
    const queue = await started({
      'vendor.write': async (job) => {
        attemptsSeen.push(job.attempt);
        if (job.attempt < 3) throw new Error(`vendor 503 on attempt ${job.attempt}`);
        return 'written';
      },
    });
    const { id } = await untyped(queue).add('vendor.write', { tenantId: 't1' }, { attempts: 5, backoff: { type: 'fixed', delay: 5 } });

    const outcome = await queue.waitFor(id, 5000);

    expect(outcome).toMatchObject({ state: 'completed', result: 'written', attemptsMade: 3 });
    expect(attemptsSeen).toEqual([1, 2, 3]);
    expect(logs.filter((entry) => entry.level === 'warn' && entry.obj.jobId === id)).toHaveLength(2);
  });

  it('fails after the last attempt with the last error: handler called `attempts` times, failure logged', async () => {
    let calls = 0;
    const queue = await started({
      'webhook.deliver': async (job) => {
        calls++;
        throw new Error(`endpoint answered 500 (attempt ${job.attempt})`);
      },
    });
    const { id } = await untyped(queue).add('webhook.deliver', { tenantId: 't1' }, { attempts: 3, backoff: { type: 'fixed', delay: 5 } });

    const outcome = await queue.waitFor(id, 5000);

    expect(outcome).toEqual({ id, state: 'failed', error: 'endpoint answered 500 (attempt 3)', attemptsMade: 3 });
    expect(calls).toBe(3);
    await until(() => logs.some((entry) => entry.level === 'error' && entry.obj.jobId === id), 'the failure is logged');
    expect(logs.find((entry) => entry.level === 'error' && entry.obj.jobId === id)?.obj).toMatchObject({
      jobName: 'webhook.deliver',
      tenantId: 't1',
      err: 'endpoint answered 500 (attempt 3)',
    });
  });

  it('exponential backoff: the gaps between attempts grow, each at least its jittered minimum', async () => {
    const startedAt: number[] = [];
    const queue = await started({
      'vendor.write': async () => {
        startedAt.push(Date.now());
        throw new Error('still rate limited');
      },
    });
    const base = 25;
    const jitter = 0.2;
    const { id } = await untyped(queue).add(
      'vendor.write',
      { tenantId: 't1' },
      { attempts: 6, backoff: { type: 'exponential', delay: base, jitter } },
    );

    expect(await queue.waitFor(id, 10_000)).toMatchObject({ state: 'failed', attemptsMade: 6 });

    // Timers only ever fire late (BullMQ's delayed jobs by up to ~100 ms with Redis' default hz), so
    // lower bounds are exact; the minimums double (20, 40, 80, 160, 320 ms) while a base of 25 ms stays flat.
    const gaps = startedAt.slice(1).map((at, i) => at - startedAt[i]);
    expect(gaps).toHaveLength(5);
    gaps.forEach((gap, i) => {
      const shortestAllowed = Math.floor(base * 2 ** i * (1 - jitter));
      expect(gap).toBeGreaterThanOrEqual(shortestAllowed - 2); // 2 ms: timer rounding
    });
    expect(gaps[4]).toBeGreaterThan(gaps[0]);
  });

  it("RetryAfterError(ms) retries after at least ms, whatever the backoff says", async () => {
    const startedAt: number[] = [];
    const queue = await started({
      'vendor.write': async (job) => {
        startedAt.push(Date.now());
        if (job.attempt === 1) throw new RetryAfterError(150, new Error('HTTP 429'));
        return 'ok';
      },
    });
    const { id } = await untyped(queue).add('vendor.write', { tenantId: 't1' }, { attempts: 3, backoff: { type: 'exponential', delay: 1 } });

    expect(await queue.waitFor(id, 5000)).toMatchObject({ state: 'completed', result: 'ok', attemptsMade: 2 });
    expect(startedAt[1] - startedAt[0]).toBeGreaterThanOrEqual(148);
  });

  it("a RetryAfterError on the last attempt fails the job with its cause's message", async () => {
    let calls = 0;
    const queue = await started({
      'vendor.write': async () => {
        calls++;
        throw new RetryAfterError(10, new Error('HTTP 429 Too Many Requests'));
      },
    });
    const { id } = await untyped(queue).add('vendor.write', { tenantId: 't1' }, { attempts: 2 });

    expect(await queue.waitFor(id, 5000)).toMatchObject({
      state: 'failed',
      error: 'HTTP 429 Too Many Requests',
      attemptsMade: 2,
    });
    expect(calls).toBe(2);
  });

  it('the delay option holds back the first run', async () => {
    let ranAt = 0;
    const queue = await started({
      'webhook.deliver': async () => {
        ranAt = Date.now();
      },
    });
    const addedAt = Date.now();
    const { id } = await untyped(queue).add('webhook.deliver', { tenantId: 't1' }, { delay: 120 });

    expect(await queue.waitFor(id, 5000)).toMatchObject({ state: 'completed' });
    expect(ranAt - addedAt).toBeGreaterThanOrEqual(118);
  });

  it('job-id dedupe: five concurrent adds of one id run the handler once, and a finished id is not run again', async () => {
    const runs = new Map<string, number>();
    const queue = await started({
      'vendor.write': async (job: JobContext<{ tenantId: string; key: string }>) => {
        runs.set(job.data.key, (runs.get(job.data.key) ?? 0) + 1);
        await sleep(20);
        return job.data.key;
      },
    });

    const adds = await Promise.all(
      Array.from({ length: 5 }, () => untyped(queue).add('vendor.write', { tenantId: 't1', key: 'write-1' }, { jobId: 'write-1' })),
    );
    expect(adds.map((added) => added.id)).toEqual(Array(5).fill('write-1'));
    expect(await queue.waitFor('write-1', 5000)).toMatchObject({ state: 'completed', result: 'write-1' });

    // Adding the finished id again is a no-op; a later job on the same name proves nothing was queued.
    expect(await untyped(queue).add('vendor.write', { tenantId: 't1', key: 'write-1' }, { jobId: 'write-1' })).toEqual({ id: 'write-1' });
    const sentinel = await untyped(queue).add('vendor.write', { tenantId: 't1', key: 'sentinel' });
    await queue.waitFor(sentinel.id, 5000);

    expect(runs.get('write-1')).toBe(1);
  });

  it('job-id dedupe also holds while the first job is delayed', async () => {
    let calls = 0;
    const queue = await started({
      'sync.connection': async () => {
        calls++;
      },
    });
    await untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'sync-c1', delay: 60 });
    await untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'sync-c1' });

    expect(await queue.waitFor('sync-c1', 5000)).toMatchObject({ state: 'completed', attemptsMade: 1 });
    const sentinel = await untyped(queue).add('sync.connection', { tenantId: 't1' });
    await queue.waitFor(sentinel.id, 5000);
    expect(calls).toBe(2); // sync-c1 once, the sentinel once
  });

  it('once a finished job is dropped from the kept records, its id runs again', async () => {
    const runs: string[] = [];
    const queue = open({ keepFinished: { count: 1, ageMs: 60_000 } });
    registerAll(queue, {
      'sync.connection': async (job) => {
        runs.push(job.id);
      },
    });
    await queue.start();

    await untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'first' });
    await queue.waitFor('first', 5000);
    await untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'second' });
    await queue.waitFor('second', 5000);
    await untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'first' });
    await queue.waitFor('first', 5000);

    expect(runs).toEqual(['first', 'second', 'first']);
  });

  it('UnrecoverableJobError fails the job at once, whatever attempts remain', async () => {
    let calls = 0;
    const queue = await started({
      'sync.connection': async () => {
        calls++;
        throw new UnrecoverableJobError('credentials revoked');
      },
    });
    const { id } = await untyped(queue).add('sync.connection', { tenantId: 't1' }, { attempts: 5, backoff: { type: 'fixed', delay: 5 } });

    expect(await queue.waitFor(id, 5000)).toEqual({ id, state: 'failed', error: 'credentials revoked', attemptsMade: 1 });
    expect(calls).toBe(1);
  });

  it('runs at most `concurrency` jobs of a name at once, per name', async () => {
    const active: Record<string, number> = {};
    const peak: Record<string, number> = {};
    const tracked = (name: JobName): JobHandler => async () => {
      active[name] = (active[name] ?? 0) + 1;
      peak[name] = Math.max(peak[name] ?? 0, active[name]);
      await sleep(60);
      active[name]--;
    };
    const queue = await started(
      { 'sync.connection': tracked('sync.connection'), 'webhook.deliver': tracked('webhook.deliver') },
      { 'sync.connection': 2, 'webhook.deliver': 1 },
    );

    const ids = await Promise.all([
      ...Array.from({ length: 4 }, () => untyped(queue).add('sync.connection', { tenantId: 't1' })),
      ...Array.from({ length: 3 }, () => untyped(queue).add('webhook.deliver', { tenantId: 't1' })),
    ]);
    await Promise.all(ids.map(({ id }) => queue.waitFor(id, 5000)));

    expect(peak).toEqual({ 'sync.connection': 2, 'webhook.deliver': 1 });
  });

  it('a scheduler runs its job repeatedly and stops after removeScheduler', async () => {
    let runs = 0;
    const queue = await started({
      'sync.connection': async (job) => {
        expect(job.data).toEqual({ tenantId: 't1', connectionId: 'c-9' });
        expect(job.scheduled).toBe(true);
        runs++;
      },
    });

    await untyped(queue).upsertScheduler('poll-c9', 40, 'sync.connection', { tenantId: 't1', connectionId: 'c-9' });
    expect(await queue.schedulerIds()).toEqual(['poll-c9']);
    await until(() => runs >= 3, 'the scheduled job ran 3 times');
    await queue.removeScheduler('poll-c9');
    expect(await queue.schedulerIds()).toEqual([]);
    await sleep(160); // a job already due may still run
    const afterRemoval = runs;
    await sleep(200); // five more periods

    expect(runs).toBe(afterRemoval);
  });

  it('re-upserting a scheduler replaces it', async () => {
    const versions: number[] = [];
    const record: JobHandler<JobPayload & { v?: number }> = async (job) => {
      versions.push(job.data.v!);
    };
    const queue = await started({ 'sync.connection': record, 'webhook.deliver': record });

    await untyped(queue).upsertScheduler('poll', 40, 'sync.connection', { tenantId: 't1', v: 1 });
    await until(() => versions.includes(1), 'version 1 ran');
    await untyped(queue).upsertScheduler('poll', 40, 'webhook.deliver', { tenantId: 't1', v: 2 });
    await until(() => versions.filter((v) => v === 2).length >= 2, 'version 2 ran twice');
    const v1Runs = versions.filter((v) => v === 1).length;
    await sleep(200);

    expect(versions.filter((v) => v === 1).length).toBe(v1Runs);
    expect(versions.filter((v) => v === 2).length).toBeGreaterThan(2);
    await queue.removeScheduler('poll');
  });

  it('start() rejects when a job name has no handler', async () => {
    const queue = open();
    untyped(queue).register('sync.connection', noop);
    untyped(queue).register('vendor.write', noop);

    await expect(queue.start()).rejects.toThrow(/webhook\.deliver/);
  });

  it('jobs added before start() wait for it', async () => {
    let calls = 0;
    const queue = open();
    registerAll(queue, {
      'webhook.deliver': async () => {
        calls++;
        return 'delivered';
      },
    });
    const { id } = await untyped(queue).add('webhook.deliver', { tenantId: 't1' });
    await sleep(50);
    expect(calls).toBe(0);

    await queue.start();

    expect(await queue.waitFor(id, 5000)).toMatchObject({ state: 'completed', result: 'delivered' });
    expect(calls).toBe(1);
  });

  it('close() waits for the active job to finish, and its waiter gets the outcome', async () => {
    let finished = false;
    let markStarted!: () => void;
    const jobStarted = new Promise<void>((resolve) => (markStarted = resolve));
    const queue = await started({
      'sync.connection': async () => {
        markStarted();
        await sleep(150);
        finished = true;
        return 'done';
      },
    });
    const { id } = await untyped(queue).add('sync.connection', { tenantId: 't1' });
    const outcome = queue.waitFor(id, 5000);
    await jobStarted;

    await queue.close();

    expect(finished).toBe(true);
    await expect(outcome).resolves.toMatchObject({ state: 'completed', result: 'done' });
  });

  it('waitFor rejects on timeout and for an unknown job id', async () => {
    const queue = await started({});
    const { id } = await untyped(queue).add('sync.connection', { tenantId: 't1' }, { delay: 10_000 });

    // Typed, so a caller tells "still going" (answer 202 and let it run) from "no such job" (404).
    await expect(queue.waitFor(id, 50)).rejects.toBeInstanceOf(JobWaitTimeoutError);
    await expect(queue.waitFor('no-such-job', 1000)).rejects.toBeInstanceOf(UnknownJobError);
    await expect(queue.waitFor(id, 50)).rejects.toThrow(/Timed out/);
  });

  it("rejects job ids BullMQ cannot store (integers, ':')", async () => {
    const queue = open();
    await expect(untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: 'tenant:1' })).rejects.toThrow(/":"/);
    await expect(untyped(queue).add('sync.connection', { tenantId: 't1' }, { jobId: '42' })).rejects.toThrow(/integer/);
  });
});
