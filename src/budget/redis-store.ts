/**
 * The production store: the budget in Redis, so every API and worker process shares one budget per
 * connection. Each step is one Lua script (atomic): a sorted set of admissions in the last hour
 * (sliding window), a sorted set of leases scored by expiry (a dead process's slot frees itself), a
 * sorted set of waiting writes, and a hash with the AIMD factor. The admission rule mirrors capsFor in
 * ./budget.ts; the contract test runs both stores through the same cases.
 */
import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import {
  HOUR_MS, MIN_FACTOR, RECOVERY_PER_MINUTE, SYNC_SHARE, effectiveRate, recoveredFactor,
  type AdmitResult, type BudgetLimits, type BudgetPriority, type BudgetSnapshot, type BudgetStore,
} from './budget';
import { DECREASE_HOLD_MS } from './in-process-store';

const PRUNE = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - ${HOUR_MS})
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local f = tonumber(redis.call('HGET', KEYS[4], 'f') or '1')
local at = tonumber(redis.call('HGET', KEYS[4], 'at') or '0')
local factor = math.min(1, f + ${RECOVERY_PER_MINUTE} * math.max(0, now - at) / 60000)
`;

// KEYS: window, leases, writers, aimd. ARGV: now, requestsPerHour, concurrent, priority, leaseMs, leaseId.
const ACQUIRE = `${PRUNE}
local rph = tonumber(ARGV[2]); local prio = ARGV[4]
local conc = math.max(1, math.floor(tonumber(ARGV[3]) * factor + 1e-9))
local eff = math.max(1, math.floor(rph * factor))
local hourly = eff
if prio == 'sync' then
  if redis.call('ZCARD', KEYS[3]) > 0 then return {0, 10} end
  hourly = math.max(1, math.floor(eff * ${SYNC_SHARE}))
end
if redis.call('ZCARD', KEYS[2]) >= conc then return {0, 10} end
local used = redis.call('ZCARD', KEYS[1])
if used >= hourly then
  local e = redis.call('ZRANGE', KEYS[1], used - hourly, used - hourly, 'WITHSCORES')
  return {0, math.max(1, tonumber(e[2]) + ${HOUR_MS} - now)}
end
redis.call('ZADD', KEYS[1], now, ARGV[6])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[6])
redis.call('PEXPIRE', KEYS[1], ${HOUR_MS + 60_000})
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[5]) + 60000)
return {1, 0}
`;

// ARGV: now. Halves the recovered factor unless a decrease happened within the hold time.
const THROTTLED = `${PRUNE}
if at > 0 and now - at < ${DECREASE_HOLD_MS} then return 0 end
redis.call('HSET', KEYS[4], 'f', tostring(math.max(${MIN_FACTOR}, factor / 2)), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[4], ${HOUR_MS * 24})
return 1
`;

// ARGV: now. Returns used, in flight, factor (as a string: Lua numbers come back as integers).
const SNAPSHOT = `${PRUNE}
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2]), tostring(factor)}
`;

/** The scripts as commands of the client: sent by SHA (EVALSHA), their text only once per connection. */
type ScriptClient = IORedis & Record<'budgetAcquire' | 'budgetThrottled' | 'budgetSnapshot', (...args: (string | number)[]) => Promise<unknown>>;

export class RedisBudgetStore implements BudgetStore {
  private readonly client: ScriptClient;

  constructor(redisUrl: string, private readonly prefix: string) {
    // Every vendor call takes and releases a lease: a worker with many syncs in flight sends thousands a
    // second. Commands issued in one tick share one write (auto-pipelining), and the scripts go by SHA
    // rather than as a kilobyte of Lua each time: both were a tenth of a busy worker's CPU (the fleet bench).
    const client = new IORedis(redisUrl, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
    client.defineCommand('budgetAcquire', { numberOfKeys: 4, lua: ACQUIRE });
    client.defineCommand('budgetThrottled', { numberOfKeys: 4, lua: THROTTLED });
    client.defineCommand('budgetSnapshot', { numberOfKeys: 4, lua: SNAPSHOT });
    this.client = client as ScriptClient;
  }

  private keys(key: string): string[] {
    const base = `${this.prefix}:budget:{${key}}`;
    return [`${base}:window`, `${base}:leases`, `${base}:writers`, `${base}:aimd`];
  }

  async tryAcquire(key: string, limits: BudgetLimits, priority: BudgetPriority, now: number, leaseMs: number): Promise<AdmitResult> {
    const leaseId = randomUUID();
    const [ok, wait] = (await this.client.budgetAcquire(
      ...this.keys(key), now, limits.requestsPerHour, limits.concurrent, priority, leaseMs, leaseId,
    )) as [number, number];
    return ok === 1 ? { ok: true, leaseId } : { ok: false, retryInMs: wait };
  }

  async release(key: string, leaseId: string): Promise<void> {
    await this.client.zrem(this.keys(key)[1], leaseId);
  }

  async writeWaiting(key: string, waiterId: string, waiting: boolean, now: number, ttlMs: number): Promise<void> {
    const writers = this.keys(key)[2];
    if (waiting) {
      await this.client.multi().zadd(writers, now + ttlMs, waiterId).pexpire(writers, ttlMs + 1000).exec();
    } else {
      await this.client.zrem(writers, waiterId);
    }
  }

  async throttled(key: string, now: number): Promise<void> {
    await this.client.budgetThrottled(...this.keys(key), now);
  }

  async snapshot(key: string, limits: BudgetLimits, now: number): Promise<BudgetSnapshot> {
    const [used, inFlight, factor] = (await this.client.budgetSnapshot(...this.keys(key), now)) as [number, number, string];
    return {
      requestsPerHour: limits.requestsPerHour,
      usedLastHour: used,
      inFlight,
      concurrentLimit: limits.concurrent,
      effectiveRate: effectiveRate(limits, recoveredFactor(Number(factor), 0, 0)),
    };
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}
