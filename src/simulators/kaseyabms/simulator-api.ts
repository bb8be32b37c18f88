/** What the Kaseya BMS simulator offers the sandbox and tests besides its HTTP API (simulate.ts changes records through it). */
import type { VendorSimulator } from '../kit';
import type { EndpointLimiter } from './limits';
import type { BmsRecord, BmsResource } from './store';

export interface KaseyaBmsSimulator extends VendorSimulator {
  get(instance: string, resource: BmsResource, id: number): BmsRecord | undefined;
  list(instance: string, resource: BmsResource): BmsRecord[];
  /** A change made in BMS's UI by the MSP: merges the patch and moves the record's change stamps. */
  update(instance: string, resource: BmsResource, id: number, patch: BmsRecord): BmsRecord;
  /** Adds a note to a ticket, as a technician would in BMS. */
  addNote(instance: string, ticketId: number, text: string): BmsRecord;
  /** The per-endpoint hourly limit (tests shrink or reset it). */
  readonly limiter: EndpointLimiter;
  /** Invalidates every issued token (tests of token renewal). */
  revokeTokens(): void;
}
