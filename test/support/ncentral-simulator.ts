/** Test harness shared by the N-central simulator and connector tests: one standalone simulator, re-seeded per test. */
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { useStandaloneSimulator } from './standalone-simulator';
import { createNcentralSimulator, type NcentralSimulatorOptions } from '../../src/simulators/ncentral/simulator';

export const ncentralFixtures = { gamma: loadVendorFixtures('sandbox-gamma', 'ncentral').resources };
export const GAMMA_JWT = 'sandbox-gamma-user-api-token';

export function useNcentralSimulator(opts: Omit<NcentralSimulatorOptions, 'jwts'> = {}) {
  const sim = createNcentralSimulator({ jwts: { [GAMMA_JWT]: 'sandbox-gamma', 'other-user-api-token': 'other' }, ...opts });
  const url = useStandaloneSimulator(sim, () => sim.seed('sandbox-gamma', ncentralFixtures.gamma));
  /** `server()`: the N-central server's root, the base URL a connection holds. */
  return { sim, url, server: () => url() };
}
