/** The vendor simulators of the sandbox, mounted at /sandbox-vendors/<vendor> on our own server. */
import type { Express } from 'express';
import type { ConnectorName } from '../../entities/tenancy';
import type { VendorSimulator } from '../simulators/kit';
import { createConnectWiseSimulator } from '../simulators/connectwise/simulator';
import { createAutotaskSimulator } from '../simulators/autotask/simulator';
import { createHaloPsaSimulator } from '../simulators/halopsa/simulator';
import { createNinjaOneSimulator } from '../simulators/ninjaone/simulator';
import { createPax8Simulator } from '../simulators/pax8/simulator';

export type SandboxSimulators = Record<ConnectorName, VendorSimulator>;

export function createSandboxSimulators(controlToken: string): SandboxSimulators {
  return {
    connectwise: createConnectWiseSimulator({ controlToken }),
    autotask: createAutotaskSimulator({ controlToken }),
    halopsa: createHaloPsaSimulator({ controlToken }),
    ninjaone: createNinjaOneSimulator({ controlToken }),
    pax8: createPax8Simulator({ controlToken }),
  };
}

export function mountSimulators(app: Express, sims: SandboxSimulators): void {
  for (const sim of Object.values(sims)) app.use(`/sandbox-vendors/${sim.vendor}`, sim.router);
}
