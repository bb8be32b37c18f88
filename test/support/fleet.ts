/**
 * A worker for the fleet tests (test/fleet-*.test.ts): the whole service on the suite's runtime (real store
 * and queue, real HTTP), without the sandbox, syncing tenants from standalone simulators this test starts.
 */
import { loadConfig } from '../../src/config/config';
import { startServer, type RunningServer } from '../../src/server';
import { createLogger } from '../../src/shared/logger';
import { VendorHttpClient } from '../../src/connectors/vendor-http';
import { Connection, SyncState } from '../../entities';
import { forgettingItsQueue, runtime, testDatabaseOptions, uniqueSuffix } from './runtime';

export async function startFleetService(env: Record<string, string>): Promise<RunningServer> {
  const config = loadConfig(
    { ...process.env, SANDBOX: 'false', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ADMIN_TOKEN: `adm_test_${uniqueSuffix()}${uniqueSuffix()}`, ...env },
    { port: 0, ephemeral: true, queuePrefix: `test-${uniqueSuffix()}`, redisUrl: runtime.redisUrl, databaseUrl: runtime.databaseUrl },
  );
  const running = await startServer(config, {
    database: testDatabaseOptions(),
    logger: createLogger(config.logLevel),
    // Short backoff, as the other tests use; Retry-After is still honoured.
    http: new VendorHttpClient({ baseDelayMs: 20, maxDelayMs: 500, timeoutMs: config.vendorTimeoutMs }),
  });
  return forgettingItsQueue(running, config);
}

/** A tenant with one connection, stored as the admin service stores it, and its sync scheduled. */
export async function addTenantConnection(svc: RunningServer, input: {
  slug: string; kind: 'psa' | 'rmm' | 'distributor'; connector: string; baseUrl: string;
  credentials: Record<string, string>; statusMapping?: Record<string, string>; settings?: Record<string, unknown>;
}): Promise<Connection> {
  const tenant = await svc.services.admin.createTenant(`Fleet ${input.slug}`, input.slug);
  const created = await svc.services.admin.createConnection({
    tenantId: tenant.id, kind: input.kind, connector: input.connector, baseUrl: input.baseUrl,
    credentials: input.credentials, statusMapping: input.statusMapping,
  });
  if (input.settings) await svc.services.ds.getRepository(Connection).update({ id: created.id }, { settings: input.settings as never });
  const connection = await svc.services.ds.getRepository(Connection).findOneByOrFail({ id: created.id });
  await svc.services.syncJobs.schedule(connection);
  return connection;
}

/** The connection's resources and how their last sync went. */
export async function syncStatesOf(svc: RunningServer, connectionId: string): Promise<SyncState[]> {
  return svc.services.ds.getRepository(SyncState).findBy({ connectionId });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
