/** What the HaloPSA simulator offers the sandbox and tests besides its HTTP API (simulate.ts changes records through it). */
import type { VendorSimulator } from '../kit';
import type { HaloRecord, HaloResource } from './store';

export interface HaloPsaSimulator extends VendorSimulator {
  /** One record, as the API would answer it; undefined when absent. */
  get(instance: string, resource: HaloResource, id: string | number): HaloRecord | undefined;
  list(instance: string, resource: HaloResource): HaloRecord[];
  /** A change made in Halo's UI by the MSP: merges the patch and bumps the last-updated time. */
  update(instance: string, resource: HaloResource, id: string | number, patch: HaloRecord): HaloRecord;
  create(instance: string, resource: HaloResource, record: HaloRecord): HaloRecord;
  /** Adds a note (an action) to a ticket or project; a string is the note text. */
  addAction(instance: string, ticketId: number, note: string | HaloRecord): HaloRecord;
  /** Invalidates every issued token (tests of token refresh). */
  revokeTokens(): void;
}
