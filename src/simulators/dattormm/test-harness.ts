/** Test harness shared by the Datto RMM simulator and connector tests: one standalone simulator, re-seeded per test. */
import { loadVendorFixtures } from '../../sandbox/fixtures';
import { startStandalone } from '../kit';
import { createDattoRmmSimulator, type DattoRmmLimits } from './simulator';

export const dattoFixtures = { beta: loadVendorFixtures('sandbox-beta', 'dattormm').resources };

export function useDattoRmmSimulator(limits: Partial<DattoRmmLimits> = {}) {
  const sim = createDattoRmmSimulator({
    clients: {
      'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta' },
      load: { secret: 'load-secret', instance: 'load' },
    },
    limits,
  });
  const state = { url: '', close: async () => {} };
  beforeAll(async () => {
    const s = await startStandalone(sim);
    state.url = s.url;
    state.close = s.close;
  });
  afterAll(() => state.close());
  beforeEach(() => {
    sim.reset();
    sim.seed('sandbox-beta', dattoFixtures.beta);
    sim.faults.clear();
    sim.faults.resetLog();
  });
  /** The API root a connection holds as its base URL. */
  return { sim, url: () => state.url, api: () => `${state.url}/api` };
}
