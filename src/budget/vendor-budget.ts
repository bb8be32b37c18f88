/**
 * The budget every vendor call of a connection waits on (rules in ./budget.ts). Waiting is local
 * wake-ups (a release in this process lets the next caller in at once) plus a short poll for releases
 * in other processes sharing the Redis store.
 */
import { randomUUID } from 'node:crypto';
import type { BudgetLease, CountedGate, BudgetLimits, BudgetPriority, BudgetSnapshot, BudgetStore } from './budget';

export interface VendorBudgetOptions {
  /** A lease not released within this time (the process died mid-call) frees its slot. */
  leaseMs?: number;
  /** Longest wait before asking the store again (releases in other processes are seen this late). */
  pollMs?: number;
}

/** How long a waiting write holds sync back without renewing (a dead waiter stops blocking sync). */
const WRITE_WAIT_TTL_MS = 5_000;

/**
 * A call that could not be admitted before its caller answers (a write's request): the connection's
 * budget is spent for `retryInMs`. Nothing was sent; the caller answers 429 with that Retry-After at
 * once rather than waiting to the end and answering 503 (docs/architecture.md, Vendor API budget).
 */
export class BudgetSpent extends Error {
  constructor(readonly retryInMs: number) {
    super(`The connection's API budget admits no call before the request answers; the next slot opens in ${Math.ceil(retryInMs / 1000)} s.`);
  }
}

/**
 * The service is shutting down and this call would have had to wait for the budget (a spent hour can
 * mean an hour): it is not sent. Graceful shutdown finishes jobs in flight; a job parked here would
 * hold it for that long.
 */
export class BudgetWaitStopped extends Error {
  constructor() {
    super('The service is shutting down: a vendor call waiting for the connection\'s API budget was not sent.');
  }
}

export class VendorBudget {
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private stopping = false;

  constructor(readonly store: BudgetStore, opts: VendorBudgetOptions = {}) {
    this.leaseMs = opts.leaseMs ?? 120_000;
    this.pollMs = opts.pollMs ?? 50;
  }

  /**
   * One connection's budget at one priority, counting every call it admits (CountedGate). `answerBy` (ms
   * since epoch): a call that could not be admitted by then throws BudgetSpent at once. `connector` labels
   * the calls in /metrics.
   */
  gate(key: string, limits: BudgetLimits, priority: BudgetPriority, answerBy?: number, connector?: string): CountedGate {
    let calls = 0;
    return {
      connector,
      get calls() { return calls; },
      acquire: () => { calls++; return this.acquire(key, limits, priority, answerBy); },
    };
  }

  async acquire(key: string, limits: BudgetLimits, priority: BudgetPriority, answerBy?: number): Promise<BudgetLease> {
    const waiterId = randomUUID();
    let announcedAt = 0;
    try {
      for (;;) {
        const now = Date.now();
        const r = await this.store.tryAcquire(key, limits, priority, now, this.leaseMs);
        if (r.ok) return this.lease(key, r.leaseId);
        if (this.stopping) throw new BudgetWaitStopped();
        if (answerBy != null && now + r.retryInMs > answerBy) throw new BudgetSpent(r.retryInMs);
        if (priority === 'write' && now - announcedAt > WRITE_WAIT_TTL_MS / 2) {
          announcedAt = now;
          await this.store.writeWaiting(key, waiterId, true, now, WRITE_WAIT_TTL_MS);
        }
        await this.waitLocal(key, Math.max(1, Math.min(r.retryInMs, this.pollMs)));
      }
    } finally {
      if (announcedAt) await this.store.writeWaiting(key, waiterId, false, Date.now(), WRITE_WAIT_TTL_MS);
    }
  }

  snapshot(key: string, limits: BudgetLimits): Promise<BudgetSnapshot> {
    return this.store.snapshot(key, limits, Date.now());
  }

  /**
   * Shutdown, before the job queue closes: calls admitted at once still go, a call that would wait
   * (now or later) ends with BudgetWaitStopped and sends nothing.
   */
  stopWaiting(): void {
    this.stopping = true;
    for (const key of [...this.waiters.keys()]) this.wake(key);
  }

  close(): Promise<void> {
    this.stopWaiting();
    return this.store.close();
  }

  private lease(key: string, leaseId: string): BudgetLease {
    let released = false;
    return {
      release: async (outcome = {}) => {
        if (released) return;
        released = true;
        try {
          if (outcome.throttled) await this.store.throttled(key, Date.now());
          await this.store.release(key, leaseId);
        } finally {
          this.wake(key);
        }
      },
    };
  }

  private wake(key: string): void {
    const set = this.waiters.get(key);
    if (!set) return;
    this.waiters.delete(key);
    for (const w of set) w();
  }

  private waitLocal(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const done = () => { clearTimeout(timer); set!.delete(done); resolve(); };
      const timer = setTimeout(done, ms);
      set.add(done);
    });
  }
}
