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
