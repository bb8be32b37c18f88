/**
 * One API budget per connection (docs/architecture.md, Vendor API budget), over HTTP against the Autotask simulator,
 * which counts every request and the most in flight at once per API user: four ISVs writing and a
 * sync reading through one connection stay inside its hourly and concurrent limits, writes go through
 * while a slowed sync runs, and a 429 storm shrinks the effective rate shown in `status`.
 */
import { Connection } from '../entities';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let tenantId: string;
let connectionId: string;
const isvKeys: string[] = [];
let companyName: string;
let at: any;
const LIMITS = { requests_per_hour: 400, concurrent: 3 };

const newKey = () => `budget-${Math.random().toString(36).slice(2)}-${Date.now()}`;

beforeAll(async () => {
  svc = await startTestService();
  at = svc.services.simulators!.autotask;
  const fixtures = loadVendorFixtures('autotask-demo', 'autotask');
  at.seed('autotask-demo', fixtures.resources);
  at.grow('autotask-demo', 'Tickets', 6000);
  tenantId = (await svc.graphql('mutation { create_tenant(name: "Budget MSP", slug: "budget-msp") { id } }')).data.create_tenant.id;
  const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
    input: { tenant_id: tenantId, kind: 'psa', connector: 'autotask', base_url: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
      credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
      status_mapping: Object.entries(fixtures.statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })) },
  });
  connectionId = c.data.create_connection.id;
  // The MSP's own budget for this connection (setup; status shows it back over HTTP).
  await svc.services.ds.getRepository(Connection).update({ id: connectionId }, { settings: { budget: LIMITS } });
  for (let i = 0; i < 4; i++) {
    const isv = (await svc.graphql(`mutation { create_isv(name: "Budget ISV ${i}") { id } }`)).data.create_isv.id;
    isvKeys.push((await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "budget") { key } }', { id: isv })).data.issue_api_key.key);
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: connectionId });
  }
  const companies = at.list('autotask-demo', 'Companies') as any[];
  const names = companies.map((x: any) => x.companyName);
  expect((await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key: isvKeys[0] })).body.ok).toBe(true);
  companyName = companies.find((x: any) => x.id !== 0 && names.filter((n: string) => n === x.companyName).length === 1).companyName;
}, 180_000);
afterAll(async () => { await svc?.close(); });

const status = async () => { const r = await svc.api(`/tenants/${tenantId}/status`, { key: isvKeys[0] }); if (!r.body.connections) throw new Error(JSON.stringify(r.body)); return r.body.connections.find((c: any) => c.id === connectionId); };

describe('one API budget per connection', () => {
  it('4 ISVs writing and a slowed sync stay inside the hourly and concurrent limit; writes go through while the sync runs', async () => {
    at.faults.resetLog();
    // Every vendor answer takes 60 ms: a full sync of ~6,000 tickets (12 pages and the rest) takes a while.
    at.faults.setLatency(60);
    const sync = svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: { full: true }, key: isvKeys[0] });
    // Let the sync start, then 4 ISVs commit 3 tickets each, all at once.
    await new Promise((r) => setTimeout(r, 300));
    const writes = await Promise.all(isvKeys.map(async (key, i) => {
      const out = [];
      for (let n = 0; n < 3; n++) {
        out.push(await svc.api(`/tenants/${tenantId}/tickets`, {
          method: 'POST', key,
          json: { company_name: companyName, summary: `Budget ISV ${i} ticket ${n}`, priority: 'high', dry_run: false, idempotency_key: newKey() },
        }));
      }
      return out;
    }));
    const during = await status();
    expect(writes.flat().map((w) => w.status)).toEqual(Array(12).fill(201));
    // The writes were done while the sync was still reading (the sync waits behind writes, not the reverse).
    expect(during.sync_status).toBe('running');
    const done = await sync;
    expect(done.body.ok).toBe(true);
    at.faults.setLatency(0);

    const usage = at.faults.usageOf('sandbox');
    expect(usage.maxInFlight).toBeGreaterThan(1);
    expect(usage.maxInFlight).toBeLessThanOrEqual(LIMITS.concurrent);
    expect(usage.requests).toBeGreaterThan(30);
    expect(usage.requests).toBeLessThanOrEqual(LIMITS.requests_per_hour);
    const { budget } = await status();
    expect(budget).toMatchObject({ requests_per_hour: 400, concurrent_limit: 3, in_flight: 0 });
    // Every call the vendor saw was counted by the budget (the first sync's calls too, hence >=).
    expect(budget.used_last_hour).toBeGreaterThanOrEqual(usage.requests);
    expect(budget.used_last_hour).toBeLessThanOrEqual(LIMITS.requests_per_hour);
  }, 180_000);

  it('shows each resource lag and the budget in status', async () => {
    const c = await status();
    for (const r of c.resources) expect(typeof r.lag_seconds).toBe('number');
    expect(c.budget.effective_rate).toBe(400);
  });

  it('a 429 storm halves the effective rate, and the sync still completes', async () => {
    at.faults.inject({ status: 429, times: 3, retryAfterSeconds: 0, pathIncludes: '/Tickets/query' });
    const res = await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key: isvKeys[0] });
    expect(res.body.ok).toBe(true);
    const { budget } = await status();
    // Halved once for the storm (the 429s of one storm count once), recovering a little since.
    expect(budget.effective_rate).toBeLessThan(240);
    expect(budget.effective_rate).toBeGreaterThan(0);
  }, 120_000);

  it('a write the spent hourly budget cannot admit before the request answers is 429 with Retry-After at once, and sends nothing', async () => {
    // The MSP lowers the hour to far less than this connection already used: no call fits until the window slides.
    await svc.services.ds.getRepository(Connection).update({ id: connectionId }, { settings: { budget: { requests_per_hour: 10, concurrent: 3 } } });
    await svc.services.access.invalidate(); // what every change made through the service does (the job reads the connection cached)
    at.faults.resetLog();
    const summary = `Budget spent ${Date.now()}`;
    const res = await svc.api(`/tenants/${tenantId}/tickets`, {
      method: 'POST', key: isvKeys[0], json: { company_name: companyName, summary, dry_run: false, idempotency_key: newKey() },
    });
    // Before: the write waited the request's whole 120 s for the hour to slide, then answered 503.
    expect([res.status, res.body.code]).toEqual([429, 'rate_limited']);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(at.faults.usageOf('sandbox').requests).toBe(0);
    expect((at.list('autotask-demo', 'Tickets') as any[]).filter((t: any) => t.title === summary)).toHaveLength(0);
    await svc.services.ds.getRepository(Connection).update({ id: connectionId }, { settings: { budget: LIMITS } });
    await svc.services.access.invalidate();
  }, 60_000);
});
