/**
 * Which runtime the suite runs on: the embedded default (nothing set) or real PostgreSQL and Redis
 * (DATABASE_URL and REDIS_URL set, as `.ci/run` does on its second pass).
 */
import { randomBytes } from 'node:crypto';
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
