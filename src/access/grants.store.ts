/**
 * What authorisation reads to decide who sees what (access.service.ts holds the rules): tenants, their
 * connections, and the grant rows ISVs hold on them.
 */
import { In, type DataSource } from 'typeorm';
import { Connection, Grant, Isv, Tenant } from '../../entities';

export class GrantsStore {
  constructor(private readonly ds: DataSource) {}

  tenant(id: string): Promise<Tenant | null> {
    return this.ds.getRepository(Tenant).findOne({ where: { id } });
  }

  isv(id: string): Promise<Isv | null> {
    return this.ds.getRepository(Isv).findOneBy({ id });
  }

  /** The tenant's connections, oldest first. */
  connectionsOf(tenantId: string): Promise<Connection[]> {
    return this.ds.getRepository(Connection).find({ where: { tenantId }, order: { createdAt: 'ASC' } });
  }

  /** The connections of the tenants, with only their id, tenant and kind. */
  connectionKindsOf(tenantIds: string[]): Promise<Pick<Connection, 'id' | 'tenantId' | 'kind'>[]> {
    return this.ds.getRepository(Connection).find({ where: { tenantId: In(tenantIds) }, select: { id: true, tenantId: true, kind: true } });
  }

  connection(id: string): Promise<Connection> {
    return this.ds.getRepository(Connection).findOneByOrFail({ id });
  }

  /** Tenants oldest first: every one, those on which `isvId` holds a grant key, or the one `tenantId`. */
  tenants(only: { isvId: string } | { tenantId: string } | null): Promise<Tenant[]> {
    const qb = this.ds.getRepository(Tenant).createQueryBuilder('t').orderBy('t.created_at', 'ASC');
    if (only && 'isvId' in only) {
      qb.where("EXISTS (SELECT 1 FROM grants g WHERE g.tenant_id = t.id AND g.isv_id = :isv AND g.keys <> '[]'::jsonb)", { isv: only.isvId });
    } else if (only) {
      qb.where('t.id = :id', { id: only.tenantId });
    }
    return qb.getMany();
  }

  /** The grant rows the ISVs hold on the tenant. */
  grantsOfIsvs(tenantId: string, isvIds: string[]): Promise<Grant[]> {
    return this.ds.getRepository(Grant).find({ where: { tenantId, isvId: In(isvIds) } });
  }

  /** The grant rows the ISV holds on the tenants. */
  grantsOnTenants(isvId: string, tenantIds: string[]): Promise<Grant[]> {
    return this.ds.getRepository(Grant).find({ where: { isvId, tenantId: In(tenantIds) } });
  }

  /** Whether the ISV holds any grant row on the tenant. */
  async hasGrantRow(tenantId: string, isvId: string): Promise<boolean> {
    const rows = await this.ds.query('SELECT 1 FROM grants WHERE tenant_id = $1 AND isv_id::text = $2 LIMIT 1', [tenantId, isvId]);
    return rows.length > 0;
  }
}
