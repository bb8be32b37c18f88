/** What the ConnectWise simulator offers the sandbox and tests besides its HTTP API (simulate.ts changes records through it). */
import type { VendorSimulator } from '../kit';
import type { CwRecord } from './store';

export interface ConnectWiseSimulator extends VendorSimulator {
  /** A copy of one stored record in its native shape (resource = fixture/seed key, e.g. `tickets`). */
  get(instance: string, resource: string, id: number): CwRecord | undefined;
  /** Copies of every stored record of a resource, in id order. */
  list(instance: string, resource: string): CwRecord[];
  /** A change made by the MSP in the ConnectWise UI: shallow merge, bumps `_info.lastUpdated`. */
  update(instance: string, resource: string, id: number, patch: CwRecord): CwRecord;
  /** A record created by the MSP in the UI. Tickets go through the same validation as the API. */
  create(instance: string, resource: string, record: CwRecord): CwRecord;
  /** A record deleted by the MSP (ConnectWise documents DELETE /service/tickets/{id} and /company/companies/{id}). */
  remove(instance: string, resource: string, id: number): boolean;
  /** A note added to a service ticket in the UI. */
  addNote(instance: string, ticketId: number, text: string, flags?: { detailDescriptionFlag?: boolean; internalAnalysisFlag?: boolean; resolutionFlag?: boolean }): CwRecord;
}
