/**
 * A big tenant does not starve the small ones on a worker (docs/architecture.md, Vendor API budget): with two
 * sync slots and every connection scheduled each second, one connection whose first sync is slow and huge
 * (thousands of tickets, over a dozen calls, from a vendor that takes 1.5 s an answer) runs in one slot, and the small tenants
 * that connect meanwhile are all synced in the other while it is still running. Its scheduled runs that fall
 * due meanwhile find its resources claimed and end at once (src/sync/freshness.ts), never taking the second slot.
 */
import type { RunningServer } from '../src/server';
import type { Connection } from '../entities';
import { startStandalone } from '../src/simulators/kit';
import { createConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { createPax8Simulator } from '../src/simulators/pax8/simulator';
import { readConnector } from '../src/connectors/registry';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { addTenantConnection, sleep, startFleetService, syncStatesOf } from './support/fleet';

const SMALL = 4;
const big = createConnectWiseSimulator();
const small = createPax8Simulator({ clients: Object.fromEntries(Array.from({ length: SMALL }, (_, i) => [`small-${i}`, { secret: 'small-secret', instance: `small-${i}` }])) });
let svc: RunningServer;
let servers: { url: string; close(): Promise<void> }[] = [];

beforeAll(async () => {
  const cw = loadVendorFixtures('sandbox-alpha', 'connectwise');
  big.seed('big', cw.resources);
  big.grow('big', 'tickets', 3000);
  const pax8 = loadVendorFixtures('sandbox-alpha', 'pax8');
  for (let i = 0; i < SMALL; i++) small.seed(`small-${i}`, pax8.resources);
  servers = [await startStandalone(big), await startStandalone(small)];
  svc = await startFleetService({ SYNC_CONCURRENCY: '2', SYNC_INTERVAL_SECONDS: '1' });
}, 120_000);

afterAll(async () => {
  big.faults.setLatency(0); // the big sync finishes quickly, and the close (which lets it finish) with it
  await svc?.close();
  for (const s of servers) await s.close();
});

it('small tenants are all synced while a big one\'s slow first sync still runs, its scheduled runs never taking the other slot', async () => {
  big.faults.setLatency(1500);
  const bigConnection = await addTenantConnection(svc, {
    slug: 'fleet-big', kind: 'psa', connector: 'connectwise', baseUrl: `${servers[0].url}/v4_6_release/apis/3.0`,
    credentials: { companyId: 'big', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
    statusMapping: loadVendorFixtures('sandbox-alpha', 'connectwise').statusMapping,
  });
  // The big sync has started, and its schedule has come due again several times since.
  for (let i = 0; i < 200 && (await syncStatesOf(svc, bigConnection.id)).length === 0; i++) await sleep(50);
  await sleep(3000);

  const smallOnes: Connection[] = [];
  for (let i = 0; i < SMALL; i++) {
    smallOnes.push(await addTenantConnection(svc, {
      slug: `fleet-small-${i}`, kind: 'distributor', connector: 'pax8', baseUrl: `${servers[1].url}/v1`,
      credentials: { clientId: `small-${i}`, clientSecret: 'small-secret' },
    }));
  }
  const resources = readConnector('pax8').resources.length;
  const synced = async () => {
    const states = await Promise.all(smallOnes.map((c) => syncStatesOf(svc, c.id)));
    return states.filter((s) => s.length === resources && s.every((x) => x.lastSyncedAt != null)).length;
  };
  for (let i = 0; i < 600 && (await synced()) < SMALL; i++) await sleep(50);
  const bigTickets = (await syncStatesOf(svc, bigConnection.id)).find((s) => s.resource === 'tickets');

  expect(await synced()).toBe(SMALL);
  // ...while the big connection's tickets (its slow part) have not finished once.
  expect(bigTickets?.lastSyncedAt ?? null).toBeNull();
}, 120_000);
