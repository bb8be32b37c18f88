/**
 * One sync of a connection at a time, across every worker process. A scheduler adds a connection's next run
 * one interval after the previous one started, whether or not it has finished (BullMQ and the in-process
 * runner alike): a connection whose sync outlasts its interval (a huge dataset, a slow or throttled vendor)
 * would otherwise start again and again, and take one worker slot after another until the other tenants
 * wait behind it. A sync job takes its connection's lease first; a scheduled run that finds it taken ends
 * at once (the sync under way brings the data current), a sync someone asked for runs all the same.
 *
 * Redis holds the leases when REDIS_URL is set (a key per connection, renewed while the sync runs, so a
 * dead worker's lease lapses within LEASE_MS); the in-process runner's single process holds them in memory.
 */
import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';

export interface SyncLease {
  release(): Promise<void>;
}

export interface SyncLeases {
  /** The connection's lease, or null while another sync of it holds it. */
  take(connectionId: string): Promise<SyncLease | null>;
  close(): Promise<void>;
}

/** A lease not renewed for this long (its process died) is free again. */
export const LEASE_MS = 30_000;

export function createSyncLeases(redisUrl: string | undefined, prefix: string): SyncLeases {
  return redisUrl ? new RedisSyncLeases(redisUrl, prefix) : new InProcessSyncLeases();
}

export class InProcessSyncLeases implements SyncLeases {
  private readonly held = new Set<string>();

  async take(connectionId: string): Promise<SyncLease | null> {
    if (this.held.has(connectionId)) return null;
    this.held.add(connectionId);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        this.held.delete(connectionId);
      },
    };
  }

  async close(): Promise<void> {}
}

// KEYS: the lease. ARGV: its token, and for RENEW the time to live.
const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

type LeaseClient = IORedis & Record<'syncLeaseRenew' | 'syncLeaseRelease', (key: string, ...args: (string | number)[]) => Promise<number>>;

export class RedisSyncLeases implements SyncLeases {
  /** Opened at the first sync: an api process, which runs none, holds no connection for it. */
  private client: LeaseClient | null = null;

  constructor(private readonly redisUrl: string, private readonly prefix: string) {}

  private redis(): LeaseClient {
    if (!this.client) {
      const client = new IORedis(this.redisUrl, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
      client.defineCommand('syncLeaseRenew', { numberOfKeys: 1, lua: RENEW });
      client.defineCommand('syncLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
      this.client = client as LeaseClient;
    }
    return this.client;
  }

  async take(connectionId: string): Promise<SyncLease | null> {
    const redis = this.redis();
    const key = `${this.prefix}:sync-lease:${connectionId}`;
    const token = randomUUID();
    if ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') return null;
    // Renewed while the sync runs; a renewal that fails (Redis away a moment) is tried again at the next tick.
    const renew = setInterval(() => { redis.syncLeaseRenew(key, token, LEASE_MS).catch(() => undefined); }, LEASE_MS / 3);
    renew.unref();
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        // A lease that cannot be released now lapses by itself.
        await redis.syncLeaseRelease(key, token).catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.quit().catch(() => client.disconnect());
  }
}
