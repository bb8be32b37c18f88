/**
 * One API budget per connection (docs/architecture.md, Vendor API budget): requests per rolling hour and calls in flight,
 * shared by every ISV, job and process that reaches the connection's vendor account. The rules live
 * here once; a BudgetStore (in-process, or Redis so every process shares it) only keeps the state and
 * applies one admission step atomically.
 *
 * - Writes go first: a sync call is not admitted while a write waits for the same connection, and sync
 *   may use only SYNC_SHARE of the hourly budget, so writes always find room. Nothing fails on the
 *   budget: a call waits until it is admitted.
 * - AIMD: a vendor 429 halves the effective rate and the calls allowed in flight (multiplicative decrease, floor MIN_FACTOR); it
 *   recovers by RECOVERY_PER_MINUTE of the limit each minute without a 429 (additive increase).
 * - In flight: a lease that is never released (a process died mid-call) expires after leaseMs.
 */
export interface BudgetLimits {
  requestsPerHour: number;
  concurrent: number;
}

export type BudgetPriority = 'write' | 'sync';

export interface BudgetSnapshot {
  requestsPerHour: number;
  usedLastHour: number;
  inFlight: number;
  concurrentLimit: number;
  /** Requests per hour admitted now: the limit shrunk by recent 429s. */
  effectiveRate: number;
}

export const HOUR_MS = 3_600_000;
/** Share of the hourly budget sync may use; the rest is kept for writes. */
export const SYNC_SHARE = 0.9;
export const MIN_FACTOR = 1 / 64;
export const RECOVERY_PER_MINUTE = 0.05;

/** The AIMD factor at `now`, from the factor set at `at` (recovered additively since). */
export function recoveredFactor(factor: number, at: number, now: number): number {
  return Math.min(1, factor + (RECOVERY_PER_MINUTE * Math.max(0, now - at)) / 60_000);
}

export function effectiveRate(limits: BudgetLimits, factor: number): number {
  return Math.max(1, Math.floor(limits.requestsPerHour * factor));
}

/** Admission caps for one priority: hourly requests and concurrent calls. */
export function capsFor(limits: BudgetLimits, factor: number, priority: BudgetPriority): { hourly: number; concurrent: number } {
  const eff = effectiveRate(limits, factor);
  // The decrease bites at once: calls in flight shrink with the rate (at least one), not only the hour.
  const concurrent = Math.max(1, Math.floor(limits.concurrent * factor + 1e-9));
  return priority === 'write'
    ? { hourly: eff, concurrent }
    : { hourly: Math.max(1, Math.floor(eff * SYNC_SHARE)), concurrent };
}

export type AdmitResult = { ok: true; leaseId: string } | { ok: false; retryInMs: number };

/** State and one atomic admission step per connection. */
export interface BudgetStore {
  tryAcquire(key: string, limits: BudgetLimits, priority: BudgetPriority, now: number, leaseMs: number): Promise<AdmitResult>;
  release(key: string, leaseId: string): Promise<void>;
  /** A write is waiting (true) or no longer (false): sync is held back meanwhile. */
  writeWaiting(key: string, waiterId: string, waiting: boolean, now: number, ttlMs: number): Promise<void>;
  throttled(key: string, now: number): Promise<void>;
  snapshot(key: string, limits: BudgetLimits, now: number): Promise<BudgetSnapshot>;
  close(): Promise<void>;
}

export interface BudgetLease {
  /** `throttled`: the vendor answered 429 (the rate shrinks). */
  release(outcome?: { throttled?: boolean }): Promise<void>;
}

/** What the vendor HTTP client holds: one connection's budget at one priority. */
export interface BudgetGate {
  acquire(): Promise<BudgetLease>;
  /** The connection's connector: the label of its vendor calls in /metrics. */
  readonly connector?: string;
}

/**
 * A gate that counts what it admits: every attempt of every vendor call made through it (what a sync's
 * check costs, which plans the next ones: src/sync/freshness.ts). Counted here, where the calls arrive, so
 * that a vendor call goes from the HTTP client to the budget and back, never through the sync that made it.
 */
export interface CountedGate extends BudgetGate {
  readonly calls: number;
}

const NO_LEASE: BudgetLease = { release: async () => undefined };

/** A counted gate with no budget behind it: every call admitted at once (a service built without budgets). */
export function unlimitedGate(connector?: string): CountedGate {
  let calls = 0;
  return {
    connector,
    get calls() { return calls; },
    acquire: async () => { calls++; return NO_LEASE; },
  };
}
