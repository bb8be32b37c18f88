/**
 * Authentication and authorisation, enforced in the graph (design.md section 1): API key -> ISV,
 * tenant visibility (a grant on any of its connections), and grant keys per connection.
 * Lookups on the request path are cached briefly; revoking a key clears this process's cache at once.
 */
import type { DataSource } from 'typeorm';
import { ApiKey, Connection, Grant, Tenant } from '../../entities';
import { ServiceError } from '../errors/service-error';
import { hashApiKey } from '../security/api-keys';
import { TtlCache } from '../shared/ttl-cache';
import type { Caller, GrantKey } from './caller';

export interface TenantAccess {
  tenant: Tenant;
  connections: Connection[];
  /** connection id -> grant keys the caller holds there (admin: every key). */
  grants: Map<string, Set<string>>;
}

const CACHE_MS = 5_000;

export class AccessService {
  private readonly keys = new TtlCache<{ isvId: string; apiKeyId: string } | null>(CACHE_MS);
  private readonly access = new TtlCache<TenantAccess | null>(CACHE_MS);

  constructor(private readonly ds: DataSource) {}

  async authenticate(apiKey: string | undefined): Promise<Caller> {
    if (!apiKey) throw new ServiceError('unauthenticated', 'Send your API key in the X-API-Key header.');
    const hash = hashApiKey(apiKey);
    let hit = this.keys.get(hash);
    if (hit === undefined) {
      const row = await this.ds.getRepository(ApiKey).findOne({ where: { keyHash: hash } });
      hit = row && !row.revokedAt ? { isvId: row.isvId, apiKeyId: row.id } : null;
      this.keys.set(hash, hit);
    }
    if (!hit) throw new ServiceError('unauthenticated', 'The API key is unknown or revoked.');
    return { kind: 'isv', ...hit };
  }

  /** The tenant as the caller may see it; 404 when it is not visible, exactly as when it does not exist. */
  async tenantAccess(caller: Caller, tenantId: string): Promise<TenantAccess> {
    const cacheKey = `${caller.kind === 'isv' ? caller.isvId : 'admin'}:${tenantId}`;
    let hit = this.access.get(cacheKey);
    if (hit === undefined) {
      hit = await this.loadAccess(caller, tenantId);
      this.access.set(cacheKey, hit);
    }
    if (!hit) throw ServiceError.notFound('Tenant');
    return hit;
  }

  private async loadAccess(caller: Caller, tenantId: string): Promise<TenantAccess | null> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId)) return null;
    const tenant = await this.ds.getRepository(Tenant).findOne({ where: { id: tenantId } });
    if (!tenant) return null;
    const connections = await this.ds.getRepository(Connection).find({ where: { tenantId }, order: { createdAt: 'ASC' } });
    const grants = new Map<string, Set<string>>();
    if (caller.kind === 'admin') {
      for (const c of connections) grants.set(c.id, new Set(['*']));
      return { tenant, connections, grants };
    }
    const rows = await this.ds.getRepository(Grant).find({ where: { tenantId, isvId: caller.isvId } });
    if (rows.length === 0) return null;
    for (const g of rows) grants.set(g.connectionId, new Set(g.keys));
    return { tenant, connections, grants };
  }

  async visibleTenants(caller: Caller): Promise<Tenant[]> {
    const qb = this.ds.getRepository(Tenant).createQueryBuilder('t').orderBy('t.created_at', 'ASC');
    if (caller.kind === 'isv') {
      qb.where('EXISTS (SELECT 1 FROM grants g WHERE g.tenant_id = t.id AND g.isv_id = :isv)', { isv: caller.isvId });
    }
    return qb.getMany();
  }

  /** Connections of the tenant on which the caller holds `key`; grant_missing when there are none. */
  requireGrant(access: TenantAccess, key: GrantKey, kind?: Connection['kind']): Connection[] {
    const held = access.connections.filter((c) => {
      if (kind && c.kind !== kind) return false;
      const keys = access.grants.get(c.id);
      return keys?.has(key) || keys?.has('*');
    });
    if (held.length === 0) throw ServiceError.grantMissing(key);
    return held;
  }

  invalidate(): void {
    this.keys.clear();
    this.access.clear();
  }
}
