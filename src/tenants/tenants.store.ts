/**
 * The tenants feature's store: ISVs, tenants, connections, keys and grants as tenancy changes them
 * (admin.service.ts holds the rules), the sync state and record counts behind the connections and
 * status reads (tenant-status.ts shapes them), and the removal of a connection or a tenant with every row
 * that names it (docs/architecture.md, Tenancy, keys and grants). A connection's removal keeps its audit
 * entries and its connection events (the tenant's history); for a tenant nothing stays: records, events, audit, keys (MSP keys stop
 * working), billing rows.
 */
import { In, type DataSource, type DeepPartial, type EntityManager } from 'typeorm';
import { ApiKey, AuditEntry, BillingVersion, Connection, EventRecord, Grant, Isv, SyncState, Tenant } from '../../entities';
import { CONNECTION_KINDS } from '../access/event-kinds';
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

  createIsv(isv: DeepPartial<Isv>): Promise<Isv> {
    return this.ds.getRepository(Isv).save(isv);
  }

  isv(id: string): Promise<Isv | null> {
    return this.ds.getRepository(Isv).findOneBy({ id });
  }

  isvsByIds(ids: string[]): Promise<Isv[]> {
    return this.ds.getRepository(Isv).find({ where: { id: In(ids) } });
  }

  tenant(id: string): Promise<Tenant | null> {
    return this.ds.getRepository(Tenant).findOneBy({ id });
  }

  tenantBySlug(slug: string): Promise<Tenant | null> {
    return this.ds.getRepository(Tenant).findOneBy({ slug });
  }

  /** Inserts a new tenant, or saves a changed one. */
  saveTenant(tenant: DeepPartial<Tenant>): Promise<Tenant> {
    return this.ds.getRepository(Tenant).save(tenant);
  }

  connection(id: string): Promise<Connection | null> {
    return this.ds.getRepository(Connection).findOneBy({ id });
  }

  /** Inserts a new connection, or saves a changed one. */
  saveConnection(connection: DeepPartial<Connection>): Promise<Connection> {
    return this.ds.getRepository(Connection).save(connection);
  }

  saveApiKey(key: DeepPartial<ApiKey>): Promise<ApiKey> {
    return this.ds.getRepository(ApiKey).save(key);
  }

  /** Keys of the ISV or the tenant (every key without a filter), oldest first. */
  apiKeys(where: { isvId?: string; tenantId?: string }): Promise<ApiKey[]> {
    return this.ds.getRepository(ApiKey).find({ where, order: { createdAt: 'ASC' } });
  }

  /** Revokes the key now; whether it existed. */
  async revokeApiKey(id: string): Promise<boolean> {
    const res = await this.ds.getRepository(ApiKey).update({ id }, { revokedAt: new Date() });
    return (res.affected ?? 0) > 0;
  }

  /** The grant rows of the tenant, oldest first. */
  grantsOf(tenantId: string): Promise<Grant[]> {
    return this.ds.getRepository(Grant).find({ where: { tenantId }, order: { createdAt: 'ASC' } });
  }

  /** Sets the ISV's keys on the connection; the grant as stored. */
  async setGrant(grant: Pick<Grant, 'isvId' | 'connectionId' | 'tenantId' | 'keys'>): Promise<Grant> {
    const repo = this.ds.getRepository(Grant);
    await repo.upsert(grant, ['isvId', 'connectionId']);
    return repo.findOneByOrFail({ isvId: grant.isvId, connectionId: grant.connectionId });
  }

  /** Sets the ISV's keys on each connection named, in one transaction. */
  async setGrants(grants: Pick<Grant, 'isvId' | 'connectionId' | 'tenantId' | 'keys'>[]): Promise<void> {
    await this.ds.transaction(async (m) => {
      for (const g of grants) await m.getRepository(Grant).upsert(g, ['isvId', 'connectionId']);
    });
  }

  /** Removes the ISV's grant on the connection; whether it had one. */
  async removeGrant(isvId: string, connectionId: string): Promise<boolean> {
    const res = await this.ds.getRepository(Grant).delete({ isvId, connectionId });
    return (res.affected ?? 0) > 0;
  }

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
