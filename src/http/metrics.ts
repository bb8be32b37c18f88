/**
 * Prometheus metrics (prom-client): one registry per process, served at GET /metrics by api and worker
 * alike (docs/architecture.md, Operations). The series a feature records are written here only, through
 * the one-line recorders below; the gauges are read from the store, the queue and the budgets when scraped.
 *
 * Labels are few by rule: a connector and its kind, a queue (job name), a status class, an outcome, a route
 * pattern. Never a tenant, a connection id, a vendor path or a path with ids in it.
 */
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { isUnrecoverable } from '../../jobs/queue/retry-policy';
import type { BudgetSnapshot } from '../budget/budget';
import { SIMULATOR_MOUNT } from './request-log';
import { connectionsForBudgets, syncLagByConnector } from './metrics.store';

export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });
const registers = [metricsRegistry];

const seconds = (startedMs: number) => (performance.now() - startedMs) / 1000;

// ---- HTTP -------------------------------------------------------------------------------------------

const httpRequests = new Counter({
  name: 'http_requests_total', help: 'HTTP requests answered, by route pattern', labelNames: ['method', 'route', 'status'], registers,
});
const httpLatency = new Histogram({
  name: 'http_request_duration_seconds', help: 'HTTP request latency, by route pattern', labelNames: ['method', 'route'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers,
});

/** Where the sandbox's vendor simulators are mounted: their calls share one route label. */
const SIMULATOR_ROUTE = SIMULATOR_MOUNT;

/**
 * The route label: the operation's pattern (`/tenants/:tenant_id/tickets`); every simulator call is
 * `/sandbox-vendors` (the vendors' paths carry ids and would make a series per record); anything else
 * that matched no route is `unmatched`.
 */
export function routeLabel(req: Request): string {
  const path = (req.originalUrl ?? req.url).split('?')[0];
  if (path === SIMULATOR_ROUTE || path.startsWith(`${SIMULATOR_ROUTE}/`)) return SIMULATOR_ROUTE;
  const route = req.route?.path as unknown;
  return typeof route === 'string' ? route : 'unmatched';
}

export class Metrics {
  readonly registry = metricsRegistry;

  middleware() {
    return (req: Request, res: Response, next: NextFunction) => {
      const start = performance.now();
      res.on('finish', () => {
        const route = routeLabel(req);
        httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
        httpLatency.observe({ method: req.method, route }, seconds(start));
      });
      next();
    };
  }
}

// ---- Syncs ------------------------------------------------------------------------------------------

const syncDuration = new Histogram({
  name: 'msp_sync_duration_seconds', help: 'Duration of one connection sync', labelNames: ['kind', 'connector', 'outcome'],
  buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900], registers,
});
const syncRecords = new Counter({
  name: 'msp_sync_records_total', help: 'Records a sync handled: fetched from the vendor, then created, updated, deleted or quarantined in the store',
  labelNames: ['kind', 'connector', 'change'], registers,
});
const syncErrors = new Counter({
  name: 'msp_sync_errors_total', help: 'Syncs that failed (the vendor, the store or a record)', labelNames: ['kind', 'connector'], registers,
});

export interface SyncOutcomeForMetrics {
  connector: string;
  ok: boolean;
  resources: { fetched: number; created: number; updated: number; quarantined: number; deleted?: number }[];
}

/** One connection's sync ended (whole or failed part-way); `startedMs` from performance.now(). */
export function recordSync(kind: string, report: SyncOutcomeForMetrics, startedMs: number): void {
  const labels = { kind, connector: report.connector };
  syncDuration.observe({ ...labels, outcome: report.ok ? 'ok' : 'failed' }, seconds(startedMs));
  syncErrors.inc(labels, report.ok ? 0 : 1); // at 0 too: a connector's series exists before its first error
  const sum = (pick: (r: SyncOutcomeForMetrics['resources'][number]) => number | undefined) =>
    report.resources.reduce((n, r) => n + (pick(r) ?? 0), 0);
  for (const [change, n] of [
    ['fetched', sum((r) => r.fetched)], ['created', sum((r) => r.created)], ['updated', sum((r) => r.updated)],
    ['deleted', sum((r) => r.deleted)], ['quarantined', sum((r) => r.quarantined)],
  ] as const) syncRecords.inc({ ...labels, change }, n);
}

// ---- Jobs -------------------------------------------------------------------------------------------

const jobAttempts = new Counter({
  name: 'msp_job_attempts_total',
  help: 'Job tries by outcome: completed, retried (failed with tries left) or failed (for good)',
  labelNames: ['queue', 'outcome'], registers,
});
const jobDuration = new Histogram({
  name: 'msp_job_duration_seconds', help: 'Duration of one job try', labelNames: ['queue'],
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300], registers,
});
const jobsRunningHere = new Gauge({ name: 'msp_jobs_running', help: 'Job tries running in this process', labelNames: ['queue'], registers });

/**
 * The handler of job `name`, counted: tries, their outcome and duration (jobs/processors/index.ts). Typed by
 * the try counts it reads, not by the job registry: the vendor HTTP client records here too, and the
 * registry names the payloads that depend on it.
 */
export function countedJob<J extends { attempt: number; attempts: number }, R>(name: string, handler: (job: J) => Promise<R>): (job: J) => Promise<R> {
  return async (job: J) => {
    const start = performance.now();
    jobsRunningHere.inc({ queue: name });
    try {
      const result = await handler(job);
      jobAttempts.inc({ queue: name, outcome: 'completed' });
      return result;
    } catch (err) {
      // The queue's own rule (jobs/queue/retry-policy.ts): a try with tries left is retried unless unrecoverable.
      jobAttempts.inc({ queue: name, outcome: isUnrecoverable(err) || job.attempt >= job.attempts ? 'failed' : 'retried' });
      throw err;
    } finally {
      jobsRunningHere.dec({ queue: name });
      jobDuration.observe({ queue: name }, seconds(start));
    }
  };
}

// ---- Webhook deliveries -----------------------------------------------------------------------------

const deliveries = new Counter({
  name: 'msp_webhook_deliveries_total',
  help: 'Webhook delivery tries by outcome (delivered, retry, gave_up, disabled, blocked, failed, skipped)',
  labelNames: ['outcome'], registers,
});
const deliveryLatency = new Histogram({
  name: 'msp_webhook_delivery_duration_seconds', help: 'Duration of one webhook delivery try, receiver included', labelNames: ['outcome'],
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers,
});

/** One delivery try ended with `outcome` (webhooks.service.ts DeliveryOutcome kind). */
export function recordDelivery(outcome: string, startedMs: number): void {
  deliveries.inc({ outcome });
  deliveryLatency.observe({ outcome }, seconds(startedMs));
}

// ---- Vendor calls -----------------------------------------------------------------------------------

const vendorRequests = new Counter({
  name: 'msp_vendor_requests_total', help: 'Vendor HTTP exchanges by answer class (2xx..5xx, or network when none came)',
  labelNames: ['connector', 'status_class'], registers,
});
const vendorThrottled = new Counter({
  name: 'msp_vendor_throttled_total', help: 'Vendor answers 429 (rate limited)', labelNames: ['connector'], registers,
});
const vendorLatency = new Histogram({
  name: 'msp_vendor_request_duration_seconds', help: 'Vendor HTTP exchange latency', labelNames: ['connector'],
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers,
});

/**
 * One vendor exchange (connectors/vendor-http.ts), sent at `sentAt` (Date.now()): `status` null when no
 * answer came. `connector` is unknown outside a connection's budget (the probe before a connection is saved).
 */
export function recordVendorCall(connector: string | undefined, status: number | null, sentAt: number): void {
  const c = connector ?? 'unknown';
  vendorRequests.inc({ connector: c, status_class: status === null ? 'network' : `${Math.floor(status / 100)}xx` });
  vendorThrottled.inc({ connector: c }, status === 429 ? 1 : 0);
  vendorLatency.observe({ connector: c }, (Date.now() - sentAt) / 1000);
}

// ---- Request log -------------------------------------------------------------------------------------

const requestLogDropped = new Counter({
  name: 'msp_request_log_dropped_total',
  help: 'Request-log entries dropped instead of written (src/requests/recorder.ts): the buffer was full, or the store refused the batch',
  labelNames: ['reason'], registers,
});
requestLogDropped.inc({ reason: 'full' }, 0);
requestLogDropped.inc({ reason: 'store' }, 0);

/** Request-log entries dropped: `full` (the buffer was at its bound) or `store` (the batch's INSERT failed). */
export function recordRequestLogDropped(reason: 'full' | 'store', n: number): void {
  requestLogDropped.inc({ reason }, n);
}

// ---- Read when scraped: lag, queue depth, budgets ---------------------------------------------------

/** What a running service lends the scrape (server.ts registers it at start and drops it at close). */
export interface MetricsSource {
  ds: DataSource;
  /** The queue's jobs per name and state (JobQueue.counts). */
  queue: {
    readonly driver: string;
    counts(): Promise<{ name: string; waiting: number; delayed: number; active: number; failed: number; oldestWaitingMs: number | null }[]>;
    /** When a worker last beat (jobs/queue/heartbeat.ts). */
    lastWorkerBeat(): Promise<number | null>;
  };
  budgets: { snapshot(connection: { id: string; connector: string; settings: Record<string, unknown> }): Promise<BudgetSnapshot> };
}

const sources = new Set<MetricsSource>();

/** Adds a service's store, queue and budgets to what /metrics reads; returns the removal. */
export function watchService(source: MetricsSource): () => void {
  sources.add(source);
  return () => { sources.delete(source); };
}

/** A scrape answers even when the store or Redis does not: the failing part's series are left out. */
async function quietly<T>(read: () => Promise<T>): Promise<T | null> {
  try { return await read(); } catch { return null; }
}

new Gauge({
  name: 'msp_sync_lag_seconds',
  help: 'Age of the stalest synced data: per connection the oldest resource\'s last successful sync, the worst connection shown',
  labelNames: ['kind', 'connector'], registers,
  async collect() {
    this.reset();
    for (const s of sources) {
      const rows = await quietly(() => syncLagByConnector(s.ds));
      for (const r of rows ?? []) this.set({ kind: r.kind, connector: r.connector }, Math.max(0, Number(r.lag)));
    }
  },
});

new Gauge({
  name: 'msp_jobs', help: 'Jobs by queue and state (waiting, delayed, active, failed and kept)', labelNames: ['queue', 'state'], registers,
  async collect() {
    this.reset();
    for (const s of sources) {
      for (const q of (await quietly(() => s.queue.counts())) ?? []) {
        for (const state of ['waiting', 'delayed', 'active', 'failed'] as const) this.inc({ queue: q.name, state }, q[state]);
      }
    }
  },
});

new Gauge({
  name: 'msp_queue_oldest_waiting_seconds', help: 'Age of the oldest job ready to run that no worker has taken yet, by queue (0: none waits)', labelNames: ['queue'], registers,
  async collect() {
    // Several services in one process (tests) share the series: the oldest wins.
    const oldest = new Map<string, number>();
    for (const s of sources) {
      for (const q of (await quietly(() => s.queue.counts())) ?? []) oldest.set(q.name, Math.max(oldest.get(q.name) ?? 0, (q.oldestWaitingMs ?? 0) / 1000));
    }
    this.reset();
    for (const [queue, age] of oldest) this.set({ queue }, age);
  },
});

new Gauge({
  name: 'msp_worker_heartbeat_age_seconds', help: 'Seconds since any worker last beat, by queue driver (/readyz says not ready past WORKER_HEARTBEAT_STALE_SECONDS); absent when none ever beat',
  labelNames: ['driver'], registers,
  async collect() {
    const newest = new Map<string, number>();
    for (const s of sources) {
      const beat = await quietly(() => s.queue.lastWorkerBeat());
      if (beat != null) newest.set(s.queue.driver, Math.max(newest.get(s.queue.driver) ?? 0, beat));
    }
    this.reset();
    for (const [driver, beat] of newest) this.set({ driver }, Math.max(0, (Date.now() - beat) / 1000));
  },
});

interface BudgetTotals { used: number; left: number; minRatio: number }

/** The budgets of every connection, summed per connector; one read serves the three budget series of a scrape. */
let budgetRead: { at: number; totals: Promise<Map<string, BudgetTotals>> } | null = null;
function budgetTotals(): Promise<Map<string, BudgetTotals>> {
  if (budgetRead && performance.now() - budgetRead.at < 1000) return budgetRead.totals;
  const totals = (async () => {
    const out = new Map<string, BudgetTotals>();
    for (const s of sources) {
      const connections = await quietly(() => connectionsForBudgets(s.ds));
      // One read per connection, all at once (Redis pipelines them).
      const snaps = await Promise.all((connections ?? []).map((c) => quietly(() => s.budgets.snapshot(c))));
      for (const [i, c] of (connections ?? []).entries()) {
        const snap = snaps[i];
        if (!snap) continue;
        const left = Math.max(0, snap.effectiveRate - snap.usedLastHour);
        const t = out.get(c.connector) ?? { used: 0, left: 0, minRatio: 1 };
        t.used += snap.usedLastHour;
        t.left += left;
        t.minRatio = Math.min(t.minRatio, snap.effectiveRate > 0 ? left / snap.effectiveRate : 0);
        out.set(c.connector, t);
      }
    }
    return out;
  })();
  budgetRead = { at: performance.now(), totals };
  return totals;
}

for (const [name, help, pick] of [
  ['msp_vendor_budget_used_requests', 'Vendor API budget used in the last hour, summed over the connector\'s connections', (t: BudgetTotals) => t.used],
  ['msp_vendor_budget_left_requests', 'Vendor API budget left this hour (effective rate minus used), summed over the connector\'s connections', (t: BudgetTotals) => t.left],
  ['msp_vendor_budget_left_ratio_min', 'Share of its hourly budget left on the connector\'s most spent connection (0: one is out)', (t: BudgetTotals) => t.minRatio],
] as const) {
  new Gauge({
    name, help, labelNames: ['connector'], registers,
    async collect() {
      const totals = await budgetTotals();
      this.reset();
      for (const [connector, t] of totals) this.set({ connector }, pick(t));
    },
  });
}
