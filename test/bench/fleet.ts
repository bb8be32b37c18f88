/**
 * `fleet` bench part (PostgreSQL and Redis only): a thousand MSPs on one worker.
 *
 * BENCH_FLEET_TENANTS sandbox-like tenants (1,000), each with a PSA, an RMM and a distributor connection,
 * synced from the vendor simulators in a process of their own (test/bench/fleet-vendors.ts: one instance
 * per tenant, small datasets, every answer held BENCH_FLEET_LATENCY_MS = 100 ms, each vendor's published
 * limit enforced). The service runs as it is deployed: an api process and worker processes
 * (`SERVICE_ROLE=worker node dist/src/main.js`, the heap cap `npm run worker` gives), on real PostgreSQL
 * (a schema of its own, dropped after) and Redis (a queue prefix of its own, deleted after). Tenants and
 * connections are written in bulk, the way the admin service stores them.
 *
 *  A. Speed-up: the initial sync of every connection (one job each, queued at once) with one worker, then
 *     from scratch (a new schema) with two; their durations, and the ratio of their rates (connections
 *     synced a second: a run still going after BENCH_FLEET_TIMEOUT_S, 90, stops there and its rate counts).
 *     Then the same at BENCH_FLEET_SCALE_CONCURRENCY (16) syncs a worker, which leaves the host cores to
 *     spare: whether the work splits across workers, apart from how many cores the host has.
 *  B. Steady state, on a fresh store: the scheduler runs (intervals as the service derives them) for BENCH_FLEET_INTERVALS (2)
 *     intervals with one worker (then with two if BENCH_FLEET_STEADY_WORKERS=1,2) while BENCH_FLEET_CHANGES
 *     (5 %) of the tenants per interval change a ticket or a device in their systems: the share of
 *     connections synced within their interval (syncedWithinInterval), the change-to-store lag, the
 *     workers' RSS (/proc VmRSS sampled, VmHWM at the end), their CPU per sync and the 429s the vendors
 *     answered. It watches fewer intervals (one at least) rather than run past BENCH_FLEET_LIMIT_S (540).
 *     The fleet-10k part (fleet-10k.ts) runs this same watch at 10,000 tenants, on a store seeded as synced.
 *
 * BENCH_FLEET_CONCURRENCY sets the workers' SYNC_CONCURRENCY (unset: the service's default); the CPU lines
 * say how busy the host was, since the figures are only as good as the cores the workers got.
 * BENCH_FLEET_WORKER_NODE_ARGS passes node flags to the workers (`--cpu-prof --cpu-prof-dir=<dir>` to profile them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import IORedis from 'ioredis';
import { Connection, Tenant } from '../../entities';
import { openDatabase, type Database } from '../../src/db/database';
import { SecretBox } from '../../src/security/secret-box';
import { BullMqJobQueue } from '../../jobs/queue/bullmq';
import { ConnectionBudgets } from '../../src/budget/connection-budgets';
import { VendorBudget } from '../../src/budget/vendor-budget';
import { InProcessBudgetStore } from '../../src/budget/in-process-store';
import { planFreshness } from '../../src/sync/freshness';
import { capabilitiesOf, readConnector } from '../../src/connectors/registry';
import { databasePoolSize, DEFAULT_SYNC_CONCURRENCY } from '../../src/config/config';
import { fleetTenant } from './fleet-vendors';
import { forgetRedisKeys } from '../support/runtime';

const TENANTS = Number(process.env.BENCH_FLEET_TENANTS ?? 1000);
export const LATENCY_MS = Number(process.env.BENCH_FLEET_LATENCY_MS ?? 100);
const INTERVALS = Number(process.env.BENCH_FLEET_INTERVALS ?? 2);
const CHANGE_SHARE = Number(process.env.BENCH_FLEET_CHANGES ?? 0.05);
const STEADY_WORKERS = (process.env.BENCH_FLEET_STEADY_WORKERS ?? '1').split(',').map(Number).filter((n) => n > 0);
const CONCURRENCY = process.env.BENCH_FLEET_CONCURRENCY;
/** The part ends its steady-state watch in time to finish within this (at least one interval is watched). */
const PART_LIMIT_MS = Number(process.env.BENCH_FLEET_LIMIT_S ?? 540) * 1000;
/** A phase-A run still going by then stops there: its rate (connections synced a second) is what compares. */
const INITIAL_SYNC_LIMIT_MS = Number(process.env.BENCH_FLEET_TIMEOUT_S ?? 90) * 1000;
/** Phase A again at this SYNC_CONCURRENCY a worker (0: not), below what fills the host's cores. */
const SCALE_CONCURRENCY = Number(process.env.BENCH_FLEET_SCALE_CONCURRENCY ?? 16);

const ROOT = path.join(__dirname, '..', '..', '..');
const mib = (bytes: number) => Math.round(bytes / 1048576);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** VmRSS or VmHWM of a process, in bytes (NaN once it is gone). */
function procBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** CPU time (user + system) a process has used, in ms (0 once it is gone). */
function procCpuMs(pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in ticks of 10 ms.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}
const workersCpuMs = (store: Store) => store.workers.reduce((t, w) => t + procCpuMs(w.child.pid!), 0);

/** The machine's CPU time, busy and total, in ticks (/proc/stat): how loaded the host was meanwhile. */
function machineCpu(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  return { busy: total - ticks[3] - (ticks[4] ?? 0), total };
}

/** CPU use meanwhile: the workers' and the vendors' process, each in cores, and the whole machine's busy share. */
function cpuMeter(store: Store, vendors: Proc) {
  const w0 = workersCpuMs(store);
  const v0 = procCpuMs(vendors.child.pid!);
  const m0 = machineCpu();
  const t0 = Date.now();
  return () => {
    const seconds = (Date.now() - t0) / 1000;
    const m = machineCpu();
    const busyShare = (m.busy - m0.busy) / Math.max(1, m.total - m0.total);
    return {
      workersMs: workersCpuMs(store) - w0,
      busyShare,
      text: `workers ${((workersCpuMs(store) - w0) / 1000 / seconds).toFixed(2)}, vendors ${((procCpuMs(vendors.child.pid!) - v0) / 1000 / seconds).toFixed(2)} cores; machine ${Math.round(100 * busyShare)} % busy`,
    };
  };
}

export interface Proc { child: ChildProcess; url: string; out: () => string; stop(): Promise<void> }

/** Starts a node process; resolves once its output matches `ready` (its URL in the first group). */
function startProcess(label: string, args: string[], env: NodeJS.ProcessEnv, ready: RegExp, limitMs = 120_000): Promise<Proc> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => { out = (out + d.toString()).slice(-20_000); };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${label} did not start: ${out}`)); }, limitMs);
    child.stderr!.on('data', keep);
    child.stdout!.on('data', (d: Buffer) => {
      keep(d);
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          child, url: m[1], out: () => out,
          async stop() {
            if (child.exitCode !== null || child.signalCode !== null) return;
            const exited = new Promise((r) => child.once('exit', r));
            child.kill('SIGTERM');
            await Promise.race([exited, sleep(20_000)]);
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          },
        });
      }
    });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${label} exited ${code}: ${out}`)); });
  });
}

export interface FleetConnection { id: string; tenantId: string; tenant: number; kind: string; connector: string; intervalMs: number; resources: number }

/** One store and queue: a schema, a queue prefix, the api process on them, and the fleet written in. */
export interface Store {
  schema: string;
  prefix: string;
  api: Proc;
  db: Database;
  queue: BullMqJobQueue;
  connections: FleetConnection[];
  workers: Proc[];
}

/** What every store of a part shares: the database, Redis, the vendors' process and the tenants it serves. */
export interface Shared { databaseUrl: string; redisUrl: string; vendors: Proc; vendorsUrl: string; encryptionKey: string; adminToken: string; tenants: number }

function serviceEnv(shared: Shared, store: Pick<Store, 'schema' | 'prefix'>, extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: shared.databaseUrl, DATABASE_SCHEMA: store.schema, REDIS_URL: shared.redisUrl, QUEUE_PREFIX: store.prefix,
    ENCRYPTION_KEY: shared.encryptionKey, ADMIN_TOKEN: shared.adminToken, SANDBOX: 'false', LOG_LEVEL: 'warn', PORT: '0',
    RATE_LIMIT_PER_MINUTE: '100000000', AUTH_FAILURES_PER_MINUTE: '100000000',
  };
  for (const k of ['SYNC_INTERVAL_SECONDS', 'SYNC_CONCURRENCY', 'DATABASE_POOL_SIZE', 'VENDOR_BUDGET', 'DATA_DIR']) delete env[k];
  if (CONCURRENCY) env.SYNC_CONCURRENCY = CONCURRENCY;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export async function openStore(shared: Shared): Promise<Store> {
  const suffix = randomBytes(4).toString('hex');
  const store = { schema: `fleet_${suffix}`, prefix: `fleet-${suffix}` };
  // The api runs the migrations; the bench then writes the fleet into its schema.
  const api = await startProcess('api', [path.join(ROOT, 'dist/src/main.js')], serviceEnv(shared, store, { SERVICE_ROLE: 'api' }), /listening on (http:\/\/\S+)/);
  const db = await openDatabase({ databaseUrl: shared.databaseUrl, schema: store.schema, dropSchemaOnClose: true, poolSize: 4 });
  const queue = new BullMqJobQueue({ redisUrl: shared.redisUrl, prefix: store.prefix });
  const connections = await writeFleet(db, shared);
  return { ...store, api, db, queue, connections, workers: [] };
}

/** The tenants and their connections, stored as the admin service stores them (credentials sealed), in bulk. */
async function writeFleet(db: Database, shared: Shared): Promise<FleetConnection[]> {
  const box = new SecretBox(Buffer.from(shared.encryptionKey, 'base64'));
  const budgets = new ConnectionBudgets(new VendorBudget(new InProcessBudgetStore()), (connector) => capabilitiesOf(connector).budget);
  const specs = Array.from({ length: shared.tenants }, (_, i) => fleetTenant(i));
  const tenantIds: string[] = [];
  for (let i = 0; i < specs.length; i += 500) {
    const rows = specs.slice(i, i + 500).map((t) => ({ name: `Fleet MSP ${t.slug}`, slug: t.slug }));
    const res = await db.dataSource.getRepository(Tenant).insert(rows);
    tenantIds.push(...res.identifiers.map((x) => String(x.id)));
  }
  const rows = specs.flatMap((t, i) => t.connections.map((c) => ({
    tenant: i,
    entity: {
      tenantId: tenantIds[i], kind: c.kind, connector: c.connector, baseUrl: `${shared.vendorsUrl}${c.path}`,
      credentialsEncrypted: box.sealJson(c.credentials), statusMapping: c.statusMapping, settings: {},
    },
  })));
  const out: FleetConnection[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    const chunk = rows.slice(i, i + 1000);
    const res = await db.dataSource.getRepository(Connection).insert(chunk.map((r) => r.entity as never));
    res.identifiers.forEach((x, j) => {
      const { tenant, entity } = chunk[j];
      const id = String(x.id);
      out.push({
        id, tenantId: entity.tenantId, tenant, kind: entity.kind, connector: entity.connector,
        // The tick a new connection's plan starts at (its hot resources' interval; src/sync/freshness.ts).
        intervalMs: planFreshness(readConnector(entity.connector).resources.map((resource) => ({ resource, quietChecks: 0, callsPerCheck: null })),
          budgets.limits({ id, connector: entity.connector, settings: {} }).requestsPerHour).tickMs,
        resources: readConnector(entity.connector).resources.length,
      });
    });
  }
  await budgets.close();
  return out;
}

/** Starts `n` workers; resolves once each says it is up (its schedules placed), with how long that took. */
export async function startWorkers(shared: Shared, store: Store, n: number, extra: Record<string, string | undefined>): Promise<number> {
  const t0 = Date.now();
  const started = await Promise.allSettled(Array.from({ length: n }, () => startProcess(
    'worker', ['--max-old-space-size=256', ...(process.env.BENCH_FLEET_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(ROOT, 'dist/src/main.js')],
    serviceEnv(shared, store, { SERVICE_ROLE: 'worker', ...extra }), /worker on (http:\/\/\S+)/, 600_000,
  )));
  for (const s of started) if (s.status === 'fulfilled') store.workers.push(s.value);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return Date.now() - t0;
}

/** What the part has measured so far, as it goes (the figures come together at the end). */
export function progress(line: string, part = 'fleet'): void {
  process.stderr.write(`${part}: ${line}\n`);
}

export async function stopWorkers(store: Store): Promise<void> {
  await Promise.all(store.workers.map((w) => w.stop()));
  store.workers = [];
}

export async function closeStore(shared: Shared, store: Store): Promise<void> {
  await stopWorkers(store);
  await store.api.stop();
  await store.queue.close();
  await store.db.close();
  // The queue's and the budgets' keys under the prefix.
  await forgetRedisKeys(shared.redisUrl, `${store.prefix}:`);
}

/** Samples the workers' RSS every `everyMs` until stopped; `peak` is the largest VmHWM (the kernel's own peak). */
function rssSampler(store: Store, everyMs = 500) {
  const samples: { at: number; bytes: number }[] = [];
  const timer = setInterval(() => {
    const bytes = Math.max(...store.workers.map((w) => procBytes(w.child.pid!, 'VmRSS')).filter((b) => !Number.isNaN(b)));
    if (Number.isFinite(bytes)) samples.push({ at: Date.now(), bytes });
  }, everyMs);
  return {
    samples,
    stop(): number {
      clearInterval(timer);
      return Math.max(...store.workers.map((w) => procBytes(w.child.pid!, 'VmHWM')).filter((b) => !Number.isNaN(b)));
    },
  };
}

async function vendorStats(shared: Shared): Promise<{ requests: number; throttled: number; byVendor: Record<string, { requests: number; throttled: number }> }> {
  const body = await (await fetch(`${shared.vendorsUrl}/fleet/stats`)).json() as { vendors: Record<string, { requests: number; throttled: number }> };
  const total = Object.values(body.vendors).reduce((a, v) => ({ requests: a.requests + v.requests, throttled: a.throttled + v.throttled }), { requests: 0, throttled: 0 });
  return { ...total, byVendor: body.vendors };
}

/** Checks the workers have run so far (each a run of the sync over a connection's claimed resources), from their /metrics. */
/** Checks the workers ran so far, and the seconds they took together (msp_sync_duration_seconds). */
async function checksRun(store: Store): Promise<{ n: number; seconds: number }> {
  const out = { n: 0, seconds: 0 };
  for (const w of store.workers) {
    const text = await (await fetch(`${w.url}/metrics`)).text();
    for (const m of text.matchAll(/^msp_sync_duration_seconds_count\{[^}]*\} (\d+)$/gm)) out.n += Number(m[1]);
    for (const m of text.matchAll(/^msp_sync_duration_seconds_sum\{[^}]*\} (\S+)$/gm)) out.seconds += Number(m[1]);
  }
  return out;
}

/** Per connection: its resources synced ok and failed, and its last completion. */
async function syncProgress(store: Store): Promise<Map<string, { ok: number; failed: number; last: number }>> {
  const rows: { connection_id: string; ok: number; failed: number; last: Date | null }[] = await store.db.dataSource.query(
    `SELECT connection_id, COUNT(*) FILTER (WHERE last_status = 'ok')::int AS ok, COUNT(*) FILTER (WHERE last_status = 'failed')::int AS failed,
            MAX(last_synced_at) AS last FROM sync_states GROUP BY connection_id`);
  return new Map(rows.map((r) => [r.connection_id, { ok: r.ok, failed: r.failed, last: r.last ? new Date(r.last).getTime() : 0 }]));
}

/**
 * A first sync of each of `connections`, one job each queued at once (the workers started with
 * SYNC_INTERVAL_SECONDS=0 run nothing else): whether the queue emptied within `limitMs`.
 */
export async function runFirstSyncs(store: Store, connections: FleetConnection[], limitMs: number): Promise<boolean> {
  const t0 = Date.now();
  for (let i = 0; i < connections.length; i += 200) {
    await Promise.all(connections.slice(i, i + 200).map((c) => store.queue.add(
      'sync.connection', { tenantId: c.tenantId, connectionId: c.id }, { jobId: `fleet-initial-${c.id}`, attempts: 1 },
    )));
  }
  let finished = false;
  while (!finished && Date.now() - t0 < limitMs) {
    await sleep(500);
    const sync = (await store.queue.counts()).find((c) => c.name === 'sync.connection')!;
    finished = sync.waiting + sync.active + sync.delayed === 0;
  }
  return finished;
}

/** Phase A: every connection's first sync, one job each queued at once, with `workers` worker processes. */
async function initialSync(shared: Shared, store: Store, workers: number, extra: Record<string, string> = {}): Promise<{ seconds: number; finished: boolean; rate: number; complete: number; failed: number; peakRss: number; throttled: number; perConnector: string; cpuMsPerSync: number; cpu: string; busyShare: number }> {
  await startWorkers(shared, store, workers, { SYNC_INTERVAL_SECONDS: '0', ...extra });
  const rss = rssSampler(store);
  progress(`initial sync of ${store.connections.length} connections with ${workers} worker(s)`);
  const before = await vendorStats(shared);
  const cpu = cpuMeter(store, shared.vendors);
  const t0 = Date.now();
  const finished = await runFirstSyncs(store, store.connections, INITIAL_SYNC_LIMIT_MS);
  const stoppedAt = Date.now();
  const states = await syncProgress(store);
  const complete = store.connections.filter((c) => states.get(c.id)?.ok === c.resources).length;
  const failed = store.connections.filter((c) => (states.get(c.id)?.failed ?? 0) > 0).length;
  const last = Math.max(...[...states.values()].map((p) => p.last));
  const peakRss = rss.stop();
  const used = cpu();
  const after = await vendorStats(shared);
  await stopWorkers(store);
  // How long one connection's first sync took, by connector: its first resource's start to its last one's end.
  const spans: { connector: string; s: number; n: number }[] = await store.db.dataSource.query(
    `SELECT c.connector, AVG(EXTRACT(EPOCH FROM x.last - x.first))::float AS s, COUNT(*)::int AS n
       FROM (SELECT connection_id, MIN(last_attempt_at) AS first, MAX(last_synced_at) AS last FROM sync_states GROUP BY connection_id) x
       JOIN connections c ON c.id = x.connection_id GROUP BY c.connector ORDER BY c.connector`);
  const calls = after.byVendor;
  const perConnector = spans.map((x) => `${x.connector} ${x.s.toFixed(1)} s, ${Math.round(((calls[x.connector]?.requests ?? 0) - (before.byVendor[x.connector]?.requests ?? 0)) / x.n)} calls`).join('; ');
  const seconds = ((finished ? last : stoppedAt) - t0) / 1000;
  return {
    seconds, finished, rate: complete / seconds, complete, failed, peakRss, throttled: after.throttled - before.throttled, perConnector,
    cpuMsPerSync: used.workersMs / Math.max(1, complete + failed), cpu: used.text, busyShare: used.busyShare,
  };
}

/** Time allowed past the interval for a due sync to get a worker slot and run: seconds of calls at the vendors' latency. */
export const GRACE_MS = Number(process.env.BENCH_FLEET_GRACE_S ?? 15) * 1000;

/**
 * "Synced within its interval", measured here and only here, per resource: each resource of a connection has
 * its own interval (sync_states.interval_seconds, src/sync/freshness.ts) and was last confirmed current at
 * sync_states.checked_at (a sync, or a "changed since?" call that found nothing). A connection is within its
 * interval while every resource's age stays under its own interval plus GRACE_MS (a due check still waits
 * for a slot and takes its own time). `stalenessMs` is the connection's worst resource, expressed against the
 * connection's tick: tick + (age - own interval), so that it compares with intervalMs + GRACE_MS as before.
 */
async function syncedWithinInterval(store: Store, now: number): Promise<{ id: string; stalenessMs: number; intervalMs: number; within: boolean }[]> {
  const rows: { connection_id: string; overdue: number | null; n: number }[] = await store.db.dataSource.query(
    `SELECT connection_id, MAX(EXTRACT(EPOCH FROM (to_timestamp($1::double precision / 1000) - checked_at)) * 1000 - interval_seconds * 1000) AS overdue,
       COUNT(checked_at)::int AS n FROM sync_states GROUP BY connection_id`, [now]);
  const byId = new Map(rows.map((r) => [r.connection_id, r]));
  return store.connections.map((c) => {
    const r = byId.get(c.id);
    const stalenessMs = r && r.overdue != null && r.n === c.resources ? c.intervalMs + Number(r.overdue) : Infinity;
    return { id: c.id, stalenessMs, intervalMs: c.intervalMs, within: stalenessMs <= c.intervalMs + GRACE_MS };
  });
}

interface Change { tenant: number; tenantId: string; connectionId: string; table: string; targetId: string; before: string | null; at: number; seenAt?: number }

/**
 * The stored payload hash of each (connection, source id) of `table`, one statement for them all; by the
 * records' unique index (tenant first), not a scan, however many tenants the store holds.
 */
async function storedHashes(store: Store, table: string, keys: { tenantId: string; connectionId: string; sourceId: string }[]): Promise<Map<string, string>> {
  const rows: { connection_id: string; source_id: string; raw_hash: string }[] = await store.db.dataSource.query(
    `SELECT t.connection_id, t.source_id, t.raw_hash FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS k(tenant_id, connection_id, source_id)
       JOIN "${table}" t ON t.tenant_id = k.tenant_id AND t.connection_id = k.connection_id AND t.source_id = k.source_id`,
    [keys.map((k) => k.tenantId), keys.map((k) => k.connectionId), keys.map((k) => k.sourceId)]);
  return new Map(rows.map((r) => [`${r.connection_id}/${r.source_id}`, r.raw_hash]));
}

/** How a part watches the steady state (phase B here, and fleet-10k.ts on a store seeded as synced). */
export interface WatchOptions {
  /** Where its lines start (`fleet steady, 1 worker`) and what its progress lines say they are. */
  prefix: string;
  part: string;
  /** Intervals to watch: fewer, one at least, rather than run past the deadline. */
  intervals: number;
  /** The warm-up's longest (default an interval and its grace: phase B's first round is every first sync). */
  warmupMs?: number;
  /** The store was seeded as synced (fleet-10k.ts): no first round to wait for, only for nothing to be late. */
  seeded?: boolean;
  /** How often every connection's staleness is read (one statement over the whole of sync_states). */
  sampleEveryMs: number;
}

/** What a watch measured, besides its figures: for a part to work further figures out of. */
export interface WatchMeasured {
  /** Checks the workers ran in the window, the window and the workers' CPU meanwhile. */
  checks: number;
  windowMs: number;
  workersCpuMs: number;
  /** Slots in use in each sample (check seconds ended in it over its length: Little's law), and the slots there are. */
  slotsBusy: number[];
  slots: number;
}

/** Phase B: the scheduler for `opts.intervals` intervals with `workers` workers, while tenants change records. */
export async function steadyState(shared: Shared, store: Store, workers: number, deadline: number, opts: WatchOptions): Promise<{ figures: Record<string, unknown>; measured: WatchMeasured }> {
  const label = opts.prefix;
  const say = (line: string) => progress(line, opts.part);
  const interval = Math.max(...store.connections.map((c) => c.intervalMs));
  const started = Date.now();
  say(`${label}: starting (each worker places ${store.connections.length} schedules first)`);
  const startMs = await startWorkers(shared, store, workers, {});
  const rss = rssSampler(store, 1000);
  say(`${label}: workers up after ${(startMs / 1000).toFixed(0)} s`);
  // Warm-up: the first round (every schedule runs at once when placed: 3,000 first syncs, before which the
  // hot resources checked first wait and run late), then until nothing is late any more; an interval and
  // its grace after the workers were started at most. The steady state is measured from there.
  let firstRound = opts.seeded === true;
  let caughtUp = false;
  let firstRoundAt = started;
  while (!caughtUp && Date.now() - started < (opts.warmupMs ?? interval + GRACE_MS)) {
    const lags = await syncedWithinInterval(store, Date.now());
    if (!firstRound && lags.every((l) => l.stalenessMs <= Date.now() - started)) { firstRound = true; firstRoundAt = Date.now(); }
    caughtUp = firstRound && lags.every((l) => l.within);
    if (!caughtUp) await sleep(2000);
  }
  const before = await vendorStats(shared);
  const checksBefore = await checksRun(store);
  const cpu = cpuMeter(store, shared.vendors);
  const t0 = Date.now();
  // INTERVALS intervals, fewer (one at least) when the part would otherwise overrun its limit.
  const intervals = Math.max(1, Math.min(opts.intervals, Math.floor((deadline - Date.now() - GRACE_MS) / interval)));
  const windowMs = intervals * interval;
  const changesPlanned = Math.max(1, Math.round(CHANGE_SHARE * shared.tenants * intervals));
  // Changes stop an interval (or with one interval only, half of it) before the end, so each has that long to reach the store.
  const changeWindowMs = intervals > 1 ? windowMs - interval : windowMs / 2;
  const byTenant = new Map<string, FleetConnection>(store.connections.map((c) => [`${c.tenant}/${c.kind}`, c]));
  const changes: Change[] = [];
  const worst = new Map<string, number>();
  const stalenessSamples: number[] = [];
  const rssAtInterval: number[] = [];
  let random = 42;
  const next = () => (random = (random * 1103515245 + 12345) % 2147483648) / 2147483648;

  const makeChange = async (n: number) => {
    const side = n % 2 === 0 ? 'psa' : 'rmm';
    const tenant = Math.floor(next() * shared.tenants);
    const c = byTenant.get(`${tenant}/${side}`)!;
    const table = side === 'psa' ? 'tickets' : 'devices';
    const target = await (await fetch(`${shared.vendorsUrl}/fleet/target?tenant=${tenant}&side=${side}`)).json() as { target_id: string };
    const before = (await storedHashes(store, table, [{ tenantId: c.tenantId, connectionId: c.id, sourceId: target.target_id }])).get(`${c.id}/${target.target_id}`) ?? null;
    const res = await fetch(`${shared.vendorsUrl}/fleet/change`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tenant, side }) });
    const made = await res.json() as { target_id: string; at: number };
    changes.push({ tenant, tenantId: c.tenantId, connectionId: c.id, table, targetId: made.target_id, before, at: made.at });
  };
  // The changes not seen yet, a statement a table (hundreds may wait at once on a busy worker).
  const watchChanges = async () => {
    const unseen = changes.filter((ch) => !ch.seenAt);
    for (const table of new Set(unseen.map((ch) => ch.table))) {
      const mine = unseen.filter((ch) => ch.table === table);
      const now = await storedHashes(store, table, mine.map((ch) => ({ tenantId: ch.tenantId, connectionId: ch.connectionId, sourceId: ch.targetId })));
      for (const ch of mine) {
        const hash = now.get(`${ch.connectionId}/${ch.targetId}`);
        if (hash !== undefined && hash !== ch.before) ch.seenAt = Date.now();
      }
    }
  };

  // Which resources run late, and whether sync jobs wait for a slot: what a figure under 100 % comes from.
  const lateByResource = new Map<string, { late: number; worstS: number }>();
  let mostWaiting = 0;
  let lastDiagnosis = 0;
  const diagnose = async (now: number) => {
    const rows: { key: string; late: number; worst: number | null }[] = await store.db.dataSource.query(
      `SELECT c.connector || '/' || s.resource AS key,
         COUNT(*) FILTER (WHERE s.checked_at IS NULL OR EXTRACT(EPOCH FROM (to_timestamp($1::double precision / 1000) - s.checked_at)) * 1000 > s.interval_seconds * 1000 + $2)::int AS late,
         MAX(EXTRACT(EPOCH FROM (to_timestamp($1::double precision / 1000) - s.checked_at)) - s.interval_seconds) AS worst
       FROM sync_states s JOIN connections c ON c.id = s.connection_id GROUP BY 1`, [now, GRACE_MS]);
    for (const r of rows) {
      const was = lateByResource.get(r.key) ?? { late: 0, worstS: -Infinity };
      lateByResource.set(r.key, { late: Math.max(was.late, r.late), worstS: Math.max(was.worstS, Number(r.worst ?? Infinity)) });
    }
    say(`${label}, ${((now - t0) / 1000).toFixed(0)} s in: ${rows.reduce((n, r) => n + r.late, 0)} resources late`);
    const sync = (await store.queue.counts()).find((c) => c.name === 'sync.connection');
    mostWaiting = Math.max(mostWaiting, sync?.waiting ?? 0);
  };

  // Slots in use, sampled: each 10 s, the check seconds that ended in it over its length.
  const slotsBusy: number[] = [];
  let slotsAt = { at: t0, seconds: checksBefore.seconds };
  const sampleSlots = async (now: number) => {
    const { seconds } = await checksRun(store);
    slotsBusy.push((seconds - slotsAt.seconds) / ((now - slotsAt.at) / 1000));
    slotsAt = { at: now, seconds };
  };

  let made = 0;
  let lastSample = 0;
  let lastWatch = 0;
  while (Date.now() - t0 < windowMs) {
    const now = Date.now();
    while (made < changesPlanned && now - t0 >= (made * changeWindowMs) / changesPlanned) await makeChange(made++);
    if (now - lastWatch >= 500) { lastWatch = now; await watchChanges(); }
    if (now - slotsAt.at >= 10_000) await sampleSlots(now);
    if (now - lastSample >= opts.sampleEveryMs) {
      lastSample = now;
      for (const l of await syncedWithinInterval(store, now)) {
        worst.set(l.id, Math.max(worst.get(l.id) ?? 0, l.stalenessMs));
        stalenessSamples.push(l.stalenessMs);
      }
    }
    if (now - lastDiagnosis >= 10_000) { lastDiagnosis = now; await diagnose(now); }
    if (rssAtInterval.length < Math.floor((now - t0) / interval)) rssAtInterval.push(rss.samples.at(-1)?.bytes ?? NaN);
    await sleep(100);
  }
  rssAtInterval.push(rss.samples.at(-1)?.bytes ?? NaN);
  const used = cpu();
  const checksAfter = await checksRun(store);
  const checks = checksAfter.n - checksBefore.n;
  // Check slots in use on average (Little's law: checks a second times their mean duration).
  const slotsBusyMean = (checksAfter.seconds - checksBefore.seconds) / (windowMs / 1000);
  const [{ n: syncs }] = await store.db.dataSource.query(
    "SELECT COUNT(*)::int AS n FROM audit_entries WHERE action = 'sync.completed' AND created_at >= $1 AND created_at < $2", [new Date(t0), new Date()]);
  // The last changes get the grace besides to reach the store.
  const until = Date.now() + GRACE_MS + (intervals > 1 ? 0 : interval / 2);
  while (changes.some((c) => !c.seenAt) && Date.now() < until) { await watchChanges(); await sleep(500); }
  const after = await vendorStats(shared);
  const peakRss = rss.stop();
  const states = await syncProgress(store);
  await stopWorkers(store);

  const within = store.connections.filter((c) => (worst.get(c.id) ?? Infinity) <= c.intervalMs + GRACE_MS).length;
  const lags = changes.filter((c) => c.seenAt).map((c) => c.seenAt! - c.at);
  const failed = store.connections.filter((c) => (states.get(c.id)?.failed ?? 0) > 0).length;
  const slots = workers * Number(CONCURRENCY ?? DEFAULT_SYNC_CONCURRENCY);
  const measured: WatchMeasured = { checks, windowMs, workersCpuMs: used.workersMs, slotsBusy, slots };
  const figures = {
    [`${label}: synced within interval (goal 100 %)`]: `${(100 * within / store.connections.length).toFixed(1)} % (${within} of ${store.connections.length}; interval ${interval / 1000} s + ${GRACE_MS / 1000} s grace, ${intervals} interval(s) watched from ${((t0 - started) / 1000).toFixed(0)} s: ` +
      `${!firstRound ? 'the first round still unfinished' : `${opts.seeded ? 'seeded as synced' : `the first round took ${((firstRoundAt - started) / 1000).toFixed(0)} s`}, ${caughtUp ? 'nothing late after it' : 'some still late'}`})`,
    [`${label}: staleness p50/p95/max s`]: [percentile(stalenessSamples, 0.5), percentile(stalenessSamples, 0.95), Math.max(...worst.values())]
      .map((ms) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : 'never synced')).join(' / '),
    [`${label}: change->store lag p50/p95 s`]: `${(percentile(lags, 0.5) / 1000).toFixed(1)} / ${(percentile(lags, 0.95) / 1000).toFixed(1)} (${lags.length} of ${changes.length} changes seen)`,
    [`${label}: late resources (most at once, worst s past interval)`]: [...lateByResource].filter(([, v]) => v.late > 0)
      .sort((a, b) => b[1].late - a[1].late).slice(0, 6).map(([k, v]) => `${k} ${v.late}, ${v.worstS.toFixed(0)}`).join('; ') || 'none',
    [`${label}: sync jobs waiting for a slot, most at once`]: mostWaiting,
    [`${label}: worker peak RSS MiB (goal <500)`]: mib(peakRss),
    [`${label}: worker RSS at each interval MiB`]: rssAtInterval.map((b) => mib(b)).join(' / '),
    [`${label}: vendor requests/s, 429s (goal 0)`]: `${Math.round((after.requests - before.requests) / ((Date.now() - t0) / 1000))}, ${after.throttled - before.throttled}`,
    [`${label}: connections with a failed sync`]: failed,
    [`${label}: syncs that changed something /s`]: (syncs / (windowMs / 1000)).toFixed(1),
    [`${label}: checks/s, worker CPU ms per check, mean check s, slots busy`]: `${(checks / (windowMs / 1000)).toFixed(1)}, ${(used.workersMs / Math.max(1, checks)).toFixed(1)}, ` +
      `${((checksAfter.seconds - checksBefore.seconds) / Math.max(1, checks)).toFixed(2)}, ${slotsBusyMean.toFixed(0)} of ${workers} x ${Number(CONCURRENCY ?? DEFAULT_SYNC_CONCURRENCY)}`,
    [`${label}: CPU`]: used.text,
    [`${label}: worker start with every schedule placed s`]: Math.round(startMs / 1000),
    [`${label}: phase took s`]: Math.round((Date.now() - started) / 1000),
  };
  return { figures, measured };
}

async function redisReachable(url: string): Promise<boolean> {
  const r = new IORedis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  r.on('error', () => undefined);
  try { await r.connect(); return (await r.ping()) === 'PONG'; } catch { return false; } finally { r.disconnect(); }
}

/**
 * The vendors' process for `tenants` tenants and what the part's stores share; a string (why it is skipped)
 * when Redis is not reachable.
 */
export async function startFleet(databaseUrl: string, tenants: number, part: string): Promise<Shared | string> {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await redisReachable(redisUrl))) {
    console.log(`${part}: Redis not reachable at ${redisUrl}: skipped`);
    return `skipped (Redis not reachable at ${redisUrl})`;
  }
  // The vendors hold every tenant's datasets, about half a MiB each: ten thousand outgrow Node's default heap.
  const heap = tenants > 2000 ? [`--max-old-space-size=${Math.ceil(tenants / 1000) * 768}`] : [];
  const vendors = await startProcess('vendors', [...heap, path.join(__dirname, 'fleet-vendors.js')],
    { ...process.env, FLEET_TENANTS: String(tenants), FLEET_LATENCY_MS: String(LATENCY_MS) }, /fleet vendors on (http:\/\/\S+)/, 600_000);
  return {
    databaseUrl, redisUrl, vendors, vendorsUrl: vendors.url, tenants,
    encryptionKey: randomBytes(32).toString('base64'), adminToken: `adm_fleet_${randomBytes(16).toString('hex')}`,
  };
}

export async function benchFleet(databaseUrl: string): Promise<Record<string, unknown>> {
  const partStarted = Date.now();
  const started = await startFleet(databaseUrl, TENANTS, 'fleet');
  if (typeof started === 'string') return { fleet: started };
  const shared = started;
  const vendors = shared.vendors;
  const concurrency = Number(CONCURRENCY ?? DEFAULT_SYNC_CONCURRENCY);
  const out: Record<string, unknown> = {};
  let store: Store | null = null;
  try {
    store = await openStore(shared);
    out['fleet tenants / connections'] = `${TENANTS} / ${store.connections.length} (vendors answer in ${LATENCY_MS} ms)`;
    out['fleet sync concurrency / database pool per worker'] = `${concurrency} / ${databasePoolSize('worker', concurrency)}`;
    const steady = async (s: Store) => {
      for (const w of STEADY_WORKERS) {
        const label = `${w} worker${w > 1 ? 's' : ''}`;
        const { figures } = await steadyState(shared, s, w, partStarted + PART_LIMIT_MS,
          { prefix: `fleet steady, ${label}`, part: 'fleet', intervals: INTERVALS, sampleEveryMs: 2000 });
        for (const [k, v] of Object.entries(figures)) progress(`${k}: ${v}`);
        Object.assign(out, figures);
      }
    };
    // BENCH_FLEET_SPEEDUP=0: the steady state alone (its first round is then the fleet's first sync).
    if (process.env.BENCH_FLEET_SPEEDUP === '0') {
      await steady(store);
      return out;
    }
    // Each run on a store of its own: a run stopped at its limit leaves claims and queued jobs behind.
    const fresh = async () => { await closeStore(shared, store!); store = await openStore(shared); return store; };
    const one = await initialSync(shared, store, 1);
    progress(`initial sync, 1 worker: ${one.seconds.toFixed(1)} s, ${one.complete} complete (${one.rate.toFixed(1)}/s), ${one.failed} failed; ${one.cpu}`);
    const two = await initialSync(shared, await fresh(), 2);
    progress(`initial sync, 2 workers: ${two.seconds.toFixed(1)} s, ${two.complete} complete (${two.rate.toFixed(1)}/s), ${two.failed} failed; ${two.cpu}`);
    const n = store.connections.length;
    const initial = (r: typeof one) => `${r.finished ? `${r.seconds.toFixed(1)} s` : `stopped at ${r.seconds.toFixed(0)} s`}: ${r.complete} of ${n} synced (${r.rate.toFixed(1)}/s), ${r.failed} failed`;
    out['fleet initial sync, 1 worker'] = initial(one);
    out['fleet initial sync, 2 workers'] = initial(two);
    out['fleet speed-up 1 -> 2 workers, connections/s (goal >=1.7)'] = +(two.rate / one.rate).toFixed(2);
    // Everything of the run (workers, PostgreSQL, Redis, the vendors) shares this host's cores: at the machine
    // CPU a connection took with one worker, no number of workers syncs faster than the idle share allows.
    out['fleet speed-up this host leaves room for (1 / machine busy share, 1 worker)'] =
      `${(1 / Math.max(0.01, one.busyShare)).toFixed(2)} (${cpus().length} cores, ${Math.round(100 * one.busyShare)} % busy with one worker)`;
    out['fleet initial sync: worker peak RSS MiB, 1 / 2 workers'] = `${mib(one.peakRss)} / ${mib(two.peakRss)}`;
    out['fleet initial sync of one connection (1 worker)'] = one.perConnector;
    out['fleet initial sync: worker CPU ms per connection, 1 / 2 workers'] = `${Math.round(one.cpuMsPerSync)} / ${Math.round(two.cpuMsPerSync)}`;
    out['fleet initial sync, 1 worker: CPU'] = one.cpu;
    out['fleet initial sync, 2 workers: CPU'] = two.cpu;
    let throttled = one.throttled + two.throttled;
    // The same at a concurrency one worker cannot fill the host with: whether the work splits across
    // workers with nothing shared in the way (a host whose cores one worker already fills cannot say).
    if (SCALE_CONCURRENCY > 0) {
      const env = { SYNC_CONCURRENCY: String(SCALE_CONCURRENCY) };
      const oneS = await initialSync(shared, await fresh(), 1, env);
      const twoS = await initialSync(shared, await fresh(), 2, env);
      progress(`initial sync at ${SCALE_CONCURRENCY} a worker: ${oneS.rate.toFixed(1)}/s with 1, ${twoS.rate.toFixed(1)}/s with 2`);
      out[`fleet initial sync at SYNC_CONCURRENCY=${SCALE_CONCURRENCY}, 1 / 2 workers`] = `${initial(oneS)} / ${initial(twoS)}`;
      out[`fleet speed-up 1 -> 2 workers at SYNC_CONCURRENCY=${SCALE_CONCURRENCY}`] = `${(twoS.rate / oneS.rate).toFixed(2)} (CPU: ${oneS.cpu} / ${twoS.cpu})`;
      throttled += oneS.throttled + twoS.throttled;
    }
    out['fleet initial sync: 429s answered by the vendors'] = throttled;
    await steady(await fresh());
  } finally {
    if (store) await closeStore(shared, store).catch((err: Error) => console.error(`fleet: cleanup: ${err.message}`));
    await vendors.stop();
  }
  out['fleet part took s'] = Math.round((Date.now() - partStarted) / 1000);
  return out;
}
