/**
 * Removing a connection or a whole tenant. Every table that carries the owner's column loses its rows
 * (asked of the entity metadata, so a table added later is covered without an edit here), in one
 * transaction; the queue's sync schedule goes too. For a connection the audit log stays (it is the
 * tenant's history); for a tenant nothing stays: records, events, audit, keys (MSP keys stop working),
 * grants, webhooks and their deliveries.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { AuditEntry, BillingVersion, Connection, Tenant } from '../../entities';

async function deleteWhere(m: EntityManager, property: 'tenantId' | 'connectionId', id: string, keep: Function[] = []): Promise<number> {
  let removed = 0;
  for (const meta of m.connection.entityMetadatas) {
    if (keep.includes(meta.target as Function)) continue;
    const column = meta.findColumnWithPropertyName(property);
    if (!column) continue;
    const res = await m.createQueryBuilder().delete().from(meta.target).where(`"${column.databaseName}" = :id`, { id }).execute();
    removed += res.affected ?? 0;
  }
  return removed;
}

/** The connection's rows everywhere (records, sync state, grants, links, events, quarantine) and the connection. */
export async function removeConnection(ds: DataSource, connection: Connection): Promise<number> {
  return ds.transaction(async (m) => {
    const n = await deleteWhere(m, 'connectionId', connection.id, [AuditEntry]);
    await m.getRepository(Connection).delete({ id: connection.id });
    return n + 1;
  });
}

/** Every row of the tenant (every table with a tenant column) and the tenant; returns its connections' ids. */
export async function removeTenant(ds: DataSource, tenant: Tenant): Promise<string[]> {
  return ds.transaction(async (m) => {
    const connections = await m.getRepository(Connection).find({ where: { tenantId: tenant.id }, select: { id: true } });
    await deleteWhere(m, 'tenantId', tenant.id);
    // The billing triggers count the deletions above into the tenant's billing_versions row: it goes last.
    await m.getRepository(BillingVersion).delete({ tenantId: tenant.id });
    await m.getRepository(Tenant).delete({ id: tenant.id });
    return connections.map((c) => c.id);
  });
}
