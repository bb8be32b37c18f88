/**
 * The fleet bench's vendors (test/bench/fleet.ts), in a process of their own so that their work is not the
 * service's: every simulator, one instance per tenant selected by that tenant's own credentials, each
 * seeded with the sandbox's small datasets (tens of tickets, devices and subscriptions), every answer
 * held FLEET_LATENCY_MS, and each vendor's published limit enforced by its simulator (Autotask's hourly
 * budget and threads, Datto RMM's minute, Pax8's minute).
 *
 * Tenant i (0-based) is `fleet-<i>`: its PSA is ConnectWise, Autotask or HaloPSA (i mod 3), its RMM
 * NinjaOne or Datto RMM (i mod 2), its distributor Pax8. `fleetTenant(i)` says which, with the
 * credentials the bench stores for its connections.
 *
 * Besides the vendor APIs (under /sandbox-vendors/<vendor>/), it serves:
 *   GET  /fleet/stats    requests and 429s answered per vendor, and this process's RSS
 *   GET  /fleet/target   ?tenant=&side=psa|rmm: the record (vendor id) the next change there will touch
 *   POST /fleet/change   {tenant, side}: that change, made in the tenant's system as its UI would make it (a
 *                        ticket's status or title, a device going offline); answers {vendor, target_id, at}
 * and prints `fleet vendors on <url>` once every tenant is seeded.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import type { VendorSimulator } from '../../src/simulators/kit';
import { createConnectWiseSimulator } from '../../src/simulators/connectwise/simulator';
import { createAutotaskSimulator, type AutotaskCredential } from '../../src/simulators/autotask/simulator';
import { createHaloPsaSimulator } from '../../src/simulators/halopsa/simulator';
import { createNinjaOneSimulator } from '../../src/simulators/ninjaone/simulator';
import { createDattoRmmSimulator } from '../../src/simulators/dattormm/simulator';
import { createPax8Simulator } from '../../src/simulators/pax8/simulator';

export const FLEET_SECRET = 'fleet-secret';
const CW_KEYS = { publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' };

export interface FleetConnectionSpec {
  kind: 'psa' | 'rmm' | 'distributor';
  connector: 'connectwise' | 'autotask' | 'halopsa' | 'ninjaone' | 'dattormm' | 'pax8';
  /** Below the vendors' origin. */
  path: string;
  credentials: Record<string, string>;
  statusMapping: Record<string, string>;
}

const PSAS = ['connectwise', 'autotask', 'halopsa'] as const;
const RMMS = ['ninjaone', 'dattormm'] as const;

/** Where each vendor's small dataset comes from (fixtures/<tenant>/<vendor>/). */
const FIXTURES: Record<FleetConnectionSpec['connector'], string> = {
  connectwise: 'sandbox-alpha', autotask: 'autotask-demo', halopsa: 'sandbox-beta', ninjaone: 'sandbox-alpha', dattormm: 'sandbox-beta', pax8: 'sandbox-alpha',
};

const PATHS: Record<FleetConnectionSpec['connector'], string> = {
  connectwise: '/sandbox-vendors/connectwise/v4_6_release/apis/3.0',
  autotask: '/sandbox-vendors/autotask/atservicesrest/v1.0',
  halopsa: '/sandbox-vendors/halopsa',
  ninjaone: '/sandbox-vendors/ninjaone',
  dattormm: '/sandbox-vendors/dattormm/api',
  pax8: '/sandbox-vendors/pax8/v1',
};

export function fleetSlug(i: number): string {
  return `fleet-${String(i).padStart(5, '0')}`;
}

function credentialsOf(connector: FleetConnectionSpec['connector'], slug: string): Record<string, string> {
  switch (connector) {
    case 'connectwise': return { companyId: slug, ...CW_KEYS };
    case 'autotask': return { username: slug, secret: FLEET_SECRET, integrationCode: 'FLEET' };
    case 'dattormm': return { apiKey: slug, apiSecret: FLEET_SECRET };
    default: return { clientId: slug, clientSecret: FLEET_SECRET };
  }
}

const mappings = new Map<string, Record<string, string>>();
function statusMappingOf(connector: FleetConnectionSpec['connector']): Record<string, string> {
  let m = mappings.get(connector);
  if (!m) mappings.set(connector, (m = loadVendorFixtures(FIXTURES[connector], connector).statusMapping));
  return m;
}

/** Tenant i's three connections. */
export function fleetTenant(i: number): { slug: string; connections: FleetConnectionSpec[] } {
  const slug = fleetSlug(i);
  const connectors: [FleetConnectionSpec['kind'], FleetConnectionSpec['connector']][] = [['psa', PSAS[i % 3]], ['rmm', RMMS[i % 2]], ['distributor', 'pax8']];
  return {
    slug,
    connections: connectors.map(([kind, connector]) => ({
      kind, connector, path: PATHS[connector], credentials: credentialsOf(connector, slug), statusMapping: statusMappingOf(connector),
    })),
  };
}

/** Counts what each vendor answered: every request, and the 429s. */
interface VendorCount { requests: number; throttled: number }

async function main(): Promise<void> {
  const tenants = Number(process.env.FLEET_TENANTS ?? 1000);
  const latencyMs = Number(process.env.FLEET_LATENCY_MS ?? 100);
  const controlToken = process.env.FLEET_CONTROL_TOKEN ?? 'fleet-control';
  const slugs = Array.from({ length: tenants }, (_, i) => fleetSlug(i));
  const on = (connector: string, kind: 'psa' | 'rmm') => slugs.filter((_, i) => (kind === 'psa' ? PSAS[i % 3] : RMMS[i % 2]) === connector);
  const clients = (list: string[]) => Object.fromEntries(list.map((s) => [s, { secret: FLEET_SECRET, instance: s }]));

  const cw = createConnectWiseSimulator({ controlToken });
  const autotaskUsers: AutotaskCredential[] = on('autotask', 'psa').map((s) => ({ userName: s, secret: FLEET_SECRET, integrationCode: 'FLEET', instance: s }));
  const at = createAutotaskSimulator({ controlToken, credentials: autotaskUsers });
  const halo = createHaloPsaSimulator({ controlToken, clients: clients(on('halopsa', 'psa')) });
  const ninja = createNinjaOneSimulator({ controlToken, clients: clients(on('ninjaone', 'rmm')) });
  const datto = createDattoRmmSimulator({ controlToken, clients: clients(on('dattormm', 'rmm')) });
  const pax8 = createPax8Simulator({ controlToken, clients: clients(slugs) });
  const sims: Record<FleetConnectionSpec['connector'], VendorSimulator> = { connectwise: cw, autotask: at, halopsa: halo, ninjaone: ninja, dattormm: datto, pax8 };

  const fixtures = new Map(Object.entries(FIXTURES).map(([connector, from]) => [connector, loadVendorFixtures(from, connector).resources]));
  for (let i = 0; i < tenants; i++) {
    for (const c of fleetTenant(i).connections) sims[c.connector].seed(slugs[i], fixtures.get(c.connector)!);
  }
  for (const sim of Object.values(sims)) sim.faults.setLatency(latencyMs);

  const counts = new Map<string, VendorCount>();
  const app = express();
  for (const sim of Object.values(sims)) {
    const count: VendorCount = { requests: 0, throttled: 0 };
    counts.set(sim.vendor, count);
    app.use(`/sandbox-vendors/${sim.vendor}`, (_req: Request, res: Response, next: NextFunction) => {
      count.requests++;
      res.once('finish', () => { if (res.statusCode === 429) count.throttled++; });
      next();
    }, sim.router);
  }
  app.get('/fleet/stats', (_req, res) => {
    res.json({ vendors: Object.fromEntries(counts), rssBytes: process.memoryUsage().rss });
  });
  // The record a change of `side` in tenant i would touch next: the bench reads its stored copy first.
  const nextTarget = (tenant: number, side: 'psa' | 'rmm'): { vendor: FleetConnectionSpec['connector']; target_id: string } => {
    const vendor = fleetTenant(tenant).connections.find((c) => c.kind === side)!.connector;
    const instance = slugs[tenant];
    const rows = (resource: string) => (sims[vendor] as unknown as { list(i: string, r: string): Record<string, unknown>[] }).list(instance, resource);
    const pick = vendor === 'connectwise' ? rows('tickets').find((t) => t.closedFlag !== true)
      : vendor === 'halopsa' ? rows('tickets').find((t) => t.status_id !== 9) // Halo's built-in Closed status
        : vendor === 'autotask' ? rows('Tickets')[0]
          : vendor === 'ninjaone' ? rows('devices').find((d) => d.offline !== true)
            : rows('devices').find((d) => d.online === true && d.deleted !== true);
    if (!pick) throw new Error(`${vendor} ${instance}: nothing left to change`);
    return { vendor, target_id: String(vendor === 'dattormm' ? pick.uid : pick.id) };
  };
  app.get('/fleet/target', (req, res) => {
    res.json(nextTarget(Number(req.query.tenant), req.query.side === 'rmm' ? 'rmm' : 'psa'));
  });
  let edits = 0;
  app.post('/fleet/change', express.json(), (req, res) => {
    const { tenant, side } = req.body as { tenant: number; side: 'psa' | 'rmm' };
    const { vendor, target_id: targetId } = nextTarget(tenant, side);
    const instance = slugs[tenant];
    if (vendor === 'autotask') {
      // Autotask's simulator has no sandbox trigger: a technician retitles the ticket (its lastActivityDate moves).
      const ticket = at.get(instance, 'Tickets', Number(targetId)) as { title: string };
      at.update(instance, 'Tickets', Number(targetId), { title: `${ticket.title.replace(/ \(edit \d+\)$/, '')} (edit ${++edits})` });
    } else {
      sims[vendor].simulate!(instance, side === 'psa' ? { kind: 'ticket_status', target_id: targetId } : { kind: 'device_offline', target_id: targetId });
    }
    res.json({ vendor, target_id: targetId, at: Date.now() });
  });

  const server = http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`fleet vendors on http://127.0.0.1:${port}\n`);
  process.once('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
}

if (require.main === module) {
  main().catch((err) => { console.error(err); process.exit(1); });
}
