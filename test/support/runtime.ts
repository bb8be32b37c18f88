/**
 * Which runtime the suite runs on: the embedded default (nothing set) or real PostgreSQL and Redis
 * (DATABASE_URL and REDIS_URL set, as `.ci/run` does on its second pass).
 */
import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import type { AppConfig } from '../../src/config/config';
import type { DatabaseOptions } from '../../src/db/database';

export const runtime = {
  databaseUrl: process.env.DATABASE_URL || undefined,
  redisUrl: process.env.REDIS_URL || undefined,
  name: process.env.DATABASE_URL ? 'postgres+redis' : 'embedded',
};

export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

/** A fresh, isolated database: in-memory PGlite, or a throwaway schema on the real server. */
export function testDatabaseOptions(): DatabaseOptions {
  return runtime.databaseUrl ? { databaseUrl: runtime.databaseUrl, schema: `t_${uniqueSuffix()}`, dropSchemaOnClose: true } : {};
}

/** A loopback port free right now, for a test that must reach a service before its start has finished. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as import('node:net').AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Deletes every Redis key that starts with `prefix`: what a test's queues (jobs kept finished, delayed
 * ones, schedulers) and budgets left under their prefix. Without it each run of the suite on Redis leaves
 * its keys behind in the server it was pointed at. Called after whatever used the prefix has closed.
 */
export async function forgetRedisKeys(redisUrl: string | undefined, prefix: string): Promise<void> {
  if (!redisUrl) return;
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: 3 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** A service of the harness's own whose close also forgets its queue prefix (forgetRedisKeys). */
export function forgettingItsQueue<T extends { close(): Promise<void> }>(running: T, config: Pick<AppConfig, 'redisUrl' | 'queuePrefix'>): T {
  return { ...running, close: async () => { await running.close(); await forgetRedisKeys(config.redisUrl, `${config.queuePrefix}:`); } };
}
