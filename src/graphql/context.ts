import type { Caller } from '../access/caller';
import type { Services } from '../services';

/** What every resolver gets: who is calling and the domain services. */
export interface GraphContext {
  caller: Caller;
  services: Services;
}
