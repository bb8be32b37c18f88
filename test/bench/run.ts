/**
 * `npm run bench`: side-by-side measurements in one run, on the embedded default and on PostgreSQL
 * (when reachable: DATABASE_URL, or postgres://postgres@127.0.0.1:5432/test).
 *  (a) GET tickets, limit 100, tenant with 50,000 tickets, 32 clients: service vs a bare handler that
 *      reads the same rows with one SQL query (ratio of requests per second; target >= 0.8 on PostgreSQL);
 *  (b) full sync of 50,000 tickets from the ConnectWise simulator (in a process of its own, as a vendor is:
 *      bench-vendor.ts) vs a plain batched INSERT of the same
 *      rows (ratio of records per second; target >= 0.75 on PostgreSQL);
 *  (c) peak RSS of the process running the service;
 *  (d) ask: POST /tenants/{t}/ask latency (p50/p99) on the same 50,000-ticket tenant vs the same
 *      structured query run directly in SQL (count plus the cited rows), ratio of latencies;
 *  (e) connect: the connect page's time to first byte, and Connect -> the new tenant's first complete sync;
 *  (f) fleet (PostgreSQL with Redis only): 1,000 small tenants on one worker, then two (fleet.ts);
 *  (g) fleet-10k, asked for by name only (BENCH_PARTS=fleet-10k): 10,000 tenants' steady state on one worker,
 *      the store seeded as synced (fleet-10k.ts).
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import path from 'node:path';
import type { Express } from 'express';
import { Client } from 'pg';
import { loadConfig } from '../../src/config/config';
import { startServer, type RunningServer } from '../../src/server';
import { createLogger } from '../../src/shared/logger';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import type { Services } from '../../src/services';
import { benchAutoMatch } from './identity';
import { benchBilling } from './billing';
import { randomUUID } from 'node:crypto';
import { IdempotencyService } from '../../src/writes/idempotency.service';
import { benchFuzz, benchServiceRss } from './service-process';
import { benchFreshness } from './freshness';
import { benchConnect } from './connect';
import { benchFleet } from './fleet';
import { benchFleet10k } from './fleet-10k';
import { startReceiver } from './receiver';
import { BENCH_INSTANCE as INSTANCE, startBenchVendor, type BenchVendor } from './bench-vendor';

const TICKETS = Number(process.env.BENCH_TICKETS ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = 32;
/**
 * BENCH_PARTS=reads,sync,events,writes,identity,billing,ask,freshness,connect,requestlog,rss,fuzz,fleet and BENCH_RUNTIMES=embedded,postgres
 * narrow a run (default: all). fleet-10k is not in the default: it is asked for by name (it takes a quarter of an hour).
 */
const PARTS = new Set((process.env.BENCH_PARTS ?? 'reads,sync,events,writes,identity,billing,ask,freshness,connect,requestlog,rss,fuzz,fleet').split(','));
/** The parts measured on the in-process service of benchRuntime (fleet and fleet-10k run processes of their own, PostgreSQL and Redis only). */
const IN_PROCESS_PARTS = [...PARTS].some((p) => p !== 'fleet' && p !== 'fleet-10k');
const RUNTIMES = new Set((process.env.BENCH_RUNTIMES ?? 'embedded,postgres').split(','));

interface LoadResult { requests: number; errors: number; rps: number; p50: number; p99: number; avgBytes: number }

function load(url: string, headers: Record<string, string>, cursorField: string, cursorParam: string): Promise<LoadResult> {
  const script = path.join(__dirname, 'load.js');
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [script, url, JSON.stringify(headers), String(CONCURRENCY), String(SECONDS), cursorField, cursorParam],
      { maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(JSON.parse(stdout.trim()))));
  });
}

/** The bare baseline: one SQL query, rows straight to JSON. */
function mountBaseline(app: Express, services: Services): void {
  app.get('/__bench/baseline/tickets', async (req, res) => {
    const after = typeof req.query.after === 'string' ? req.query.after : null;
    const rows = await services.ds.query(
      'SELECT * FROM tickets WHERE tenant_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT 100',
      [req.query.tenant_id, after],
    );
    res.json({ tickets: rows, last_id: rows.length === 100 ? rows[99].id : null });
  });
}

async function setupBenchTenant(svc: RunningServer, vendor: BenchVendor): Promise<{ tenantId: string; key: string; connectionId: string }> {
  const s = svc.services;
  const fixtures = loadVendorFixtures('sandbox-alpha', 'connectwise');
  const isv = await s.admin.createIsv('Bench ISV');
  const { key } = await s.admin.issueApiKey(isv.id, 'bench');
  const tenant = await s.admin.createTenant('Bench MSP', 'bench-msp');
  const conn = await s.admin.createConnection({
    tenantId: tenant.id, kind: 'psa', connector: 'connectwise',
    baseUrl: vendor.baseUrl,
    credentials: { companyId: INSTANCE, publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
    statusMapping: fixtures.statusMapping,
  });
  // The bench's own volume (the events part's 5,000 note counts, thousands of commits and their refresh
  // syncs) would spend ConnectWise's default 10,000 calls an hour, and the figures would then measure the
  // hourly window; the hour is raised, the connector's concurrency kept (the sync figures depend on it).
  await s.ds.query('UPDATE connections SET settings = settings || $2::jsonb WHERE id = $1',
    [conn.id, JSON.stringify({ budget: { requests_per_hour: 1_000_000 } })]);
  await s.access.invalidate();
  await s.admin.setGrant(isv.id, conn.id, ['psa.ticket.create', 'psa.ticket.events']);
  return { tenantId: tenant.id, key, connectionId: conn.id };
}

async function plainInsert(svc: RunningServer, tenantId: string): Promise<number> {
  const ds = svc.services.ds;
  const rows: Record<string, unknown>[] = await ds.query('SELECT * FROM tickets WHERE tenant_id = $1', [tenantId]);
  await ds.query('DROP TABLE IF EXISTS bench_plain_tickets');
  await ds.query('CREATE TABLE bench_plain_tickets (LIKE tickets INCLUDING DEFAULTS)');
  const cols = Object.keys(rows[0]);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000);
    const params: unknown[] = [];
    const tuples = batch.map((r) => `(${cols.map((c) => { params.push(c === 'raw' ? JSON.stringify(r[c]) : r[c]); return `$${params.length}`; }).join(',')})`);
    await ds.query(`INSERT INTO bench_plain_tickets (${cols.map((c) => `"${c}"`).join(',')}) VALUES ${tuples.join(',')}`, params);
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await ds.query('DROP TABLE bench_plain_tickets');
  return rows.length / seconds;
}

async function benchRuntime(name: string, databaseUrl: string | undefined): Promise<Record<string, unknown>> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', SYNC_INTERVAL_SECONDS: '0', WEBHOOK_ALLOW_LOOPBACK: 'true', RATE_LIMIT_PER_MINUTE: '100000000', AUTH_FAILURES_PER_MINUTE: '100000000' }, {
    port: 0, ephemeral: true, databaseUrl, redisUrl: undefined, queuePrefix: `bench-${Date.now()}`,
  });
  const svc = await startServer(config, {
    database: databaseUrl ? { databaseUrl, schema: `bench_${Date.now()}`, dropSchemaOnClose: true, poolSize: 16 } : {},
    logger: createLogger('warn'),
    mount: mountBaseline,
  });
  // The bench tenant's ConnectWise, in a process of its own (bench-vendor.ts).
  const vendor = await startBenchVendor(TICKETS);
  try {
    const { tenantId, key, connectionId } = await setupBenchTenant(svc, vendor);
    // (b) full sync vs plain INSERT
    const t0 = process.hrtime.bigint();
    const report = await svc.services.sync.syncConnection(connectionId);
    const syncSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const synced = report.resources.find((r) => r.resource === 'tickets')!.fetched;
    const syncRate = synced / syncSeconds;
    const insertRate = PARTS.has('sync') ? await plainInsert(svc, tenantId) : NaN;

    // Events written during an incremental sync with 10% of the tickets changed, delivered to
    // a local webhook receiver.
    const eventsFigures = PARTS.has('events') ? await benchEvents(svc, vendor, tenantId, key, connectionId) : {};

    // (a) reads, service vs baseline, one after the other in the same process
    const service = !PARTS.has('reads') ? { rps: NaN, p50: NaN, p99: NaN, errors: 0, requests: 0, avgBytes: NaN } : await load(`${svc.url}/tenants/${tenantId}/tickets?limit=100`, { 'x-api-key': key }, 'next_cursor', 'cursor');
    const baseline = !PARTS.has('reads') ? { rps: NaN, p50: NaN, p99: NaN, errors: 0, requests: 0, avgBytes: NaN } : await load(`${svc.url}/__bench/baseline/tickets?tenant_id=${tenantId}`, {}, 'last_id', 'after');
    const askFigures = PARTS.has('ask') ? await benchAsk(svc, tenantId, key) : {};
    // The request log's cost: the same reads and commits with the recorder on, then off (REQUEST_LOG=off's switch).
    const requestLog = PARTS.has('requestlog') ? await benchRequestLog(svc, tenantId, key, baseline.rps) : {};
    // Commit latency through the service vs a direct call to the simulator, and sustained commits.
    const writes = PARTS.has('writes') ? await benchCommits(svc, vendor, tenantId, key) : {};
    const identity = PARTS.has('identity') ? await benchAutoMatch(svc) : {};
    const billing = PARTS.has('billing') ? await benchBilling(svc) : {};
    // The service alone in its own process (simulators here), and the fuzz run at >= 10,000 requests.
    const serviceRss = PARTS.has('rss') ? await benchServiceRss(databaseUrl, TICKETS, load) : {};
    const fuzz = PARTS.has('fuzz') ? await benchFuzz(databaseUrl, Number(process.env.BENCH_FUZZ_REQUESTS ?? 10_000)) : {};
    const freshness = PARTS.has('freshness') ? await benchFreshness(svc) : {};
    // The connect page's first byte and Connect -> the new tenant's first complete sync.
    const connect = PARTS.has('connect') ? await benchConnect(svc) : {};
    return {
      runtime: name,
      'tickets.synced': synced,
      'sync.records_per_s': Math.round(syncRate),
      // A part left out of BENCH_PARTS prints no line (not NaN).
      ...(PARTS.has('sync') ? {
        'plain_insert.records_per_s': Math.round(insertRate),
        'sync/insert ratio (>=0.75 on PostgreSQL)': +(syncRate / insertRate).toFixed(2),
      } : {}),
      ...(PARTS.has('reads') ? {
        'GET tickets rps': Math.round(service.rps),
        'GET tickets p50/p99 ms': `${service.p50.toFixed(1)} / ${service.p99.toFixed(1)}`,
        'baseline rps': Math.round(baseline.rps),
        'baseline p50/p99 ms': `${baseline.p50.toFixed(1)} / ${baseline.p99.toFixed(1)}`,
        'read ratio (>=1.0 on PostgreSQL)': +(service.rps / baseline.rps).toFixed(2),
        'bytes per page: service / baseline': `${Math.round(service.avgBytes)} / ${Math.round(baseline.avgBytes)}`,
        errors: service.errors + baseline.errors,
      } : {}),
      ...eventsFigures,
      ...identity,
      ...billing,
      ...freshness,
      ...connect,
      ...askFigures,
      ...writes,
      ...requestLog,
      ...serviceRss,
      ...fuzz,
    };
  } finally {
    await svc.close();
    vendor.close();
  }
}

async function benchEvents(svc: RunningServer, vendor: BenchVendor, tenantId: string, key: string, connectionId: string): Promise<Record<string, unknown>> {
  const receiver = await startReceiver();
  const received = receiver.received;
  const reg = await fetch(`${svc.url}/tenants/${tenantId}/ticket-events/webhook`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ url: receiver.url }),
  });
  if (reg.status !== 201) throw new Error(`webhook registration answered ${reg.status}: ${await reg.text()}`);
  const webhookId = (await reg.json() as { id: string }).id;

  const tickets = await vendor.tickets();
  // The simulator stamps all grown tickets in one second and the baseline stored them within it, so the
  // first incremental re-reads every one (the watermark is inclusive) and settles them: a one-time cost of
  // the synthetic baseline, not a 5,000-change sync. One edit and its sync, timed apart, move the
  // watermark past that second first, as any later sync of a real board would find it.
  await vendor.update([[tickets[1].id, { summary: `${tickets[1].summary} (first incremental)` }]]);
  const f0 = process.hrtime.bigint();
  await svc.services.sync.syncConnection(connectionId, { resources: ['tickets'] });
  const firstIncrementalSeconds = Number(process.hrtime.bigint() - f0) / 1e9;
  const changed = Math.floor(tickets.length / 10);
  await vendor.update(Array.from({ length: changed }, (_, i) => [tickets[i * 10].id, { summary: `${tickets[i * 10].summary} (edited)` }]));
  const before = Number((await svc.services.ds.query('SELECT COUNT(*)::int AS n FROM events WHERE tenant_id = $1', [tenantId]))[0].n);
  // The change path alone: time inside the sync's page transactions (records upserted, changes detected,
  // events inserted, commit), apart from the vendor calls (the list pages) the sync spends the rest of its time on.
  const ds = svc.services.ds;
  const transaction = ds.transaction;
  let changePathNs = 0n;
  ds.transaction = (async (...args: unknown[]) => {
    const started = process.hrtime.bigint();
    try { return await (transaction as (...a: unknown[]) => Promise<unknown>).apply(ds, args); } finally { changePathNs += process.hrtime.bigint() - started; }
  }) as typeof ds.transaction;
  const t0 = process.hrtime.bigint();
  try {
    await svc.services.sync.syncConnection(connectionId, { resources: ['tickets'] });
  } finally {
    ds.transaction = transaction;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const rows: { id: string; created_at: Date }[] = await svc.services.ds.query('SELECT id, created_at FROM events WHERE tenant_id = $1', [tenantId]);
  const written = rows.length - before;

  const deadline = Date.now() + 180_000;
  while (received.size < rows.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const times = [...received.values()];
  const deliverySeconds = times.length > 1 ? (Math.max(...times) - Math.min(...times)) / 1000 : 0;
  const lags = rows.filter((r) => received.has(r.id)).map((r) => received.get(r.id)! - new Date(r.created_at).getTime()).sort((a, b) => a - b);
  const deliveredOfBurst = `${rows.filter((r) => received.has(r.id)).length} of ${rows.length}`;

  // One event at a time on a quiet service: a ticket edited, its sync, the event to the receiver.
  const quiet: number[] = [];
  for (let i = 0; i < Number(process.env.BENCH_QUIET_EVENTS ?? 30); i++) {
    const t = tickets[(i * 7 + 3) % tickets.length];
    await vendor.update([[t.id, { summary: `${t.summary} (quiet ${i})` }]]);
    const known = new Set(received.keys());
    await svc.services.sync.syncConnection(connectionId, { resources: ['tickets'] });
    const [event]: { id: string; created_at: Date }[] = await ds.query(
      "SELECT id, created_at FROM events WHERE tenant_id = $1 AND kind LIKE 'ticket.%' ORDER BY seq DESC LIMIT 1", [tenantId]);
    const until = Date.now() + 10_000;
    while (!received.has(event.id) && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
    if (received.has(event.id) && !known.has(event.id)) quiet.push(received.get(event.id)! - new Date(event.created_at).getTime());
  }
  quiet.sort((a, b) => a - b);
  receiver.close();
  // Removed with its receiver: later events (the bench's later parts) would otherwise be retried at a
  // closed port in this same process, and load every figure measured after this one.
  const removed = await fetch(`${svc.url}/tenants/${tenantId}/ticket-events/webhook/${webhookId}`, { method: 'DELETE', headers: { 'x-api-key': key } });
  if (!removed.ok) throw new Error(`webhook removal answered ${removed.status}`);
  const failures: { last_error: string; n: number }[] = await svc.services.ds.query(
    `SELECT last_error, COUNT(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND last_error IS NOT NULL GROUP BY 1`, [tenantId]);
  return {
    'webhook failed tries (last error)': failures.map((f) => `${f.n}x ${f.last_error}`).join('; ') || 'none',
    'first incremental after the baseline s': firstIncrementalSeconds.toFixed(1),
    'incremental sync: tickets changed': changed,
    'events written': written,
    'events written/s': Math.round(written / seconds),
    'events written/s, change path (>=5000)': Math.round(written / (Number(changePathNs) / 1e9)),
    'webhook deliveries': deliveredOfBurst,
    'webhook deliveries/s': Math.round(rows.length / Math.max(deliverySeconds, 0.001)),
    [`webhook burst of ${written} events: event->delivery p50/p99 ms (p99<2000)`]: `${percentile(lags, 0.5).toFixed(0)} / ${percentile(lags, 0.99).toFixed(0)}`,
    'one event on a quiet service: event->delivery p50/p99 ms (p99<100)': `${percentile(quiet, 0.5).toFixed(0)} / ${percentile(quiet, 0.99).toFixed(0)} (${quiet.length} events)`,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function benchCommits(svc: RunningServer, vendor: BenchVendor, tenantId: string, key: string): Promise<Record<string, unknown>> {
  const N = Number(process.env.BENCH_COMMITS ?? 150);
  const companies = (await svc.services.ds.query('SELECT name FROM companies WHERE tenant_id = $1 GROUP BY name HAVING COUNT(*) = 1 LIMIT 1', [tenantId]));
  const company = companies[0].name as string;
  let seq = 0;
  const commit = async () => {
    const res = await fetch(`${svc.url}/tenants/${tenantId}/tickets`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ company_name: company, summary: `Bench ticket ${seq}`, dry_run: false, idempotency_key: `bench-${Date.now()}-${seq++}` }),
    });
    if (res.status !== 201) throw new Error(`commit answered ${res.status}: ${await res.text()}`);
  };
  // The request the service would send, sent straight to the simulator.
  const preview = await (await fetch(`${svc.url}/tenants/${tenantId}/tickets`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ company_name: company, summary: 'Bench direct' }),
  })).json() as { preview: { targets: { requests: { body: Record<string, unknown> }[] }[] } };
  const directBody = preview.preview.targets[0].requests[0].body;
  const auth = 'Basic ' + Buffer.from(`${INSTANCE}+sandbox-public:sandbox-private`).toString('base64');
  const direct = async () => {
    const res = await fetch(`${vendor.baseUrl}/service/tickets`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: auth, clientId: '00000000-0000-0000-0000-000000000000' },
      body: JSON.stringify({ ...directBody, externalXRef: `direct-${seq++}` }),
    });
    if (res.status !== 201) throw new Error(`direct answered ${res.status}`);
  };
  // Measured first, before the commits below leave their ticket syncs running in the background.
  // The fence alone (write-fence.ts): the lease taken and released around a vendor call after the first
  // (the first job adopts the lease the reservation was made with, no round trip), on a real reservation.
  const idempotency = new IdempotencyService(svc.services.ds, svc.services.writeFence);
  const reservation = await idempotency.reserve({ isvId: randomUUID(), tenantId, operation: 'bench.fence', key: randomUUID() }, 'h');
  const fenceLat: number[] = [];
  if (reservation.kind === 'new' && reservation.lease) await svc.services.writeFence.release(reservation.id, reservation.lease.token);
  if (reservation.kind === 'new') {
    for (let i = 0; i < N; i++) {
      fenceLat.push(await timed(async () => {
        const lease = await svc.services.writeFence.acquire(reservation.id, reservation.generation, `bench-${i}`, Date.now() + 5000);
        if (lease.kind === 'held') await svc.services.writeFence.release(reservation.id, lease.token);
      }));
    }
  }
  fenceLat.sort((a, b) => a - b);
  // What exactly-once costs a commit at least: the two statements that must be durable around the vendor
  // call (docs/architecture.md, Writes), the key reserved with its lease, then the answer stored, one
  // after the other on this database, nothing else.
  const keyLat: number[] = [];
  for (let i = 0; i < N; i++) {
    keyLat.push(await timed(async () => {
      const r = await idempotency.reserve({ isvId: randomUUID(), tenantId, operation: 'bench.key', key: randomUUID() }, 'h');
      if (r.kind === 'new') await idempotency.complete(r, { status: 201, body: { ok: true } }, [], r.lease ? [r.lease.token] : []);
    }));
  }
  keyLat.sort((a, b) => a - b);
  const svcLat: number[] = [];
  const dirLat: number[] = [];
  for (let i = 0; i < N; i++) { svcLat.push(await timed(commit)); dirLat.push(await timed(direct)); }
  svcLat.sort((a, b) => a - b);
  dirLat.sort((a, b) => a - b);
  // Sustained: 16 clients, unique keys, for a fixed time.
  const until = Date.now() + SECONDS * 1000;
  let done = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: 16 }, async () => { while (Date.now() < until) { await commit(); done++; } }));
  const rate = done / ((Date.now() - t0) / 1000);
  return {
    'fence (lease + release) p50/p99 ms': `${percentile(fenceLat, 0.5).toFixed(2)} / ${percentile(fenceLat, 0.99).toFixed(2)}`,
    'commit: key reserved, then answer stored, alone p50/p99 ms': `${percentile(keyLat, 0.5).toFixed(2)} / ${percentile(keyLat, 0.99).toFixed(2)}`,
    'commit p50/p99 ms (service)': `${percentile(svcLat, 0.5).toFixed(1)} / ${percentile(svcLat, 0.99).toFixed(1)}`,
    'commit p50/p99 ms (direct)': `${percentile(dirLat, 0.5).toFixed(1)} / ${percentile(dirLat, 0.99).toFixed(1)}`,
    'commit latency ratio p50/p99': `${(percentile(svcLat, 0.5) / percentile(dirLat, 0.5)).toFixed(2)} / ${(percentile(svcLat, 0.99) / percentile(dirLat, 0.99)).toFixed(2)}`,
    'sustained commits/s (16 clients)': Math.round(rate),
  };
}

/**
 * The request log's cost (docs/architecture.md, Request log): GET tickets (32 clients) and commits one at a
 * time, with the recorder on and then off in the same process, beside the bare handler's reads.
 */
async function benchRequestLog(svc: RunningServer, tenantId: string, key: string, baselineRps: number): Promise<Record<string, unknown>> {
  const recorder = svc.services.requestRecorder;
  const N = Number(process.env.BENCH_LOG_COMMITS ?? 50);
  const [{ name: company }] = await svc.services.ds.query('SELECT name FROM companies WHERE tenant_id = $1 GROUP BY name HAVING COUNT(*) = 1 LIMIT 1', [tenantId]);
  let seq = 0;
  const commit = async () => {
    const res = await fetch(`${svc.url}/tenants/${tenantId}/tickets`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ company_name: company, summary: `Log bench ${seq}`, dry_run: false, idempotency_key: `log-bench-${Date.now()}-${seq++}` }),
    });
    if (res.status !== 201) throw new Error(`commit answered ${res.status}: ${await res.text()}`);
  };
  // On and off alternate (on, off, on, off, ...), so the machine's drift and the service's warming up fall on both alike.
  const ROUNDS = Number(process.env.BENCH_LOG_ROUNDS ?? 2);
  // CPU time is measured beside throughput: on a busy machine the rates swing with what else runs, while the
  // CPU this process spends per read (service, recorder and load generator alike) moves only with our own work.
  const samples = { on: { rps: [] as number[], lat: [] as number[], cpuMs: 0, reads: 0 }, off: { rps: [] as number[], lat: [] as number[], cpuMs: 0, reads: 0 } };
  const measure = async (state: 'on' | 'off') => {
    recorder.enabled = state === 'on';
    const cpu = process.cpuUsage();
    const reads = await load(`${svc.url}/tenants/${tenantId}/tickets?limit=100`, { 'x-api-key': key }, 'next_cursor', 'cursor');
    // The batch is written inside its own round, so an on round pays for what it recorded.
    await recorder.flush();
    const used = process.cpuUsage(cpu);
    samples[state].cpuMs += (used.user + used.system) / 1000;
    samples[state].reads += reads.requests;
    samples[state].rps.push(reads.rps);
    for (let i = 0; i < N; i++) samples[state].lat.push(await timed(commit));
    await recorder.flush();
  };
  const was = recorder.enabled;
  const [{ n: before }] = await svc.services.ds.query('SELECT count(*)::int AS n FROM request_log');
  const droppedBefore = recorder.dropped;
  for (let r = 0; r < ROUNDS; r++) { await measure('on'); await measure('off'); }
  const [{ n: after }] = await svc.services.ds.query('SELECT count(*)::int AS n FROM request_log');
  recorder.enabled = was;
  const summary = (s: { rps: number[]; lat: number[] }) => {
    const lat = [...s.lat].sort((a, b) => a - b);
    return { rps: s.rps.reduce((a, b) => a + b, 0) / s.rps.length, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99) };
  };
  const on = summary(samples.on);
  const off = summary(samples.off);
  // The prune job's pass (REQUEST_LOG_DAYS, REQUEST_LOG_MAX_ROWS): what the table holds after it.
  await svc.services.requestLog.prune();
  const [{ n: kept }] = await svc.services.ds.query('SELECT count(*)::int AS n FROM request_log');
  return {
    'request log: cost per commit p50 ms': (on.p50 - off.p50).toFixed(1),
    'request log: read cost (1 - rps on / off)': (1 - on.rps / off.rps).toFixed(2),
    'request log: CPU ms per read on / off': `${(samples.on.cpuMs / samples.on.reads).toFixed(2)} / ${(samples.off.cpuMs / samples.off.reads).toFixed(2)}`,
    'request log: rows after prune / max': `${kept} / ${svc.services.config.requestLog.maxRows}`,
    'request log: reads rps on / off': `${Math.round(on.rps)} / ${Math.round(off.rps)}`,
    'request log: read ratio on / off': `${(on.rps / baselineRps).toFixed(2)} / ${(off.rps / baselineRps).toFixed(2)}`,
    'request log: commit p50/p99 on / off': `${on.p50.toFixed(1)}/${on.p99.toFixed(1)} / ${off.p50.toFixed(1)}/${off.p99.toFixed(1)}`,
    'request log: written / dropped': `${Number(after) - Number(before)} / ${recorder.dropped - droppedBefore}`,
  };
}

/**
 * Ask on the 50,000-ticket tenant: questions answered through the service (HTTP, parse, validate,
 * count, cite up to 500 rows, as_of) vs the same structured query written by hand in SQL (the count
 * and the rows cited), one request at a time.
 */
async function benchAsk(svc: RunningServer, tenantId: string, key: string): Promise<Record<string, unknown>> {
  const N = Number(process.env.BENCH_ASKS ?? 200);
  const ds = svc.services.ds;
  const [{ name: company }] = await ds.query('SELECT company_name AS name FROM tickets WHERE tenant_id = $1 AND company_name IS NOT NULL GROUP BY 1 ORDER BY COUNT(*) DESC LIMIT 1', [tenantId]);
  const open = "(status IS NULL OR status NOT IN ('resolved', 'closed'))";
  const cases: { question: string; sql: () => Promise<unknown> }[] = [
    { question: 'How many open critical tickets?', sql: async () => {
      await ds.query(`SELECT COUNT(*)::int AS n FROM tickets WHERE tenant_id = $1 AND ${open} AND priority = 'critical'`, [tenantId]);
      await ds.query(`SELECT id, source_id, summary FROM tickets WHERE tenant_id = $1 AND ${open} AND priority = 'critical' ORDER BY opened_at DESC NULLS LAST, id LIMIT 500`, [tenantId]);
    } },
    { question: `How many open tickets does ${company} have?`, sql: async () => {
      await ds.query(`SELECT COUNT(*)::int AS n FROM tickets WHERE tenant_id = $1 AND ${open} AND lower(company_name) = lower($2)`, [tenantId, company]);
      await ds.query(`SELECT id, source_id, summary FROM tickets WHERE tenant_id = $1 AND ${open} AND lower(company_name) = lower($2) ORDER BY opened_at DESC NULLS LAST, id LIMIT 500`, [tenantId, company]);
    } },
    { question: 'Top 5 companies by open tickets', sql: async () => {
      const g: { name: string }[] = await ds.query(`SELECT company_name AS name, COUNT(*)::int AS n FROM tickets WHERE tenant_id = $1 AND ${open} AND company_name IS NOT NULL GROUP BY 1 ORDER BY n DESC, 1 LIMIT 5`, [tenantId]);
      await ds.query(`SELECT id, source_id, summary FROM tickets WHERE tenant_id = $1 AND ${open} AND company_name = ANY($2::text[]) ORDER BY company_name, opened_at DESC NULLS LAST, id LIMIT 500`, [tenantId, g.map((x) => x.name)]);
    } },
    { question: 'Show the 10 newest tickets', sql: async () => {
      await ds.query('SELECT COUNT(*)::int AS n FROM tickets WHERE tenant_id = $1', [tenantId]);
      await ds.query('SELECT id, source_id, summary FROM tickets WHERE tenant_id = $1 ORDER BY opened_at DESC NULLS LAST, id LIMIT 10', [tenantId]);
    } },
  ];
  const ask = async (question: string) => {
    const res = await fetch(`${svc.url}/tenants/${tenantId}/ask`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ question }),
    });
    const body = await res.json() as { answered?: boolean; answer?: string };
    if (res.status !== 200 || !body.answered) throw new Error(`ask "${question}" answered ${res.status}: ${body.answer ?? JSON.stringify(body)}`);
  };
  for (const c of cases) { await ask(c.question); await c.sql(); } // warm both paths
  const svcLat: number[] = [];
  const sqlLat: number[] = [];
  for (let i = 0; i < N; i++) {
    const c = cases[i % cases.length];
    svcLat.push(await timed(() => ask(c.question)));
    sqlLat.push(await timed(async () => { await c.sql(); }));
  }
  svcLat.sort((a, b) => a - b);
  sqlLat.sort((a, b) => a - b);
  return {
    'ask p50/p99 ms (service)': `${percentile(svcLat, 0.5).toFixed(1)} / ${percentile(svcLat, 0.99).toFixed(1)}`,
    'ask p50/p99 ms (direct SQL)': `${percentile(sqlLat, 0.5).toFixed(1)} / ${percentile(sqlLat, 0.99).toFixed(1)}`,
    'ask latency ratio p50/p99': `${(percentile(svcLat, 0.5) / percentile(sqlLat, 0.5)).toFixed(2)} / ${(percentile(svcLat, 0.99) / percentile(sqlLat, 0.99)).toFixed(2)}`,
  };
}

async function postgresReachable(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try { await c.connect(); await c.end(); return true; } catch { return false; }
}

(async () => {
  const results: Record<string, unknown>[] = [];
  if (RUNTIMES.has('embedded') && IN_PROCESS_PARTS) results.push(await benchRuntime('embedded (PGlite)', undefined));
  const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (!RUNTIMES.has('postgres')) { /* not asked for */ } else if (await postgresReachable(pgUrl)) {
    const pg = IN_PROCESS_PARTS ? await benchRuntime('PostgreSQL', pgUrl) : { runtime: 'PostgreSQL' };
    // A thousand MSPs on one worker, then two: after the in-process service has closed (fleet.ts).
    if (PARTS.has('fleet')) Object.assign(pg, await benchFleet(pgUrl));
    // Ten thousand MSPs' steady state on one worker, the store seeded as synced (fleet-10k.ts).
    if (PARTS.has('fleet-10k')) Object.assign(pg, await benchFleet10k(pgUrl));
    results.push(pg);
  } else console.log(`PostgreSQL not reachable at ${pgUrl}: skipped`);
  const rss = process.resourceUsage().maxRSS / 1024;
  for (const r of results) {
    console.log(`\n## ${r.runtime}`);
    for (const [k, v] of Object.entries(r)) if (k !== 'runtime') console.log(`  ${k.padEnd(36)} ${v}`);
  }
  console.log(`\npeak RSS of the bench process (in-process service, the sandbox's simulators, both runtimes): ${rss.toFixed(0)} MiB`);
  process.exit(0);
})().catch((err) => { console.error(err); process.exit(1); });
