/**
 * Bench parts that need the service in a process of its own:
 *  - `rss`: peak RSS of the service process alone under the read load. The vendor simulator (50,000
 *    tickets) runs here, in the bench process, and the service (SANDBOX=false, so no simulators in it)
 *    in a child process that syncs them over HTTP and then serves 32 readers; its RSS is sampled from
 *    /proc while it does, and its peak (VmHWM) read at the end.
 *  - `fuzz`: the fuzzer generated from /openapi.json (test/support/openapi-fuzz.ts) at >= 10,000
 *    requests against a sandbox service: answers that are 5xx, error bodies outside the envelope,
 *    answers the OpenAPI does not document.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { createSandboxSimulators, mountSimulators } from '../../src/simulators';
import { FuzzRunner } from '../support/openapi-fuzz';
import { dropSchema } from '../../src/db/database';

const mib = (kb: number) => Math.round(kb / 1024);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address() as net.AddressInfo; s.close(() => resolve(port)); });
    s.on('error', reject);
  });
}

/** The child processes of `pid` (the embedded database process of the service). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** VmRSS or VmHWM of a process, in KiB. */
function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

interface ServiceChild { child: ChildProcess; url: string; adminToken: string; out: () => string; stop(): Promise<void> }

async function startServiceProcess(databaseUrl: string | undefined, env: Record<string, string> = {}): Promise<ServiceChild> {
  const port = await freePort();
  const adminToken = `adm_bench_${randomBytes(12).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-svc-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  // Started the way `npm start` starts it (its script without the build), so the bench measures
  // the process users run, heap cap included.
  const root = path.join(__dirname, '..', '..', '..');
  const start = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const childEnv: Record<string, string> = {
    ...(process.env as Record<string, string>), PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDir, ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'warn', SYNC_INTERVAL_SECONDS: '0',
    RATE_LIMIT_PER_MINUTE: '100000000', AUTH_FAILURES_PER_MINUTE: '100000000', ...env,
  };
  delete childEnv.REDIS_URL;
  if (databaseUrl) Object.assign(childEnv, { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema });
  else delete childEnv.DATABASE_URL;
  const child = spawn('sh', ['-c', `exec ${start}`], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${out}`)), 180_000);
    child.stdout!.on('data', (d) => { out += d; if (out.includes('listening on')) { clearTimeout(timer); resolve(); } });
    child.stderr!.on('data', (d) => { out += d; });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`service exited ${code}: ${out}`)); });
  });
  return {
    child, url: `http://127.0.0.1:${port}`, adminToken, out: () => out,
    async stop() {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      // The service's schema goes with it, as the bench's other schemas do (dropSchemaOnClose): each run
      // would otherwise leave a synced 50,000-ticket tenant behind in the database it was pointed at.
      if (databaseUrl) await dropSchema(databaseUrl, schema);
    },
  };
}

async function graphql(svc: ServiceChild, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const res = await fetch(`${svc.url}/graphql`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.adminToken}` }, body: JSON.stringify({ query, variables }),
  });
  const body = await res.json() as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(`graphql: ${JSON.stringify(body.errors).slice(0, 500)}`);
  return body.data;
}

export async function benchServiceRss(
  databaseUrl: string | undefined, tickets: number,
  load: (url: string, headers: Record<string, string>, cursorField: string, cursorParam: string) => Promise<{ rps: number; p50: number; p99: number; errors: number }>,
): Promise<Record<string, unknown>> {
  // The vendor, in this process.
  const sims = createSandboxSimulators(`bench-control-${randomBytes(4).toString('hex')}`);
  const app = express();
  mountSimulators(app, sims);
  const vendor = await new Promise<import('node:http').Server>((r) => { const s = app.listen(0, '127.0.0.1', () => r(s)); });
  const vendorUrl = `http://127.0.0.1:${(vendor.address() as net.AddressInfo).port}`;
  const cw = sims.connectwise as unknown as { seed: (i: string, f: Record<string, unknown[]>) => void; grow: (i: string, r: string, n: number) => void };
  const fixtures = loadVendorFixtures('sandbox-alpha', 'connectwise');
  cw.seed('rss', { ...fixtures.resources, tickets: [] });
  cw.grow('rss', 'tickets', tickets);

  const svc = await startServiceProcess(databaseUrl, { SANDBOX: 'false', WEBHOOK_ALLOW_LOOPBACK: 'true' }); // the vendor is this process, on loopback
  const pid = svc.child.pid!;
  const samples: number[] = [];
  const sampler = setInterval(() => { try { samples.push(procKb(pid, 'VmRSS')); } catch { /* exited */ } }, 100);
  try {
    const startKb = procKb(pid, 'VmRSS');
    const isv = (await graphql(svc, 'mutation { create_isv(name: "RSS ISV") { id } }')).create_isv.id;
    const key = (await graphql(svc, 'mutation($id: ID!) { issue_api_key(isv_id: $id, label: "rss") { key } }', { id: isv })).issue_api_key.key;
    const tenant = (await graphql(svc, 'mutation { create_tenant(name: "RSS MSP", slug: "rss-msp") { id } }')).create_tenant.id;
    const conn = (await graphql(svc, 'mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenant, kind: 'psa', connector: 'connectwise', base_url: `${vendorUrl}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
        credentials: { companyId: 'rss', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' } },
    })).create_connection.id;
    await graphql(svc, 'mutation($isv: ID!, $c: ID!) { set_grant(isv_id: $isv, connection_id: $c, keys: ["psa.ticket.events"]) { id } }', { isv, c: conn });
    let sync = await fetch(`${svc.url}/tenants/${tenant}/sync`, { method: 'POST', headers: { 'x-api-key': key } });
    // A sync longer than SYNC_WAIT_MS answers 202 with its poll; the poll waits again (bounded: 60 polls).
    for (let polls = 0; sync.status === 202 && polls < 60; polls++) {
      const { poll } = await sync.json() as { poll: string };
      sync = await fetch(`${svc.url}${poll}`, { headers: { 'x-api-key': key } });
    }
    if (sync.status !== 200) throw new Error(`sync answered ${sync.status}: ${await sync.text()}`);
    const afterSyncKb = procKb(pid, 'VmRSS');
    const peakSyncKb = procKb(pid, 'VmHWM');
    const before = samples.length;
    const reads = await load(`${svc.url}/tenants/${tenant}/tickets?limit=100`, { 'x-api-key': key }, 'next_cursor', 'cursor');
    const duringReads = samples.slice(before);
    const database = childrenOf(pid)[0];
    return {
      'service process RSS at start MiB': mib(startKb),
      'service process RSS after syncing MiB': `${mib(afterSyncKb)} (peak during sync ${mib(peakSyncKb)})`,
      'service process peak RSS under reads MiB (<300)': mib(Math.max(...duringReads)),
      'service process peak RSS overall MiB': mib(procKb(pid, 'VmHWM')),
      // The embedded default runs PGlite in a child process (src/db/embedded-cluster.ts), as PostgreSQL is one on the other runtime.
      'embedded database process peak RSS MiB': database ? mib(procKb(database, 'VmHWM')) : 'none (PostgreSQL server)',
      'reads in that run: rps / p50 / p99 ms': `${Math.round(reads.rps)} / ${reads.p50.toFixed(1)} / ${reads.p99.toFixed(1)} (${reads.errors} errors)`,
    };
  } finally {
    clearInterval(sampler);
    await svc.stop();
    await new Promise((r) => vendor.close(r));
  }
}

export async function benchFuzz(databaseUrl: string | undefined, total: number): Promise<Record<string, unknown>> {
  const svc = await startServiceProcess(databaseUrl, { SANDBOX: 'true', WEBHOOK_ALLOW_LOOPBACK: 'false' });
  try {
    const tenants = await (await fetch(`${svc.url}/tenants`, { headers: { 'x-api-key': 'sk_sandbox_0000000000000000000000000000dev' } })).json() as { tenants: { id: string; name: string }[] };
    const alpha = tenants.tenants.find((t) => /alpha/i.test(t.name))!;
    const beta = tenants.tenants.find((t) => /beta/i.test(t.name))!;
    const doc: any = await (await fetch(`${svc.url}/openapi.json`)).json();
    const operations = Object.values(doc.paths as Record<string, object>).reduce((n, m) => n + Object.keys(m).length, 0);
    const runner = new FuzzRunner(doc, {
      baseUrl: svc.url, tenantIds: [alpha.id, beta.id], isvKey: 'sk_sandbox_0000000000000000000000000000dev',
      mspKey: /MSP key (sk_msp_[A-Za-z0-9_]+)/.exec(svc.out().split('\n').find((l) => l.includes(alpha.id)) ?? '')?.[1] ?? '',
    });
    const t0 = Date.now();
    const mcp = Math.ceil(total / 10);
    const report = await runner.run({ perOperation: Math.ceil(total / operations), seed: 42, concurrency: 8, percentPaths: 3, mcp });
    const seconds = (Date.now() - t0) / 1000;
    const show = (xs: { status: number; label: string }[]) => (xs.length ? `${xs.length} (first: ${xs[0].status} ${xs[0].label})` : '0');
    return {
      'fuzz requests (operations x cases)': `${report.requests} (${operations} x ${Math.ceil(total / operations)})`,
      'fuzz answers 5xx (500 or undocumented)': show(report.serverErrors),
      'fuzz error bodies outside the envelope': show(report.outsideEnvelope),
      'fuzz answers the OpenAPI does not document': show(report.undocumented),
      'fuzz percent-encoded path requests (not 401/404)': `${report.percentPathRequests} (${show(report.percentPathUnexpected)})`,
      'fuzz MCP JSON-RPC requests': report.mcpRequests,
      'fuzz MCP JSON-RPC internal errors (-32603)': show(report.rpcInternalErrors),
      'fuzz statuses': Object.entries(report.byStatus).map(([s, n]) => `${s}:${n}`).join(' '),
      'fuzz requests/s': Math.round(report.requests / seconds),
    };
  } finally {
    await svc.stop();
  }
}
