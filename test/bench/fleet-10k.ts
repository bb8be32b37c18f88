/**
 * `fleet-10k` bench part (PostgreSQL and Redis only; `BENCH_PARTS=fleet-10k`, not in the default list): ten
 * thousand MSPs' steady state on one worker.
 *
 * BENCH_FLEET_10K_TENANTS tenants (10,000), each with a PSA, an RMM and a distributor connection (30,000), on
 * the fleet part's vendors (test/bench/fleet-vendors.ts, answering in BENCH_FLEET_LATENCY_MS = 100 ms) and its
 * api and worker processes (test/bench/fleet.ts). The first sync's own rate is the fleet part's to measure
 * (1,000 tenants): here the store starts as a fleet that has been running leaves it, without 30,000 first syncs.
 *
 *  1. Seed. The first twelve tenants (two of each PSA x RMM pairing: tenant i has PSA i mod 3, RMM i mod 2)
 *     are synced for real by a worker, one first-sync job a connection. Every vendor instance is seeded with
 *     the same datasets, so tenant i's first sync would leave what tenant i mod 6's left: each other tenant's
 *     records and sync states are copied from it in bulk (INSERT .. SELECT, the connection and tenant ids
 *     swapped), the records as the writer stored them (payload, hash, vendor stamps) and the states as the
 *     sync planned them (watermark, listing digest, interval). Tenants 6 to 11 against 0 to 5 check that
 *     premise: their records must be the same (`template records that differ`, goal 0). Then every state is
 *     staggered: connection k of n is taken as checked (k + 0.5) / n of each resource's interval ago, its
 *     records synced then and its next check one interval after, so checks fall due evenly, as in a fleet
 *     that has been running, not all at once.
 *  2. Watch: phase B of the fleet part (its steadyState, the same figures and the same 5 % of tenants
 *     changing records an interval) for one interval with one worker, after a warm-up of at most
 *     BENCH_FLEET_10K_WARMUP_S (60): the worker's first check of each resource since it started also lists
 *     its ids for the deletion pass (src/sync/deletions.ts), as any worker just started on a fleet does.
 *     Besides, the slots in use sampled every 10 s (share of SYNC_CONCURRENCY), and the worker cores N
 *     tenants need: computed, not measured, as the checks a second the fleet's plan asks at the end per
 *     tenant (from one check a connection per distinct interval of its resources to one check a resource,
 *     as due times drift apart), times N, times the worker CPU ms a check took in the window. The worker's
 *     cores only: PostgreSQL, Redis and the vendors share the host besides.
 *
 * A sync that changed something (an audit `sync.completed` of a scheduled check) comes of the tenants'
 * changes alone when the seed is what a first sync leaves: a seeded record found new or changed would
 * show there by the thousand.
 */
import { getMetadataArgsStorage } from 'typeorm';
import type { SyncResource } from '../../src/connectors/types';
import { ENTITY_BY_RESOURCE } from '../../src/sync/record-writer';
import { DEFAULT_SYNC_CONCURRENCY } from '../../src/config/config';
import {
  closeStore, LATENCY_MS, openStore, progress, runFirstSyncs, startFleet, startWorkers, steadyState, stopWorkers,
  type FleetConnection, type Shared, type Store,
} from './fleet';

const TENANTS = Number(process.env.BENCH_FLEET_10K_TENANTS ?? 10_000);
const WARMUP_MS = Number(process.env.BENCH_FLEET_10K_WARMUP_S ?? 60) * 1000;
/** The watch runs one interval at least, more only if they fit before this. */
const LIMIT_MS = Number(process.env.BENCH_FLEET_10K_LIMIT_S ?? 1080) * 1000;
/** Tenants synced for real: two of each of the six PSA x RMM pairings (the second six check the first). */
const PAIRINGS = 6;
const TEMPLATES = 2 * PAIRINGS;
const PART = 'fleet-10k';

/** Each record table's name and its resource (the writer's own map, as TypeORM names the tables). */
function recordTables(): { resource: SyncResource; table: string }[] {
  const tables = getMetadataArgsStorage().tables;
  return Object.entries(ENTITY_BY_RESOURCE).map(([resource, entity]) => ({
    resource: resource as SyncResource, table: tables.find((t) => t.target === entity)!.name!,
  }));
}

async function columnsOf(store: Store, table: string): Promise<string[]> {
  const rows: { column_name: string }[] = await store.db.dataSource.query(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position', [store.schema, table]);
  return rows.map((r) => r.column_name);
}

/**
 * A connection's copy source and stagger: `template` is the connection whose rows it gets (itself for a
 * template), `f` how far back in each resource's interval it was checked.
 */
interface Placement { template: string; templateTenant: string; connection: string; tenant: string; f: number }

/** The placements as the statements' parameters: an unnest of arrays, `m(template, template_tenant, connection_id, tenant_id, f)`. */
const PLACED = 'unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::float8[]) AS m(template, template_tenant, connection_id, tenant_id, f)';
const placedParams = (ps: Placement[]) =>
  [ps.map((p) => p.template), ps.map((p) => p.templateTenant), ps.map((p) => p.connection), ps.map((p) => p.tenant), ps.map((p) => p.f)];
/** What moves state `s`'s times (and its resource's records') to a check `m.f` of its interval ago. */
const shift = (s: string) => `((now() - m.f * ${s}.interval_seconds * interval '1 second') - ${s}.checked_at)`;
/** Timestamps of our own (not the vendor's: watermark, vendor_updated_at and the records' fields stay). */
const OUR_TIMES = new Set(['synced_at', 'checked_at', 'last_synced_at', 'last_attempt_at', 'next_check_at']);

/**
 * Copies the template's rows of `table` to each placed connection (`resource`: a record table, whose rows
 * move with that resource's state; none: sync_states itself), our own times shifted by the stagger.
 */
async function copyRows(store: Store, table: string, resource: SyncResource | null, ps: Placement[]): Promise<number> {
  const columns = (await columnsOf(store, table)).filter((c) => c !== 'id');
  const value = (c: string) => c === 'tenant_id' ? 'm.tenant_id' : c === 'connection_id' ? 'm.connection_id'
    : c === 'created_at' || c === 'updated_at' ? 'now()' : OUR_TIMES.has(c) ? `r."${c}" + x.shift` : `r."${c}"`;
  const from = resource === null
    ? `${PLACED} JOIN sync_states r ON r.connection_id = m.template CROSS JOIN LATERAL (SELECT ${shift('r')} AS shift) x`
    // The tenant too: the records' unique index leads with it, so each template's rows are one index range.
    : `${PLACED} JOIN sync_states s ON s.connection_id = m.template AND s.resource = $6 JOIN "${table}" r ON r.tenant_id = m.template_tenant AND r.connection_id = m.template ` +
      `CROSS JOIN LATERAL (SELECT ${shift('s')} AS shift) x`;
  // Counted through a CTE: the driver answers a bare INSERT with its rows (none), not its count.
  const [{ n }] = await store.db.dataSource.query(
    `WITH copied AS (INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) SELECT ${columns.map(value).join(', ')} FROM ${from} RETURNING 1)
     SELECT COUNT(*)::int AS n FROM copied`,
    resource === null ? placedParams(ps) : [...placedParams(ps), resource]);
  return n;
}

/** The templates' own rows staggered in place (they were checked just now). */
async function staggerInPlace(store: Store, table: string, resource: SyncResource | null, ps: Placement[]): Promise<void> {
  if (resource === null) {
    // Every SET reads the row as it was: one shift for all of a state's times.
    await store.db.dataSource.query(
      `UPDATE sync_states s SET ${[...OUR_TIMES].filter((c) => c !== 'synced_at').map((c) => `"${c}" = s."${c}" + ${shift('s')}`).join(', ')}
       FROM ${PLACED} WHERE s.connection_id = m.connection_id`, placedParams(ps));
    return;
  }
  await store.db.dataSource.query(
    `UPDATE "${table}" r SET synced_at = r.synced_at + ${shift('s')}
     FROM ${PLACED} JOIN sync_states s ON s.connection_id = m.connection_id AND s.resource = $6
     WHERE r.tenant_id = m.tenant_id AND r.connection_id = m.connection_id`, [...placedParams(ps), resource]);
}

/**
 * Rows of the second six templates that are not in the first six's same connection: records by source id and
 * hash, sync states by what the next check reads of them.
 */
async function templatesDiffer(store: Store, byTenant: Map<string, FleetConnection>): Promise<number> {
  let differ = 0;
  const compared = [
    ...recordTables().map(({ table }) => ({ table, columns: 'source_id, raw_hash, vendor_updated_at' })),
    { table: 'sync_states', columns: 'resource, watermark, last_status, last_mode, records_seen, quiet_checks, calls_per_check, quiet_listing, interval_seconds' },
  ];
  for (const { table, columns } of compared) {
    for (let t = PAIRINGS; t < Math.min(TEMPLATES, store.connections.length / 3); t++) {
      for (const kind of ['psa', 'rmm', 'distributor']) {
        const a = byTenant.get(`${t - PAIRINGS}/${kind}`)!.id;
        const b = byTenant.get(`${t}/${kind}`)!.id;
        const [{ n }] = await store.db.dataSource.query(
          `SELECT COUNT(*)::int AS n FROM ((SELECT ${columns} FROM "${table}" WHERE connection_id = $1 EXCEPT SELECT ${columns} FROM "${table}" WHERE connection_id = $2)
             UNION ALL (SELECT ${columns} FROM "${table}" WHERE connection_id = $2 EXCEPT SELECT ${columns} FROM "${table}" WHERE connection_id = $1)) d`, [a, b]);
        differ += n;
      }
    }
  }
  return differ;
}

/** Step 1: the store as a running fleet leaves it (the file's header). */
async function seedSynced(shared: Shared, store: Store): Promise<Record<string, unknown>> {
  const t0 = Date.now();
  const byTenant = new Map(store.connections.map((c) => [`${c.tenant}/${c.kind}`, c]));
  const templates = store.connections.filter((c) => c.tenant < TEMPLATES);
  // The schedule off: the worker runs the templates' first syncs and nothing else.
  await startWorkers(shared, store, 1, { SYNC_INTERVAL_SECONDS: '0' });
  const finished = await runFirstSyncs(store, templates, 300_000);
  await stopWorkers(store);
  const [{ failed }] = await store.db.dataSource.query("SELECT COUNT(*)::int AS failed FROM sync_states WHERE last_status <> 'ok'");
  if (!finished || failed > 0) throw new Error(`${PART}: the templates' first syncs did not all end ok (${failed} resources not ok)`);
  const differ = await templatesDiffer(store, byTenant);
  const syncedS = (Date.now() - t0) / 1000;
  progress(`templates synced in ${syncedS.toFixed(0)} s, ${differ} of their rows differ between tenants`, PART);

  const n = store.connections.length;
  const placements: Placement[] = store.connections.map((c, k) => {
    const template = c.tenant < TEMPLATES ? c : byTenant.get(`${c.tenant % PAIRINGS}/${c.kind}`)!;
    return { template: template.id, templateTenant: template.tenantId, connection: c.id, tenant: c.tenantId, f: (k + 0.5) / n };
  });
  const copies = placements.filter((p) => p.template !== p.connection);
  const own = placements.filter((p) => p.template === p.connection);
  const tables: { resource: SyncResource | null; table: string }[] = [...recordTables(), { resource: null, table: 'sync_states' }];
  let records = 0;
  let states = 0;
  // A few thousand connections a statement: each is one pass over the templates' rows, whatever their number.
  for (let i = 0; i < copies.length; i += 3000) {
    const chunk = copies.slice(i, i + 3000);
    for (const { resource, table } of tables) {
      const copied = await copyRows(store, table, resource, chunk);
      if (resource === null) states += copied; else records += copied;
    }
    progress(`seeded ${Math.min(copies.length, i + 3000)} of ${copies.length} connections`, PART);
  }
  // Records first: their shift is read from the state, which moves last.
  for (const { resource, table } of tables) await staggerInPlace(store, table, resource, own);
  // The planner's statistics as a first sync's writes would have left them by now (autovacuum's, sooner).
  await store.db.dataSource.query(`ANALYZE ${tables.map(({ table }) => `"${table}"`).join(', ')}`);
  const [{ total }] = await store.db.dataSource.query(
    `SELECT (${recordTables().map(({ table }) => `(SELECT COUNT(*) FROM "${table}")`).join(' + ')})::int AS total`);
  return {
    [`${PART} seed: templates' first syncs (${templates.length} connections)`]: `${syncedS.toFixed(1)} s`,
    [`${PART} seed: template rows (records, states) that differ between tenants (goal 0)`]: differ,
    [`${PART} seed: records / sync states copied`]: `${records} / ${states} in ${((Date.now() - t0) / 1000 - syncedS).toFixed(0)} s (${total} records stored)`,
  };
}

export async function benchFleet10k(databaseUrl: string): Promise<Record<string, unknown>> {
  const partStarted = Date.now();
  const started = await startFleet(databaseUrl, TENANTS, PART);
  if (typeof started === 'string') return { [PART]: started };
  const shared = started;
  const out: Record<string, unknown> = {};
  let store: Store | null = null;
  try {
    store = await openStore(shared);
    out[`${PART} tenants / connections`] = `${TENANTS} / ${store.connections.length} (vendors answer in ${LATENCY_MS} ms, ${Math.round((Date.now() - partStarted) / 1000)} s to start them and write the fleet)`;
    Object.assign(out, await seedSynced(shared, store));
    const { figures, measured } = await steadyState(shared, store, 1, partStarted + LIMIT_MS,
      { prefix: `${PART} steady, 1 worker`, part: PART, intervals: 1, warmupMs: WARMUP_MS, seeded: true, sampleEveryMs: 5000 });
    Object.assign(out, figures);
    const share = (busy: number) => `${(100 * busy / measured.slots).toFixed(0)} %`;
    const samples = measured.slotsBusy;
    out[`${PART} slots busy, share of SYNC_CONCURRENCY (10 s samples: mean / peak)`] = samples.length === 0 ? 'no sample'
      : `${share(samples.reduce((a, b) => a + b, 0) / samples.length)} / ${share(Math.max(...samples))} of ${measured.slots} (${samples.length} samples)`;
    // Computed, not measured: the checks the plan asks at the end (intervals as the watch left them), at what
    // a check cost the worker here. A check takes a connection's resources that are due together: at least
    // one check a connection for each distinct interval among its resources, at most one a resource (their
    // due times drift apart, a resource's next check counting from when its own read began).
    const [asked]: { least: number; most: number }[] = await store.db.dataSource.query(
      `SELECT (SELECT SUM(1.0 / i) FROM (SELECT DISTINCT connection_id, interval_seconds AS i FROM sync_states WHERE interval_seconds > 0) d)::float AS least,
              SUM(1.0 / interval_seconds)::float AS most FROM sync_states WHERE interval_seconds > 0`);
    const cpuMs = measured.workersCpuMs / Math.max(1, measured.checks);
    const interval = Math.max(...store.connections.map((c) => c.intervalMs));
    out[`${PART} checks the plan asks at the end (computed: a check a connection's interval .. a check a resource's)`] =
      `${asked.least.toFixed(0)} .. ${asked.most.toFixed(0)}/s (${Math.round(asked.least * interval / 1000)} .. ${Math.round(asked.most * interval / 1000)} per ${interval / 1000} s interval); ` +
      `${(measured.checks / (measured.windowMs / 1000)).toFixed(0)}/s run in the window`;
    for (const n of [10_000, 100_000]) {
      const [least, most] = [asked.least, asked.most].map((a) => (a / TENANTS) * n);
      out[`${PART} cores needed for ${n.toLocaleString('en-US')} tenants`] =
        `${(least * cpuMs / 1000).toFixed(1)} .. ${(most * cpuMs / 1000).toFixed(1)} worker cores (computed, not measured: ${least.toFixed(0)} .. ${most.toFixed(0)} checks/s x ${cpuMs.toFixed(1)} worker CPU ms a check measured)`;
    }
    out[`${PART} sync concurrency of the worker`] = Number(process.env.BENCH_FLEET_CONCURRENCY ?? DEFAULT_SYNC_CONCURRENCY);
  } finally {
    if (store) await closeStore(shared, store).catch((err: Error) => console.error(`${PART}: cleanup: ${err.message}`));
    await shared.vendors.stop();
  }
  out[`${PART} part took s`] = Math.round((Date.now() - partStarted) / 1000);
  return out;
}
