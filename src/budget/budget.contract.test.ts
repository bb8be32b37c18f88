/**
 * One behaviour suite for both budget stores: in-process always, Redis when REDIS_URL is set. Two
 * VendorBudgets over stores with the same name stand for two processes sharing one connection.
 */
import { forgetRedisKeys } from '../../test/support/runtime';
import type { BudgetLimits, BudgetStore } from './budget';
import { InProcessBudgetStore } from './in-process-store';
import { RedisBudgetStore } from './redis-store';
import { VendorBudget } from './vendor-budget';

const redisUrl = process.env.REDIS_URL;
const runPrefix = `budget-test-${process.pid}-${Date.now()}`;

/** Returns a store factory: every call of the factory is another "process" on the same shared state. */
type Shared = () => () => BudgetStore;
const drivers: Array<[string, Shared]> = [['in-process', () => { const s = new InProcessBudgetStore(); return () => s; }]];
if (redisUrl) {
  let seq = 0;
  drivers.push(['redis', () => { const prefix = `${runPrefix}-${++seq}`; return () => new RedisBudgetStore(redisUrl, prefix); }]);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

afterAll(() => forgetRedisKeys(redisUrl, runPrefix));

describe.each(drivers)('vendor budget contract: %s', (_name, shared) => {
  let stores: BudgetStore[] = [];
  let open: () => BudgetStore;
  beforeEach(() => {
    const make = shared();
    stores = [];
    open = () => { const s = make(); stores.push(s); return s; };
  });
  afterEach(async () => { for (const s of new Set(stores)) await s.close(); });

  it('never has more calls in flight than the concurrent limit, across processes sharing the connection', async () => {
    const limits: BudgetLimits = { requestsPerHour: 1000, concurrent: 3 };
    const a = new VendorBudget(open(), { pollMs: 10 });
    const b = new VendorBudget(open(), { pollMs: 10 });
    let inFlight = 0;
    let max = 0;
    const call = async (budget: VendorBudget, priority: 'write' | 'sync') => {
      const lease = await budget.acquire('conn-1', limits, priority);
      inFlight++; max = Math.max(max, inFlight);
      await sleep(15);
      inFlight--;
      await lease.release();
    };
    await Promise.all(Array.from({ length: 16 }, (_, i) => call(i % 2 ? a : b, i % 3 ? 'sync' : 'write')));
    expect(max).toBe(3);
    const snap = await a.snapshot('conn-1', limits);
    expect(snap).toMatchObject({ usedLastHour: 16, inFlight: 0, concurrentLimit: 3, requestsPerHour: 1000, effectiveRate: 1000 });
  });

  it('admits no more than the hourly limit, keeps the last tenth for writes, and says when the window frees', async () => {
    const store = open();
    const limits: BudgetLimits = { requestsPerHour: 10, concurrent: 100 };
    const now = Date.now();
    const admitted = [];
    for (let i = 0; i < 12; i++) admitted.push(await store.tryAcquire('conn-h', limits, 'sync', now + i, 60_000));
    expect(admitted.filter((r) => r.ok)).toHaveLength(9);
    const refused = admitted[11];
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryInMs).toBeGreaterThan(3_500_000);
    expect((await store.tryAcquire('conn-h', limits, 'write', now + 20, 60_000)).ok).toBe(true);
    expect((await store.tryAcquire('conn-h', limits, 'write', now + 21, 60_000)).ok).toBe(false);
    // An hour after the first admission its slot is free again.
    expect((await store.tryAcquire('conn-h', limits, 'write', now + 3_600_000, 60_000)).ok).toBe(true);
    expect((await store.snapshot('conn-h', limits, now + 3_600_000)).usedLastHour).toBe(10);
  });

  it('lets a waiting write in before waiting sync calls', async () => {
    const budget = new VendorBudget(open(), { pollMs: 10 });
    const limits: BudgetLimits = { requestsPerHour: 1000, concurrent: 1 };
    const holder = await budget.acquire('conn-w', limits, 'sync');
    const order: string[] = [];
    const syncs = [1, 2].map(async (i) => { const l = await budget.acquire('conn-w', limits, 'sync'); order.push(`sync${i}`); await sleep(5); await l.release(); });
    await sleep(20);
    const write = (async () => { const l = await budget.acquire('conn-w', limits, 'write'); order.push('write'); await sleep(5); await l.release(); })();
    await sleep(30);
    await holder.release();
    await Promise.all([...syncs, write]);
    expect(order[0]).toBe('write');
    expect(order).toHaveLength(3);
  });

  it('halves the effective rate on a 429 (once per storm) and recovers additively', async () => {
    const store = open();
    const limits: BudgetLimits = { requestsPerHour: 1000, concurrent: 5 };
    const now = Date.now();
    await store.throttled('conn-a', now);
    await store.throttled('conn-a', now + 10); // same storm
    expect((await store.snapshot('conn-a', limits, now + 10)).effectiveRate).toBe(500);
    await store.throttled('conn-a', now + 2_000);
    expect((await store.snapshot('conn-a', limits, now + 2_000)).effectiveRate).toBe(250);
    // +5% of the limit a minute without a 429.
    expect((await store.snapshot('conn-a', limits, now + 2_000 + 60_000)).effectiveRate).toBe(300);
    expect((await store.snapshot('conn-a', limits, now + 2_000 + 3_600_000)).effectiveRate).toBe(1000);
  });

  it('lets fewer calls run at once after a 429', async () => {
    const store = open();
    const limits: BudgetLimits = { requestsPerHour: 1000, concurrent: 4 };
    const now = Date.now();
    await store.throttled('conn-c', now);
    const admitted = [];
    for (let i = 0; i < 4; i++) admitted.push((await store.tryAcquire('conn-c', limits, 'write', now + i, 60_000)).ok);
    expect(admitted).toEqual([true, true, false, false]);
  });

  it('frees the slot of a lease never released (a process died mid-call)', async () => {
    const store = open();
    const limits: BudgetLimits = { requestsPerHour: 1000, concurrent: 1 };
    const now = Date.now();
    expect((await store.tryAcquire('conn-l', limits, 'write', now, 50)).ok).toBe(true);
    expect((await store.tryAcquire('conn-l', limits, 'write', now + 10, 50)).ok).toBe(false);
    expect((await store.tryAcquire('conn-l', limits, 'write', now + 60, 50)).ok).toBe(true);
  });

  it('keeps connections apart', async () => {
    const store = open();
    const limits: BudgetLimits = { requestsPerHour: 1, concurrent: 1 };
    const now = Date.now();
    expect((await store.tryAcquire('conn-x', limits, 'write', now, 1000)).ok).toBe(true);
    expect((await store.tryAcquire('conn-y', limits, 'write', now, 1000)).ok).toBe(true);
  });
});
