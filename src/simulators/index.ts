/** The vendor simulators of the sandbox, mounted at /sandbox-vendors/<vendor> on our own server. */
import type { Express } from 'express';
import { SIMULATOR_MOUNT } from '../http/request-log';
import { reportSimulatorRequests, type VendorSimulator } from './kit';
import { createConnectWiseSimulator } from './connectwise/simulator';
import { createAutotaskSimulator } from './autotask/simulator';
import { createHaloPsaSimulator } from './halopsa/simulator';
import { createNinjaOneSimulator } from './ninjaone/simulator';
import { createDattoRmmSimulator } from './dattormm/simulator';
import { createPax8Simulator } from './pax8/simulator';
import { createKaseyaBmsSimulator } from './kaseyabms/simulator';

export type SandboxSimulators = Record<string, VendorSimulator>;

/** `now`: the vendors' wall clock (default the real one); tests fix it so that no vendor rule depends on the day they run. */
export function createSandboxSimulators(controlToken: string, now?: () => number): SandboxSimulators {
  return {
    connectwise: createConnectWiseSimulator({ controlToken }),
    autotask: createAutotaskSimulator({ controlToken, now }),
    halopsa: createHaloPsaSimulator({ controlToken }),
    ninjaone: createNinjaOneSimulator({ controlToken }),
    dattormm: createDattoRmmSimulator({ controlToken }),
    pax8: createPax8Simulator({ controlToken }),
    kaseyabms: createKaseyaBmsSimulator({ controlToken, now }),
  };
}

export function mountSimulators(app: Express, sims: SandboxSimulators): void {
  for (const sim of Object.values(sims)) app.use(`${SIMULATOR_MOUNT}/${sim.vendor}`, reportSimulatorRequests(sim.vendor), sim.router);
}
