/**
 * The account's request limit (docs/vendors.md, Datto RMM): a full sync of 5,000 devices stays under
 * it. The simulator's window is scaled to one second (600 reads a second instead of a minute) so that
 * the test takes seconds; the connector learns the window and the limit from the vendor's
 * `/v2/system/request_rate`, as it would from Datto RMM.
 */
import { useDattoRmmSimulator } from '../../../test/support/dattormm-simulator';
import type { SyncContext, SyncResource } from '../types';
import { VendorHttpClient } from '../vendor-http';
import { dattoRmmConnector } from './connector';

const { sim, api } = useDattoRmmSimulator({ windowSeconds: 1 });

function ctx(): SyncContext {
  return { baseUrl: api(), credentials: { apiKey: 'load', apiSecret: 'load-secret' }, statusMapping: {}, since: null, http: new VendorHttpClient({ baseDelayMs: 10 }), concurrency: 4 };
}

async function count(resource: SyncResource, c: SyncContext): Promise<number> {
  let n = 0;
  for await (const page of dattoRmmConnector.fetch(resource, c)) n += page.length;
  return n;
}

it('a full sync of 5,000 devices never meets the added delay or a 429', async () => {
  sim.seed('load', {});
  sim.grow('load', 'devices', 5000);
  sim.grow('load', 'software', 15_000);
  sim.grow('load', 'alerts', 300);
  sim.grow('load', 'components', 40);
  const c = ctx();
  expect(await count('devices', c)).toBe(5000);
  expect(await count('applications', c)).toBe(15_000);
  expect(await count('incidents', c)).toBe(300);
  expect(await count('packages', c)).toBe(40);
  const stats = sim.limitStats('load');
  // It made far more reads than one window allows (one audit per device), yet never crossed 90 % of the
  // limit. That the simulator refuses past it is src/simulators/dattormm/simulator.test.ts.
  expect(sim.faults.countRequests('/software')).toBe(5000);
  expect(stats).toEqual({ throttled: 0, delayed: 0, peakReads: expect.any(Number) });
  expect(stats.peakReads).toBeLessThanOrEqual(540);
}, 120_000);

