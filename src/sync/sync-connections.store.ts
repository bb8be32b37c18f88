/**
 * The connections as the sync reads them: one to sync (with its sync states, for a scheduled check, in one
 * statement), many with their states at once (a sweep's claims), and a tenant's or every connection to
 * schedule (sync-jobs.ts).
 */
import { EntityNotFoundError, type DataSource } from 'typeorm';
import { Connection, SyncState } from '../../entities';

/** A connection and every one of its sync states, as a scheduled check reads them. */
export interface ConnectionWithStates { connection: Connection; states: SyncState[] }

export class SyncConnectionsStore {
  constructor(private readonly ds: DataSource) {}

  /**
   * Connections with every one of their sync states, in one statement however many (a sweep claims checks
   * of many connections at once). A connection gone since its claim is not in the answer.
   */
  async withStates(ids: readonly string[]): Promise<Map<string, ConnectionWithStates>> {
    if (ids.length === 0) return new Map();
    const found = await this.ds.getRepository(Connection).createQueryBuilder('c')
      .leftJoinAndMapMany('c.syncStates', SyncState, 's', 's.connection_id = c.id')
      .where('c.id IN (:...ids)', { ids: [...ids] }).getMany() as (Connection & { syncStates?: SyncState[] })[];
    return new Map(found.map((c) => {
      const states = c.syncStates ?? [];
      delete c.syncStates;
      return [c.id, { connection: c, states }];
    }));
  }

  /** The connection, and with `withStates` its sync states, in one statement. */
  async connectionOf(id: string, withStates: boolean): Promise<{ connection: Connection; states: SyncState[] | null }> {
    if (!withStates) return { connection: await this.ds.getRepository(Connection).findOneByOrFail({ id }), states: null };
    const found = (await this.withStates([id])).get(id);
    if (!found) throw new EntityNotFoundError(Connection, { id });
    return found;
  }

  /** Every connection, as the schedule places them (id order). */
  everyConnection(): Promise<Pick<Connection, 'id' | 'tenantId' | 'connector'>[]> {
    return this.ds.getRepository(Connection).find({ select: { id: true, tenantId: true, connector: true }, order: { id: 'ASC' } });
  }

  /** A tenant's connections, oldest first. */
  ofTenant(tenantId: string): Promise<Connection[]> {
    return this.ds.getRepository(Connection).find({ where: { tenantId }, order: { createdAt: 'ASC' } });
  }
}
