/** Test harness shared by the NinjaOne simulator and connector tests: one standalone simulator, re-seeded per test. */
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { useStandaloneSimulator } from './standalone-simulator';
import { createNinjaOneSimulator } from '../../src/simulators/ninjaone/simulator';

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
  const url = useStandaloneSimulator(sim, () => {
    sim.seed('sandbox-alpha', ninjaFixtures.alpha);
    sim.seed('sandbox-beta', ninjaFixtures.beta);
  });
  return { sim, url };
}
