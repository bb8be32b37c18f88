/** The tickets feature's store (docs/architecture.md, Folders): what its writes read of the synced tickets. */
import type { DataSource } from 'typeorm';

export class TicketsStore {
  constructor(private readonly ds: DataSource) {}

  /** The board a synced ticket is on (undefined: not synced yet). */
  async boardOf(connectionId: string, ticketRef: string): Promise<{ board_source_id: string | null } | undefined> {
    return (await this.ds.query('SELECT board_source_id FROM tickets WHERE connection_id = $1 AND source_id = $2', [connectionId, ticketRef]))[0];
  }
}
