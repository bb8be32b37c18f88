import type { Caller } from '../access/caller';
import type { RunnerServices } from '../operations/runner';

/** What every resolver gets: who is calling and the domain services (the runner hands them to the operation). */
export interface GraphContext {
  caller: Caller;
  services: RunnerServices;
}
