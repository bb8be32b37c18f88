/**
 * The tickets feature's store (docs/architecture.md, Folders): what its writes read of the synced
 * tickets and of the link store, and an ISV's routing of findings.
 */
import type { DataSource } from 'typeorm';
import { Isv, RoutingConfig, TicketLink } from '../../entities';

export class TicketsStore {
  constructor(private readonly ds: DataSource) {}

  /** The board a synced ticket is on (undefined: not synced yet). */
  async boardOf(connectionId: string, ticketRef: string): Promise<{ board_source_id: string | null } | undefined> {
    return (await this.ds.query('SELECT board_source_id FROM tickets WHERE connection_id = $1 AND source_id = $2', [connectionId, ticketRef]))[0];
  }

  /** The link-store rows of a ticket created through this service (one per connection it was created on). */
  linksOfTicket(tenantId: string, ticketRef: string): Promise<TicketLink[]> {
    return this.ds.getRepository(TicketLink).find({ where: { tenantId, ticketRef } });
  }

  /** The link-store rows of what a finding was routed to. */
  linksOfFinding(tenantId: string, findingId: string): Promise<TicketLink[]> {
    return this.ds.getRepository(TicketLink).find({ where: { tenantId, findingId } });
  }

  /** The ISV (its supported targets and recommended routing); it exists for any caller that names it. */
  isv(isvId: string): Promise<Isv> {
    return this.ds.getRepository(Isv).findOneByOrFail({ id: isvId });
  }

  /** The ISV's routing overrides on the tenant ({} when it set none). */
  async routingOverrides(tenantId: string, isvId: string): Promise<Record<string, string>> {
    return ((await this.ds.getRepository(RoutingConfig).findOneBy({ tenantId, isvId }))?.overrides ?? {}) as Record<string, string>;
  }

  async putRoutingOverrides(tenantId: string, isvId: string, overrides: Record<string, string>): Promise<void> {
    await this.ds.getRepository(RoutingConfig).upsert({ tenantId, isvId, overrides }, ['tenantId', 'isvId']);
  }
}
