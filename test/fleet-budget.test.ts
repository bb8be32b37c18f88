/**
 * A busy worker keeps every connection inside its vendor budget (docs/architecture.md, Vendor API budget):
 * sixteen sync slots, every connection scheduled each second and synced on demand twice more on top, so that
 * several syncs of one connection run at once; each Autotask database (one per tenant, counted per API user
 * by the simulator) sees no more requests than the connection's hourly sync share and never more at once
 * than its concurrency, and the vendor never has to answer 429.
 */
import type { RunningServer } from '../src/server';
import type { Connection } from '../entities';
import { observeSimulatorRequests, startStandalone } from '../src/simulators/kit';
import { createAutotaskSimulator, type AutotaskCredential } from '../src/simulators/autotask/simulator';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { SYNC_SHARE } from '../src/budget/budget';
import { addTenantConnection, sleep, startFleetService } from './support/fleet';

const TENANTS = 4;
const BUDGET = { requests_per_hour: 40, concurrent: 2 };
const users: AutotaskCredential[] = Array.from({ length: TENANTS }, (_, i) => ({ userName: `budget-${i}`, secret: 'budget-secret', integrationCode: 'BUDGET', instance: `budget-${i}` }));
const at = createAutotaskSimulator({ credentials: users });
let svc: RunningServer;
let server: { url: string; close(): Promise<void> };
const statuses: number[] = [];
const stopObserving = observeSimulatorRequests((r) => { if (r.vendor === 'autotask') statuses.push(r.status); });

beforeAll(async () => {
  const fixtures = loadVendorFixtures('autotask-demo', 'autotask');
  for (const u of users) at.seed(u.instance, fixtures.resources);
  at.faults.setLatency(20);
  server = await startStandalone(at);
  svc = await startFleetService({ SYNC_CONCURRENCY: '16', SYNC_INTERVAL_SECONDS: '1' });
}, 120_000);

afterAll(async () => {
  stopObserving();
  await svc?.close(); // syncs still waiting for their budget end unsent
  await server?.close();
});

it('several syncs of each connection at once stay inside its hourly and concurrent budget, with no 429', async () => {
  const statusMapping = loadVendorFixtures('autotask-demo', 'autotask').statusMapping;
  const connections: Connection[] = [];
  for (const u of users) {
    connections.push(await addTenantConnection(svc, {
      slug: `fleet-${u.instance}`, kind: 'psa', connector: 'autotask', baseUrl: `${server.url}/atservicesrest/v1.0`,
      credentials: { username: u.userName, secret: u.secret, integrationCode: u.integrationCode }, statusMapping, settings: { budget: BUDGET },
    }));
  }
  // Besides the schedule: two full syncs on demand per tenant, which run beside the scheduled ones.
  for (let n = 0; n < 2; n++) {
    for (const c of connections) await svc.services.syncJobs.syncTenantNow(c.tenantId, { full: true, waitMs: 1 });
  }
  const cap = Math.floor(BUDGET.requests_per_hour * SYNC_SHARE);
  const spent = () => users.every((u) => at.faults.usageOf(u.userName).requests >= cap);
  for (let i = 0; i < 600 && !spent(); i++) await sleep(50);
  await sleep(1500); // anything the budget still let through would show by now

  for (const u of users) {
    const usage = at.faults.usageOf(u.userName);
    expect([u.userName, usage.requests]).toEqual([u.userName, cap]);
    expect(usage.maxInFlight).toBeLessThanOrEqual(BUDGET.concurrent);
  }
  expect(statuses.filter((s) => s === 429)).toEqual([]);
}, 120_000);
