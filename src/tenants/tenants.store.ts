/**
 * The tenants feature's store: the ISV list, the sync state and record counts behind the connections and
 * status reads (tenant-status.ts shapes them), and the removal of a connection or a tenant with every row
 * that names it (docs/architecture.md, Tenancy, keys and grants). A connection's removal keeps its audit
 * entries and its connection events (the tenant's history); for a tenant nothing stays: records, events, audit, keys (MSP keys stop
 * working), billing rows.
 */
import { In, type DataSource, type EntityManager } from 'typeorm';
import { AuditEntry, BillingVersion, Connection, EventRecord, Isv, SyncState, Tenant } from '../../entities';
import { CONNECTION_KINDS } from '../events/event-kinds';
import { ENTITY_BY_RESOURCE } from '../sync/record-writer';

/** An entity's class, as TypeORM's metadata names it (`target`). */
type EntityClass = abstract new (...args: never[]) => unknown;

async function deleteWhere(m: EntityManager, property: 'tenantId' | 'connectionId', id: string, keep: readonly EntityClass[] = []): Promise<number> {
  let removed = 0;
  for (const meta of m.connection.entityMetadatas) {
    if (keep.some((entity) => entity === meta.target)) continue;
    const column = meta.findColumnWithPropertyName(property);
    if (!column) continue;
    const res = await m.createQueryBuilder().delete().from(meta.target).where(`"${column.databaseName}" = :id`, { id }).execute();
    removed += res.affected ?? 0;
  }
  return removed;
}

export class TenantsStore {
  constructor(private readonly ds: DataSource) {}

  /** Every ISV, oldest first. */
  isvs(): Promise<Isv[]> {
    return this.ds.getRepository(Isv).find({ order: { createdAt: 'ASC' } });
  }

  /** The sync states of these connections, by resource. */
  syncStates(connectionIds: string[]): Promise<SyncState[]> {
    return this.ds.getRepository(SyncState).find({ where: { connectionId: In(connectionIds) }, order: { resource: 'ASC' } });
  }

  /** Records the store holds per connection and resource (`<connection id>|<resource>`), one statement. */
  async storedCounts(tenantId: string, connectionIds: string[], resources: string[]): Promise<Map<string, number>> {
    const ds = this.ds;
    const known = [...new Set(resources)].filter((r): r is keyof typeof ENTITY_BY_RESOURCE => r in ENTITY_BY_RESOURCE);
    if (!connectionIds.length || !known.length) return new Map();
    const parts = known.map((r, i) =>
      `SELECT connection_id::text AS connection_id, $${i + 3}::text AS resource, count(*)::int AS n FROM "${ds.getMetadata(ENTITY_BY_RESOURCE[r]).tableName}"
        WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[]) GROUP BY connection_id`);
    const rows: { connection_id: string; resource: string; n: number }[] = await ds.query(parts.join(' UNION ALL '), [tenantId, connectionIds, ...known]);
    return new Map(rows.map((r) => [`${r.connection_id}|${r.resource}`, Number(r.n)]));
  }

  /**
   * The connection's rows everywhere (records, sync state, grants, links, events, quarantine) and the connection.
   * `alsoIn`: more work in the same transaction after the rows went (the `connection.removed` event); what it
   * answers runs once the transaction has committed.
   */
  async removeConnection(connection: Connection, alsoIn?: (m: EntityManager) => Promise<() => Promise<void>>): Promise<number> {
    let after: (() => Promise<void>) | undefined;
    const n = await this.ds.transaction(async (m) => {
      const removed = await deleteWhere(m, 'connectionId', connection.id, [AuditEntry, EventRecord]);
      // Its events go too, but for the connection family's: the tenant's history of its connections (connection.added, ...).
      await m.query('DELETE FROM events WHERE connection_id = $1 AND kind <> ALL($2::text[])', [connection.id, CONNECTION_KINDS]);
      await m.getRepository(Connection).delete({ id: connection.id });
      after = await alsoIn?.(m);
      return removed + 1;
    });
    await after?.();
    return n;
  }

  /** Every row of the tenant (every table with a tenant column) and the tenant; returns its connections' ids. */
  async removeTenant(tenant: Tenant): Promise<string[]> {
    return this.ds.transaction(async (m) => {
      const connections = await m.getRepository(Connection).find({ where: { tenantId: tenant.id }, select: { id: true } });
      await deleteWhere(m, 'tenantId', tenant.id);
      // The billing triggers count the deletions above into the tenant's billing_versions row: it goes last.
      await m.getRepository(BillingVersion).delete({ tenantId: tenant.id });
      await m.getRepository(Tenant).delete({ id: tenant.id });
      return connections.map((c) => c.id);
    });
  }
}
