/**
 * Boots the service: store (migrations), queue, services, HTTP, sandbox, jobs. Used by main.ts, the
 * tests and the benchmarks alike, so every one of them runs the real thing.
 */
import type { Express } from 'express';
import http from 'node:http';
import { answerClientErrorsAsJson } from './http/client-errors';
import { drainable } from './http/drain';
import { createLimitedServer } from './http/connection-limits';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createJobQueue } from '../jobs/queue';
import { registerProcessors } from '../jobs/processors';
import { buildApp } from './app';
import { installFeatures } from './features';
import type { AppConfig } from './config/config';
import { openDatabase, type DatabaseOptions } from './db/database';
import { createSandboxSimulators } from './simulators';
import type { SandboxInfo } from './sandbox/sandbox.service';
import { seedSandboxPeople } from './people/sandbox-people';
import { createServices, type Services } from './services';
import { createLogger } from './shared/logger';
import { watchService } from './http/metrics';
import { queueLogger } from './webhooks/delivery-log';
import { OVERDUE_LANE_MS } from './webhooks/webhooks.service';
import type { VendorHttpClient } from './connectors/vendor-http';
import { startTracing } from './telemetry/tracing';
import { TracedJobQueue } from './telemetry/job-spans';

/** How long requests under way at shutdown may take to finish before their connections are cut. */
const HTTP_DRAIN_GRACE_MS = 10_000;

export interface RunningServer {
  url: string;
  services: Services;
  server: http.Server;
  sandbox: SandboxInfo | null;
  close(): Promise<void>;
}

export interface StartOptions {
  database?: DatabaseOptions;
  logger?: Logger;
  http?: VendorHttpClient;
  /** Extra routes (benchmarks only). */
  mount?: (app: Express, services: Services) => void;
  /** Wait for the first sandbox sync before resolving (default true). */
  awaitInitialSync?: boolean;
  /**
   * The vendors' day, ms since the epoch (default the wall clock): what the sandbox's simulators and the
   * connectors' date rules (a contract that has ended, the current billing period) read. Tests fix it.
   */
  vendorNow?: () => number;
  /**
   * The service's own clock, ms since the epoch (default the wall clock): what a key's end of overlap is
   * compared with (src/access). Tests move it instead of waiting.
   */
  now?: () => number;
}

export async function startServer(config: AppConfig, opts: StartOptions = {}): Promise<RunningServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  const db = await openDatabase({
    poolSize: config.databasePoolSize,
    ...(opts.database ?? { databaseUrl: config.databaseUrl, schema: config.databaseSchema, dataDir: config.ephemeral ? undefined : config.dataDir }),
  });
  // Traces only with OTEL_EXPORTER_OTLP_ENDPOINT (src/telemetry): then jobs carry their trace in their payload.
  const tracing = startTracing(config.tracing);
  const jobs = createJobQueue({
    redisUrl: config.redisUrl, prefix: config.queuePrefix, logger: queueLogger(logger),
    lockDurationMs: config.queueLockMs, stalledIntervalMs: config.queueStalledMs, heartbeatMs: config.workerHeartbeatMs,
  });
  const queue = tracing ? new TracedJobQueue(jobs) : jobs;
  const simulators = config.sandboxEnabled ? createSandboxSimulators(config.adminToken, opts.vendorNow) : null;
  const services = createServices(config, db, queue, logger, simulators, opts.http, opts.vendorNow, opts.now);
  // Said once, never a secret: where a generated encryption key went (config/key-store.ts).
  for (const notice of config.startupNotices) logger.warn({ dataDir: config.dataDir }, notice);
  registerProcessors(queue, services);
  installFeatures(services);
  try {
    const running = await serve(config, services, opts);
    // Last: the spans of everything that closed before are flushed to the collector.
    return tracing ? { ...running, close: () => running.close().finally(() => tracing.shutdown()) } : running;
  } catch (err) {
    // A failed start releases what it opened, so the process (or test) can exit.
    services.budgets.stopWaiting();
    await queue.close().catch(() => undefined);
    await services.budgets.close().catch(() => undefined);
    await services.rateLimits.close().catch(() => undefined);
    await services.access.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    await tracing?.shutdown().catch(() => undefined);
    throw err;
  }
}

async function serve(config: AppConfig, services: Services, opts: StartOptions): Promise<RunningServer> {
  const { queue, db } = services;

  const { app, apollo } = await buildApp(services, opts.mount && ((a) => opts.mount!(a, services)));
  // Slow clients bounded: headers, body and keep-alive time limits, requests per socket, connections per address.
  const server = createLimitedServer(app, config.httpLimits, () => config.publicUrl);
  answerClientErrorsAsJson(server, () => config.publicUrl);
  const inbound = drainable(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  if (config.port === 0) config.publicUrl = `http://127.0.0.1:${port}`;
  const url = `http://127.0.0.1:${port}`;

  // Before the queue runs: commits a dead process left in progress are released (write-fence.ts).
  await services.writeFence.start();
  const worker = config.role !== 'api' || !config.redisUrl;
  if (worker) await queue.start();

  // The API side owns the sandbox (its simulators are the fixture hosts); a worker only runs jobs.
  // /readyz answers 503 until this is done (the sandbox seeded, restored or reset after a restart and synced once).
  let sandbox: SandboxInfo | null = null;
  const sandboxOwner = config.role !== 'worker' ? services.sandbox : null;
  if (sandboxOwner) {
    const owned = sandboxOwner;
    owned.onStoreEmptied(() => services.records.emptied());
    owned.seedSimulators();
    sandbox = await owned.ensure(config.sandboxApiKey);
    await seedSandboxPeople(services.peopleStore, sandbox);
    const firstSync = (async () => {
      // The simulators start from fixtures on every start: a store that outlived them gets their state back
      // from the last graceful close, or is reset when there is none (sandbox.service.ts).
      if (!config.ephemeral) {
        await owned.restoreOrResetAfterRestart((detail, message) => services.logger.warn(detail, message));
      }
      // The sandbox's rehearsed sync failure runs its syncs in this process: only where this process syncs
      // (an api process of a split deployment leaves vendor calls to its workers).
      await owned.syncUnsynced(config.role === 'api' ? undefined : services.sync);
      owned.markReady();
    })();
    if (opts.awaitInitialSync !== false) await firstSync;
    else firstSync.catch((err: Error) => services.logger.error({ err: err.message }, 'the first sandbox sync failed'));
  } else {
    services.sandbox?.markReady();
  }
  let overdueLanes: NodeJS.Timeout | undefined;
  if (worker) {
    await services.syncJobs.scheduleAll();
    services.sweeper?.start();
    services.upkeep.start();
    // Expired connect sessions get their connect_session.expired event (src/events/connection-state.ts).
    services.connectionStates.startExpirySweep();
    services.requestLog.startPruning();
    // A webhook delivery whose wake-up never came is sent all the same (src/webhooks/webhooks.service.ts, wakeOverdue).
    overdueLanes = setInterval(() => {
      services.webhooks.wakeOverdue().catch((err: Error) => services.logger.warn({ err: err.message }, 'waking overdue webhook lanes failed'));
    }, OVERDUE_LANE_MS).unref();
  }

  let closing: Promise<void> | undefined;
  const unwatch = watchService(services); // /metrics reads its store, queue and budgets when scraped
  const close = () => (closing ??= (async () => {
    unwatch();
    clearInterval(overdueLanes);
    await inbound.drain(HTTP_DRAIN_GRACE_MS);
    // What the request log still holds is written before the store closes.
    await services.requestRecorder.stop();
    await services.requestLog.stopPruning();
    // A job in flight may be parked on a spent hourly budget: it ends unsent instead of holding the close.
    services.budgets.stopWaiting();
    await services.sweeper?.stop();
    await services.upkeep.stop();
    await services.connectionStates.stopExpirySweep();
    await queue.close();
    await services.writeFence.stop();
    // Nothing reaches the simulators any more (requests drained, jobs stopped): the next start continues from
    // their state. Not before this start finished its own restore or reset (a half-reset sandbox is not kept),
    // nor for an ephemeral store (it goes with the process). A failure costs the next start a reset, not the close.
    if (sandboxOwner && !config.ephemeral && sandboxOwner.ready) {
      await sandboxOwner.saveSnapshots().catch((err: Error) => services.logger.warn({ err: err.message }, 'the sandbox snapshot was not saved; the next start resets the sandbox'));
    }
    await services.budgets.close();
    await services.rateLimits.close();
    await services.access.close();
    await apollo.stop();
    await db.close();
  })());
  return { url, services, server, sandbox, close };
}
