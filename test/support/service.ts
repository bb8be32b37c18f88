/**
 * Starts the whole service for a test file, on whichever runtime the suite runs (see runtime.ts):
 * real HTTP on 127.0.0.1, the sandbox seeded and synced from the simulators over HTTP.
 */
import { loadConfig, type AppConfig } from '../../src/config/config';
import { startServer, type RunningServer } from '../../src/server';
import type { Logger } from 'pino';
import { createLogger } from '../../src/shared/logger';
import { VendorHttpClient } from '../../src/connectors/vendor-http';
import { forgettingItsQueue, runtime, testDatabaseOptions, uniqueSuffix } from './runtime';
import type { DatabaseOptions } from '../../src/db/database';
import { OpenApiChecker } from './openapi-check';

export interface TestService extends RunningServer {
  config: AppConfig;
  key: string;
  alphaId: string;
  betaId: string;
  gammaId: string;
  /** The fixed development MSP keys of the sandbox tenants. */
  alphaMspKey: string;
  betaMspKey: string;
  gammaMspKey: string;
  /** Holds every answer against /openapi.json; `seen` lists the (operation, status) pairs met. */
  openapi: OpenApiChecker;
  /** fetch against the service with the sandbox key (override headers to change it). */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<{ status: number; body: any; headers: Headers }>;
  graphql(query: string, variables?: Record<string, unknown>): Promise<any>;
}

export interface TestServiceOptions {
  /** Extra environment for the configuration (e.g. ENCRYPTION_KEY shared with a worker process). */
  env?: Record<string, string>;
  database?: DatabaseOptions;
  /** A logger of the test's own (to read what the service logs); by default a silent one. */
  logger?: Logger;
  /** The vendors' day (the sandbox simulators' and the connectors' date rules), fixed where a test's dates depend on it. */
  vendorNow?: () => number;
  /** The service's own clock (a key's end of overlap), moved by a test instead of waiting. */
  now?: () => number;
}

export async function startTestService(overrides: Partial<AppConfig> = {}, opts: TestServiceOptions = {}): Promise<TestService> {
  const config = loadConfig(
    // Limits high enough that no test meets them by accident (test/rate-limit.test.ts sets its own).
    { ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', SYNC_INTERVAL_SECONDS: '0', RATE_LIMIT_PER_MINUTE: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000', ADMIN_TOKEN: `adm_test_${uniqueSuffix()}${uniqueSuffix()}`, ...opts.env },
    { port: 0, ephemeral: true, queuePrefix: `test-${uniqueSuffix()}`, redisUrl: runtime.redisUrl, databaseUrl: runtime.databaseUrl, ...overrides },
  );
  const running = await startServer(config, {
    database: opts.database ?? testDatabaseOptions(),
    logger: opts.logger ?? createLogger(config.logLevel),
    // Short backoff so that injected faults resolve quickly; Retry-After is still honoured.
    http: new VendorHttpClient({ baseDelayMs: 20, maxDelayMs: 500, timeoutMs: config.vendorTimeoutMs }),
    vendorNow: opts.vendorNow,
    now: opts.now,
  });
  const alpha = running.sandbox!.tenants.find((t) => t.slug === 'sandbox-alpha')!;
  const beta = running.sandbox!.tenants.find((t) => t.slug === 'sandbox-beta')!;
  const gamma = running.sandbox!.tenants.find((t) => t.slug === 'sandbox-gamma')!;
  const key = running.sandbox!.apiKey!;
  // A service whose document cannot be read is closed before the error, so it leaves nothing registered behind.
  const doc = await openApiOf(running.url).catch(async (err: unknown) => { await running.close(); throw err; });
  const openapi = new OpenApiChecker(doc as never);

  const api: TestService['api'] = async (path, init = {}) => {
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    const k = init.key === undefined ? key : init.key;
    if (k) headers['x-api-key'] = k;
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const method = init.method ?? 'GET';
    const res = await fetch(`${running.url}${path}`, { ...init, headers, body });
    const text = await res.text();
    const problem = openapi.check(method, `${running.url}${path}`, res.status, text, res.headers.get('content-type'));
    if (problem) throw new Error(`undocumented answer: ${problem}`);
    let parsed: unknown = text;
    try { parsed = text ? JSON.parse(text) : null; } catch { /* not JSON */ }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  const graphql: TestService['graphql'] = async (query, variables = {}) => {
    const res = await fetch(`${running.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.adminToken}` },
      body: JSON.stringify({ query, variables }),
    });
    return res.json();
  };
  // A queue prefix of the harness's own goes with the service; one a test passed (shared by several
  // processes) is the test's to forget once all of them have closed.
  const served = overrides.queuePrefix !== undefined ? running : forgettingItsQueue(running, config);
  return { ...served, config, key, alphaId: alpha.id, betaId: beta.id, gammaId: gamma.id, alphaMspKey: alpha.mspKey, betaMspKey: beta.mspKey, gammaMspKey: gamma.mspKey, openapi, api, graphql };
}

/**
 * The service's /openapi.json. A loaded machine may answer a transient 503 (a dependency that did not
 * answer in time, with Retry-After); it is asked again a few times (bounded), and a document it never
 * gets is an error that says what was answered instead.
 */
async function openApiOf(url: string): Promise<{ paths: Record<string, unknown> }> {
  let last = '';
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${url}/openapi.json`);
    const body = await res.json().catch(() => null) as { paths?: Record<string, unknown> } | null;
    if (res.status === 200 && body?.paths) return body as { paths: Record<string, unknown> };
    last = `${res.status} ${JSON.stringify(body).slice(0, 300)}`;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`GET /openapi.json never answered the document: ${last}`);
}
