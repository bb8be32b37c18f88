/**
 * Our own limits (docs/architecture.md, Errors), in fixed one-minute windows:
 *  - per API key: every answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
 *    (seconds to the window's end); past the limit, 429 `rate_limited` with `Retry-After`;
 *  - per client address, on failed authentications: past the limit a failure answers 429 instead of 401
 *    (authenticator.ts); a valid key from the same address is still served.
 * The counters live in Redis when REDIS_URL is set (shared by every api process: one INCR + PEXPIRE per
 * request), in this process otherwise.
 */
import type { Response } from 'express';
import { Redis } from 'ioredis';

export interface WindowCount {
  count: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

export interface CounterStore {
  hit(key: string, windowMs: number): Promise<WindowCount>;
  peek(key: string, windowMs: number): Promise<WindowCount>;
  close(): Promise<void>;
}

export class InProcessCounters implements CounterStore {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const w = this.window(key, windowMs);
    w.count++;
    return { count: w.count, resetMs: w.endsAt - Date.now() };
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    const w = this.window(key, windowMs);
    return { count: w.count, resetMs: w.endsAt - Date.now() };
  }

  private window(key: string, windowMs: number) {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      w = { count: 0, endsAt: now + windowMs };
      this.windows.set(key, w);
      // Bounded: ended windows are dropped as the map grows (a flood of addresses cannot grow it for ever).
      if (this.windows.size > 100_000) for (const [k, v] of this.windows) if (v.endsAt <= now) this.windows.delete(k);
    }
    return w;
  }

  async close(): Promise<void> {}
}

export class RedisCounters implements CounterStore {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix: string) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, lazyConnect: false });
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const k = `${this.prefix}:rl:${key}`;
    // NX: the window starts with its first request and is not extended by later ones.
    const [[, count], , [, ttl]] = (await this.redis.multi().incr(k).pexpire(k, windowMs, 'NX').pttl(k).exec()) as [unknown, number][];
    return { count: Number(count), resetMs: Number(ttl) > 0 ? Number(ttl) : windowMs };
  }

  async peek(key: string, windowMs: number): Promise<WindowCount> {
    const k = `${this.prefix}:rl:${key}`;
    const [[, count], [, ttl]] = (await this.redis.multi().get(k).pttl(k).exec()) as [unknown, number][];
    return { count: Number(count ?? 0), resetMs: Number(ttl) > 0 ? Number(ttl) : windowMs };
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

const MINUTE = 60_000;

export class RateLimits {
  constructor(
    private readonly store: CounterStore,
    readonly perKeyPerMinute: number,
    readonly authFailuresPerMinute: number,
  ) {}

  static create(opts: { redisUrl?: string; prefix: string; perKeyPerMinute: number; authFailuresPerMinute: number }): RateLimits {
    const store = opts.redisUrl ? new RedisCounters(opts.redisUrl, opts.prefix) : new InProcessCounters();
    return new RateLimits(store, opts.perKeyPerMinute, opts.authFailuresPerMinute);
  }

  /** Counts one request of a key; sets the RateLimit headers; false when it is over the limit. */
  async admitKey(apiKeyId: string, res: Response): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
    if (this.perKeyPerMinute <= 0) return { ok: true };
    const w = await this.store.hit(`key:${apiKeyId}`, MINUTE);
    const reset = Math.max(1, Math.ceil(w.resetMs / 1000));
    res.setHeader('RateLimit-Limit', String(this.perKeyPerMinute));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, this.perKeyPerMinute - w.count)));
    res.setHeader('RateLimit-Reset', String(reset));
    return w.count <= this.perKeyPerMinute ? { ok: true } : { ok: false, retryAfterSeconds: reset };
  }

  /**
   * Counts one failed authentication of the address; the seconds to wait when it is past its limit this
   * minute, else null. Successful authentications are never counted here.
   */
  async authFailed(address: string): Promise<number | null> {
    const w = await this.store.hit(`auth:${address}`, MINUTE);
    return w.count > this.authFailuresPerMinute ? Math.max(1, Math.ceil(w.resetMs / 1000)) : null;
  }

  /**
   * Counts one request of a page reached without a key (the connect page, per client address): the
   * seconds to wait when it is past `perMinute` this minute, else null.
   */
  async admitPage(page: string, address: string, perMinute: number): Promise<number | null> {
    const w = await this.store.hit(`page:${page}:${address}`, MINUTE);
    return w.count > perMinute ? Math.max(1, Math.ceil(w.resetMs / 1000)) : null;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}
