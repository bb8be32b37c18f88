/** Test harness shared by the NinjaOne simulator and connector tests: one standalone simulator, re-seeded per test. */
import { loadVendorFixtures } from '../../sandbox/fixtures';
import { startStandalone } from '../kit';
import { createNinjaOneSimulator } from './simulator';

export const ninjaFixtures = {
  alpha: loadVendorFixtures('sandbox-alpha', 'ninjaone').resources,
  beta: loadVendorFixtures('sandbox-beta', 'ninjaone').resources,
};

export function useNinjaOneSimulator() {
  const sim = createNinjaOneSimulator({
    clients: {
      sandbox: { secret: 'sandbox-secret', instance: 'sandbox-alpha', refreshToken: 'sandbox-refresh-token' },
      'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta' },
      load: { secret: 'load-secret', instance: 'load' },
    },
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
    sim.seed('sandbox-alpha', ninjaFixtures.alpha);
    sim.seed('sandbox-beta', ninjaFixtures.beta);
    sim.faults.clear();
    sim.faults.resetLog();
  });
  return { sim, url: () => state.url };
}
