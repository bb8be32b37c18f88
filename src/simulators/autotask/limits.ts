/**
 * Autotask's usage limits, per database:
 * - a request budget over a rolling hour (10,000 by default, shared by every integration of the
 *   database); past 50% and 75% of it Autotask adds latency to each answer; once spent, requests are
 *   refused until the window frees up. Autotask does not document the refusal's HTTP status: we answer
 *   429 with Retry-After (the seconds until the oldest counted request leaves the window);
 * - at most 3 simultaneous requests ("threads") per API tracking identifier (integration code) and
 *   object endpoint (entity). Autotask documents the limit but not the status of an excess request;
 *   we refuse the excess one with 429 and Retry-After: 1 rather than queueing it, so a client that
 *   overlaps requests on one entity finds out in tests instead of silently slowing down in production.
 * Refused requests are not counted against the budget. ZoneInformation is not limited (documented).
 */

export interface LimitOptions {
  requestsPerHour: number;
  latencyPast50PctMs: number;
  latencyPast75PctMs: number;
  threadsPerEndpoint: number;
  /** Time each answered request holds its thread (simulated database work). */
  responseDelayMs: number;
}

const HOUR_MS = 3_600_000;

export type Admission =
  | { ok: true; delayMs: number; release: () => void }
  | { ok: false; retryAfterSeconds: number; message: string };

export class UsageLimits {
  /** Request times per database, oldest first. */
  private windows = new Map<string, number[]>();
  private threads = new Map<string, number>();

  constructor(private readonly opts: LimitOptions, private readonly clock: () => number = Date.now) {}

  /** Requests counted in the current hour for a database. */
  used(database: string): number {
    return this.prune(database).length;
  }

  admit(database: string, integrationCode: string, endpoint: string): Admission {
    const now = this.clock();
    const window = this.prune(database, now);
    if (window.length >= this.opts.requestsPerHour) {
      const retryAfterSeconds = Math.max(1, Math.ceil((window[0] + HOUR_MS - now) / 1000));
      return {
        ok: false,
        retryAfterSeconds,
        message: `The request threshold of ${this.opts.requestsPerHour} requests per hour for this database has been exceeded.`,
      };
    }
    const threadKey = `${database}\u0000${integrationCode.toLowerCase()}\u0000${endpoint.toLowerCase()}`;
    const inFlight = this.threads.get(threadKey) ?? 0;
    if (inFlight >= this.opts.threadsPerEndpoint) {
      return {
        ok: false,
        retryAfterSeconds: 1,
        message: `The thread limit of ${this.opts.threadsPerEndpoint} concurrent requests to the ${endpoint} endpoint for this integration has been exceeded.`,
      };
    }
    window.push(now);
    this.threads.set(threadKey, inFlight + 1);
    const usage = window.length / this.opts.requestsPerHour;
    const latency = usage > 0.75 ? this.opts.latencyPast75PctMs : usage > 0.5 ? this.opts.latencyPast50PctMs : 0;
    let released = false;
    return {
      ok: true,
      delayMs: latency + this.opts.responseDelayMs,
      release: () => {
        if (released) return;
        released = true;
        const n = (this.threads.get(threadKey) ?? 1) - 1;
        if (n <= 0) this.threads.delete(threadKey);
        else this.threads.set(threadKey, n);
      },
    };
  }

  reset(): void {
    this.windows.clear();
    this.threads.clear();
  }

  private prune(database: string, now = this.clock()): number[] {
    let w = this.windows.get(database);
    if (!w) {
      w = [];
      this.windows.set(database, w);
    }
    let drop = 0;
    while (drop < w.length && w[drop] <= now - HOUR_MS) drop++;
    if (drop) w.splice(0, drop);
    return w;
  }
}
