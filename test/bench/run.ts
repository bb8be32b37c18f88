/**
 * `npm run bench`: side-by-side measurements in one run, on the embedded default and on PostgreSQL
 * (when reachable: DATABASE_URL, or postgres://postgres@127.0.0.1:5432/test).
 *  (a) GET tickets, limit 100, tenant with 50,000 tickets, 32 clients: service vs a bare handler that
 *      reads the same rows with one SQL query (ratio of requests per second; target >= 0.8 on PostgreSQL);
 *  (b) full sync of 50,000 tickets from the ConnectWise simulator vs a plain batched INSERT of the same
 *      rows (ratio of records per second; target >= 0.5);
 *  (c) peak RSS of the process running the service.
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

const TICKETS = Number(process.env.BENCH_TICKETS ?? 50_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONCURRENCY = 32;
const INSTANCE = 'bench';

interface LoadResult { requests: number; errors: number; rps: number; p50: number; p99: number }

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

async function setupBenchTenant(svc: RunningServer): Promise<{ tenantId: string; key: string; connectionId: string }> {
  const s = svc.services;
  const cw = s.simulators!.connectwise as unknown as { seed: (i: string, f: Record<string, unknown[]>) => void; grow: (i: string, r: string, n: number) => void };
  const fixtures = loadVendorFixtures('sandbox-alpha', 'connectwise');
  cw.seed(INSTANCE, { ...fixtures.resources, tickets: [] });
  cw.grow(INSTANCE, 'tickets', TICKETS);
  const isv = await s.admin.createIsv('Bench ISV');
  const { key } = await s.admin.issueApiKey(isv.id, 'bench');
  const tenant = await s.admin.createTenant('Bench MSP', 'bench-msp');
  const conn = await s.admin.createConnection({
    tenantId: tenant.id, kind: 'psa', connector: 'connectwise',
    baseUrl: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
    credentials: { companyId: INSTANCE, publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
    statusMapping: fixtures.statusMapping,
  });
  await s.admin.setGrant(isv.id, conn.id, ['psa.ticket.create']);
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
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', SYNC_INTERVAL_SECONDS: '0' }, {
    port: 0, ephemeral: true, databaseUrl, redisUrl: undefined, queuePrefix: `bench-${Date.now()}`,
  });
  const svc = await startServer(config, {
    database: databaseUrl ? { databaseUrl, schema: `bench_${Date.now()}`, poolSize: 16 } : {},
    logger: createLogger('warn'),
    mount: mountBaseline,
  });
  try {
    const { tenantId, key, connectionId } = await setupBenchTenant(svc);
    // (b) full sync vs plain INSERT
    const t0 = process.hrtime.bigint();
    const report = await svc.services.sync.syncConnection(connectionId);
    const syncSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const synced = report.resources.find((r) => r.resource === 'tickets')!.fetched;
    const syncRate = synced / syncSeconds;
    const insertRate = await plainInsert(svc, tenantId);

    // (a) reads, service vs baseline, one after the other in the same process
    const service = await load(`${svc.url}/tenants/${tenantId}/tickets?limit=100`, { 'x-api-key': key }, 'next_cursor', 'cursor');
    const baseline = await load(`${svc.url}/__bench/baseline/tickets?tenant_id=${tenantId}`, {}, 'last_id', 'after');
    return {
      runtime: name,
      'tickets.synced': synced,
      'sync.records_per_s': Math.round(syncRate),
      'plain_insert.records_per_s': Math.round(insertRate),
      'sync/insert ratio (>=0.5)': +(syncRate / insertRate).toFixed(2),
      'GET tickets rps': Math.round(service.rps),
      'GET tickets p50/p99 ms': `${service.p50.toFixed(1)} / ${service.p99.toFixed(1)}`,
      'baseline rps': Math.round(baseline.rps),
      'baseline p50/p99 ms': `${baseline.p50.toFixed(1)} / ${baseline.p99.toFixed(1)}`,
      'read ratio (>=0.8 on PostgreSQL)': +(service.rps / baseline.rps).toFixed(2),
      errors: service.errors + baseline.errors,
    };
  } finally {
    await svc.close();
  }
}

async function postgresReachable(url: string): Promise<boolean> {
  const c = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try { await c.connect(); await c.end(); return true; } catch { return false; }
}

(async () => {
  const results: Record<string, unknown>[] = [];
  results.push(await benchRuntime('embedded (PGlite)', undefined));
  const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  if (await postgresReachable(pgUrl)) results.push(await benchRuntime('PostgreSQL', pgUrl));
  else console.log(`PostgreSQL not reachable at ${pgUrl}: skipped`);
  const rss = process.resourceUsage().maxRSS / 1024;
  for (const r of results) {
    console.log(`\n## ${r.runtime}`);
    for (const [k, v] of Object.entries(r)) if (k !== 'runtime') console.log(`  ${k.padEnd(36)} ${v}`);
  }
  console.log(`\npeak RSS of the service process: ${rss.toFixed(0)} MiB`);
  process.exit(0);
})().catch((err) => { console.error(err); process.exit(1); });
