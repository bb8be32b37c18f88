/**
 * Exactly once when the process dies while the vendor is slow (docs/architecture.md, Writes),
 * on whichever runtime the suite runs, on each PSA whose reconcile finds a ticket differently: ConnectWise
 * (the marker in `externalXRef`, a `conditions` query) and Kaseya BMS (a marker line in `Details`, its
 * `Filter.Details` search). The service runs as a child process; each vendor is a simulator on its own port behind a loopback
 * proxy (test/support/vendor-proxy.ts).
 *
 * - The proxy holds the ticket create longer than the service takes to restart, then forwards it. The
 *   service is killed (SIGKILL) once the create is at the vendor, restarted, and the commit retried with the
 *   same key: the retry waits (answering 503 with Retry-After) until the dead process's request can no
 *   longer land, then finds it by its marker. One vendor ticket in every trial, and the answer says reconciled.
 *   A trial whose restart outlasted the margin (a host too busy for the trial to prove anything) is run again,
 *   at most three times, with the margin widened for the processes after it.
 * - A gateway answers 502 after the vendor created the ticket: an unknown outcome, not a refusal; the
 *   service looks the marker up and answers 201 with the ticket, reconciled.
 *
 * The vendor timeout and margin are shrunk by configuration so that the trials take seconds.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { createKaseyaBmsSimulator } from '../src/simulators/kaseyabms/simulator';
import { startStandalone } from '../src/simulators/kit';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { SANDBOX_TENANTS } from '../src/sandbox/sandbox.definition';
import { buildChildService, startServiceProcess } from './support/child-service';
import { startVendorProxy, type VendorProxy } from './support/vendor-proxy';
import { dropSchema } from '../src/db/database';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';

/**
 * How long after its timeout the vendor may still carry out a request (VENDOR_LANDING_MARGIN_MS): 5 s, or
 * three times a restart of the service where that is longer (a slow or busy host), so that it outlasts one
 * (a restart under the two test runs side by side took about 2.4 times the one measured here). The proxy holds
 * the create until the restarted service has answered; a create held past the margin proves nothing.
 */
let landingMarginMs = 5000;
const ADMIN = `adm_crash_${uniqueSuffix()}${uniqueSuffix()}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The part of a vendor simulator the trials use: started on its own port, seeded, its records read back. */
type CrashSimulator = Parameters<typeof startStandalone>[0] & {
  seed(instance: string, fixtures: Record<string, unknown[]>): void;
  list(instance: string, resource: never): Record<string, unknown>[];
};

/**
 * A PSA the trials run on, as data: its simulator and sandbox tenant (the connection's path and credentials are
 * that tenant's in fixtures/sandbox.json), the path of its ticket create (what the proxy holds), and where its
 * records keep a ticket's summary and id and a company's name.
 */
interface CrashVendor {
  connector: 'connectwise' | 'kaseyabms';
  /** Kill -9 trials: the fence under test is the same on both; ConnectWise, the first, runs more. */
  trials: number;
  sandboxTenant: string;
  simulator: () => CrashSimulator;
  createPath: string;
  tickets: { summary: string; id: string };
  companies: { resource: string; name: string };
}

const VENDORS: CrashVendor[] = [
  {
    connector: 'connectwise', trials: 10, sandboxTenant: 'sandbox-alpha', simulator: () => createConnectWiseSimulator({ controlToken: ADMIN }),
    createPath: '/service/tickets', tickets: { summary: 'summary', id: 'id' }, companies: { resource: 'companies', name: 'name' },
  },
  {
    connector: 'kaseyabms', trials: 5, sandboxTenant: 'sandbox-gamma', simulator: () => createKaseyaBmsSimulator({ controlToken: ADMIN }),
    createPath: '/v2/servicedesk/tickets', tickets: { summary: 'Title', id: 'Id' }, companies: { resource: 'accounts', name: 'AccountName' },
  },
];

/** Per vendor, once the service runs: its simulator behind its proxy, an MSP on it and the key of an ISV that may create tickets there. */
interface CrashTarget {
  proxy: VendorProxy;
  tenantId: string;
  isvKey: string;
  companyName: string;
  /** The vendor's tickets with this summary, by vendor id. */
  ticketsWith(summary: string): string[];
  close(): Promise<void>;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'write-crash-'));
const schema = `t_crash_${uniqueSuffix()}`;
const queuePrefix = `crash-${uniqueSuffix()}`;
const env: Record<string, string> = {
  SANDBOX: 'false', ADMIN_TOKEN: ADMIN, ENCRYPTION_KEY: randomBytes(32).toString('base64'), WEBHOOK_ALLOW_LOOPBACK: 'true',
  RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURES_PER_MINUTE: '100000', LOG_LEVEL: 'error',
  // A commit waits 2 s (it answers by +1.5 s), a vendor request times out after 2 s and the vendor may carry
  // it out up to the margin after that (5 s: what the dead process sent lands by +8.5 s at the latest). The
  // margin outlasts a restart (the proxy holds the create until the restarted service has answered once).
  WRITE_WAIT_MS: '2000', VENDOR_TIMEOUT_MS: '2000', VENDOR_LANDING_MARGIN_MS: String(landingMarginMs),
  INSTANCE_HEARTBEAT_MS: '300', QUEUE_LOCK_MS: '2000', QUEUE_STALLED_MS: '1000',
  ...(runtime.databaseUrl
    ? { DATABASE_URL: runtime.databaseUrl, REDIS_URL: runtime.redisUrl!, DATABASE_SCHEMA: schema, QUEUE_PREFIX: queuePrefix }
    : { DATA_DIR: dataDir }),
};

let service: { child: ChildProcess; url: string } | null = null;
const targets = new Map<string, CrashTarget>();

async function call(pathname: string, init: { method?: string; json?: unknown; key?: string; admin?: boolean } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.key) headers['x-api-key'] = init.key;
  if (init.admin) headers.authorization = `Bearer ${ADMIN}`;
  const res = await fetch(`${service!.url}${pathname}`, { method: init.method ?? 'GET', headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
  const r = await call('/graphql', { method: 'POST', json: { query, variables }, admin: true });
  if (r.body.errors) throw new Error(JSON.stringify(r.body.errors));
  return r.body.data;
};

/** kill -9 of the service, and its start again with `env`; answers how long the start took (ms). */
async function killAndRestart(): Promise<number> {
  service!.child.kill('SIGKILL');
  await new Promise((r) => service!.child.once('exit', r));
  const starting = Date.now();
  service = await startServiceProcess(env);
  return Date.now() - starting;
}

beforeAll(async () => {
  buildChildService();
  service = await startServiceProcess(env);
  // One restart as the trials make them, timed: the margin the trials' services start with.
  landingMarginMs = Math.max(landingMarginMs, 3 * await killAndRestart());
  env.VENDOR_LANDING_MARGIN_MS = String(landingMarginMs);
  // Started again with that margin: the first trial's process dies holding a create, and the margin it
  // recorded for it is the vendor's promise the retry waits out. (With the 5 s it had, a create the proxy
  // held past it landed beside the retry's own: two tickets, the vendor's broken promise, not ours.)
  await killAndRestart();
  for (const vendor of VENDORS) targets.set(vendor.connector, await startTarget(vendor));
}, 240_000);

/** A vendor's simulator (seeded from its sandbox fixtures) behind a proxy, an MSP connected to it through the proxy, and an ISV granted ticket creates there. */
async function startTarget(vendor: CrashVendor): Promise<CrashTarget> {
  const { connector, sandboxTenant } = vendor;
  const connectionDef = SANDBOX_TENANTS.find((t) => t.slug === sandboxTenant)!.connections.find((c) => c.connector === connector)!;
  const fixtures = loadVendorFixtures(sandboxTenant, connector);
  const sim = vendor.simulator();
  sim.seed(sandboxTenant, fixtures.resources);
  const rows = (resource: string) => sim.list(sandboxTenant, resource as never);
  const server = await startStandalone(sim);
  const proxy = await startVendorProxy(new URL(server.url).origin, vendor.createPath);
  const tenantId = (await graphql('mutation($n: String!, $s: String!) { create_tenant(name: $n, slug: $s) { id } }', { n: `Crash MSP on ${connector}`, s: `crash-${connector}` })).create_tenant.id;
  const connection = (await graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
    input: {
      tenant_id: tenantId, kind: 'psa', connector, base_url: `${proxy.url}${connectionDef.path}`, credentials: connectionDef.credentials,
      status_mapping: Object.entries(fixtures.statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })),
    },
  })).create_connection.id;
  const isv = (await graphql('mutation($n: String!) { create_isv(name: $n) { id } }', { n: `Crash ISV on ${connector}` })).create_isv.id;
  const isvKey = (await graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "crash") { key } }', { id: isv })).issue_api_key.key;
  await graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: connection });
  expect((await call(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key: isvKey })).body.ok).toBe(true);
  const names = rows(vendor.companies.resource).map((c) => c[vendor.companies.name]);
  const { tickets } = vendor;
  return {
    proxy, tenantId, isvKey,
    companyName: names.find((n) => names.filter((x) => x === n).length === 1) as string,
    ticketsWith: (summary) => rows('tickets').filter((t) => t[tickets.summary] === summary).map((t) => String(t[tickets.id])),
    close: async () => { await proxy.close(); await server.close(); },
  };
}

afterAll(async () => {
  if (service?.child.exitCode === null) service.child.kill('SIGKILL');
  for (const target of targets.values()) await target.close();
  rmSync(dataDir, { recursive: true, force: true });
  // The killed service never closed its store: its schema and queue keys go here.
  if (runtime.databaseUrl) await dropSchema(runtime.databaseUrl, schema);
  await forgetRedisKeys(runtime.redisUrl, `${queuePrefix}:`);
});

/** Retries the commit with its key until it is answered 201; every answer before is a documented "not yet". */
async function retryUntilCreated(target: CrashTarget, body: Record<string, unknown>) {
  const notYet: { status: number; code: string; retryAfter: string | null }[] = [];
  for (let i = 0; i < 30; i++) {
    const res = await call(`/tenants/${target.tenantId}/tickets`, { method: 'POST', json: body, key: target.isvKey });
    if (res.status === 201) return { res, notYet };
    notYet.push({ status: res.status, code: res.body?.code, retryAfter: res.headers.get('retry-after') });
    expect([[409, 'idempotency_in_progress'], [503, 'vendor_unavailable']]).toContainEqual([res.status, res.body?.code]);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    await sleep(Math.min(retryAfter, 10) * 1000);
  }
  throw new Error(`no 201 after 30 tries: ${JSON.stringify(notYet)}`);
}

describe.each(VENDORS.map((v) => [v.connector, v] as const))('on %s', (connector, { trials }) => {
  const target = () => targets.get(connector)!;

  it(`a commit whose process dies while the vendor holds its create lands once: ${trials} trials of kill -9 while the vendor holds the create, restart, same-key retry`, async () => {
    const { proxy, tenantId, isvKey, companyName, ticketsWith } = target();
    const outcomes: { reconciled: boolean; tickets: number; waited: number; held: number }[] = [];
    // A trial whose restart outlasted the margin its process was started with proves nothing (the host broke the
    // vendor's promise, not the service): it is told apart, the margin widened for the processes after it, and
    // another trial run in its place, at most SLOW_TRIALS_ALLOWED times.
    const SLOW_TRIALS_ALLOWED = 3;
    const slow: { held: number; margin: number }[] = [];
    for (let trial = 0; outcomes.length < trials && trial < trials + SLOW_TRIALS_ALLOWED; trial++) {
      const summary = `Crash trial ${trial} ${uniqueSuffix()}`;
      const body = { company_name: companyName, summary, dry_run: false, idempotency_key: `crash-${trial}-${uniqueSuffix()}` };
      const createsBefore = proxy.creates;
      // The (slow) vendor holds the create until the restarted service has answered the retry once.
      let forward!: () => void;
      proxy.mode = { kind: 'hold', until: new Promise<void>((r) => { forward = r; }) };
      void call(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body, key: isvKey }).catch(() => undefined);
      // Killed once the create is at the vendor, however long a loaded host takes to send it (a fixed 0.3 s
      // was not always enough when the two CI passes ran their slowest files together).
      await proxy.createsReached(createsBefore + 1, 30_000);
      await sleep(100);
      expect(proxy.creates).toBe(createsBefore + 1); // the one create is at the vendor
      const restartMs = await killAndRestart();
      proxy.mode = { kind: 'pass' };
      // Nothing of the dead process has landed yet: a look-up now finds nothing.
      expect(ticketsWith(summary)).toHaveLength(0);
      const first = await call(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body, key: isvKey });
      await sleep(200);
      forward();
      await proxy.settled(); // the dead process's create has reached the vendor, and was carried out
      // Within the vendor's promise (the client's timeout plus its margin), or this trial proves nothing.
      const held = proxy.held[proxy.held.length - 1];
      if (held >= 2000 + landingMarginMs) {
        slow.push({ held, margin: landingMarginMs });
        await retryUntilCreated(target(), body).catch(() => undefined);
        landingMarginMs = Math.max(landingMarginMs, 3 * restartMs);
        env.VENDOR_LANDING_MARGIN_MS = String(landingMarginMs);
        await killAndRestart();
        continue;
      }
      const { res, notYet } = first.status === 201 ? { res: first, notYet: [] } : await retryUntilCreated(target(), body);
      const landed = ticketsWith(summary);
      outcomes.push({ reconciled: res.body.results[0].reconciled, tickets: landed.length, waited: notYet.length, held });
      if (first.status !== 201) expect([first.status, first.body.code, Number(first.headers.get('retry-after')) > 0]).toEqual([503, 'vendor_unavailable', true]);
      expect(landed).toEqual([String(res.body.ticket_ref)]);
      expect(res.body.results[0].reconciled).toBe(true);
      // The replay answers the same, and still one ticket.
      const replay = await call(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body, key: isvKey });
      expect(replay.body).toMatchObject({ ticket_ref: res.body.ticket_ref, idempotent_replay: true });
      expect(ticketsWith(summary)).toHaveLength(1);
    }
    process.stdout.write(`write-crash (${runtime.name}, ${connector}): ${JSON.stringify(outcomes)}${slow.length ? `; restarts slower than the margin: ${JSON.stringify(slow)}` : ''}\n`);
    expect(outcomes.filter((o) => o.tickets === 1 && o.reconciled)).toHaveLength(trials);
  }, (trials + 3) * 45_000 + 60_000);

  it('a gateway 502 after the vendor created the ticket is an unknown outcome: reconciled by marker, answered 201, one ticket', async () => {
    const { proxy, tenantId, isvKey, companyName, ticketsWith } = target();
    for (let trial = 0; trial < 3; trial++) {
      const summary = `Gateway trial ${trial} ${uniqueSuffix()}`;
      const body = { company_name: companyName, summary, dry_run: false, idempotency_key: `gateway-${trial}-${uniqueSuffix()}` };
      proxy.mode = { kind: 'gateway502' };
      const res = await call(`/tenants/${tenantId}/tickets`, { method: 'POST', json: body, key: isvKey });
      proxy.mode = { kind: 'pass' };
      await proxy.settled();
      expect([res.status, res.body.code]).toEqual([201, undefined]);
      expect(res.body.results[0]).toMatchObject({ ok: true, reconciled: true, ticket_ref: res.body.ticket_ref });
      expect(ticketsWith(summary)).toEqual([String(res.body.ticket_ref)]);
    }
  }, 120_000);
});
