/** The embedded default: the budget kept in this process (one process is the whole service). */
import { randomUUID } from 'node:crypto';
import {
  HOUR_MS, MIN_FACTOR, capsFor, effectiveRate, recoveredFactor,
  type AdmitResult, type BudgetLimits, type BudgetPriority, type BudgetSnapshot, type BudgetStore,
} from './budget';

interface State {
  /** Admission times in the last hour, ascending. */
  window: number[];
  leases: Map<string, number>;
  writers: Map<string, number>;
  factor: number;
  factorAt: number;
}

/** 429s within this time of a decrease are the same storm: one halving, not one per call in flight. */
export const DECREASE_HOLD_MS = 1_000;

export class InProcessBudgetStore implements BudgetStore {
  private readonly states = new Map<string, State>();

  private state(key: string, now: number): State {
    let s = this.states.get(key);
    if (!s) this.states.set(key, (s = { window: [], leases: new Map(), writers: new Map(), factor: 1, factorAt: 0 }));
    let drop = 0;
    while (drop < s.window.length && s.window[drop] <= now - HOUR_MS) drop++;
    if (drop) s.window.splice(0, drop);
    for (const [id, exp] of s.leases) if (exp <= now) s.leases.delete(id);
    for (const [id, exp] of s.writers) if (exp <= now) s.writers.delete(id);
    return s;
  }

  async tryAcquire(key: string, limits: BudgetLimits, priority: BudgetPriority, now: number, leaseMs: number): Promise<AdmitResult> {
    const s = this.state(key, now);
    const caps = capsFor(limits, recoveredFactor(s.factor, s.factorAt, now), priority);
    if (priority === 'sync' && s.writers.size > 0) return { ok: false, retryInMs: 10 };
    if (s.leases.size >= caps.concurrent) return { ok: false, retryInMs: 10 };
    if (s.window.length >= caps.hourly) {
      return { ok: false, retryInMs: Math.max(1, s.window[s.window.length - caps.hourly] + HOUR_MS - now) };
    }
    const leaseId = randomUUID();
    s.window.push(now);
    s.leases.set(leaseId, now + leaseMs);
    return { ok: true, leaseId };
  }

  async release(key: string, leaseId: string): Promise<void> {
    this.states.get(key)?.leases.delete(leaseId);
  }

  async writeWaiting(key: string, waiterId: string, waiting: boolean, now: number, ttlMs: number): Promise<void> {
    const s = this.state(key, now);
    if (waiting) s.writers.set(waiterId, now + ttlMs);
    else s.writers.delete(waiterId);
  }

  async throttled(key: string, now: number): Promise<void> {
    const s = this.state(key, now);
    if (s.factorAt && now - s.factorAt < DECREASE_HOLD_MS) return;
    s.factor = Math.max(MIN_FACTOR, recoveredFactor(s.factor, s.factorAt, now) / 2);
    s.factorAt = now;
  }

  async snapshot(key: string, limits: BudgetLimits, now: number): Promise<BudgetSnapshot> {
    const s = this.state(key, now);
    return {
      requestsPerHour: limits.requestsPerHour,
      usedLastHour: s.window.length,
      inFlight: s.leases.size,
      concurrentLimit: limits.concurrent,
      effectiveRate: effectiveRate(limits, recoveredFactor(s.factor, s.factorAt, now)),
    };
  }

  async close(): Promise<void> {}
}
