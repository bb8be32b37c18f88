/** Test harness shared by the Datto RMM simulator and connector tests: one standalone simulator, re-seeded per test. */
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { useStandaloneSimulator } from './standalone-simulator';
import { createDattoRmmSimulator, type DattoRmmLimits } from '../../src/simulators/dattormm/simulator';

export const dattoFixtures = { beta: loadVendorFixtures('sandbox-beta', 'dattormm').resources };

export function useDattoRmmSimulator(limits: Partial<DattoRmmLimits> = {}) {
  const sim = createDattoRmmSimulator({
    clients: { 'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta' }, load: { secret: 'load-secret', instance: 'load' } },
    limits,
  });
  const url = useStandaloneSimulator(sim, () => sim.seed('sandbox-beta', dattoFixtures.beta));
  /** `api()`: the API root a connection holds as its base URL. */
  return { sim, url, api: () => `${url()}/api` };
}
