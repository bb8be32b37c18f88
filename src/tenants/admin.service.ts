/**
 * Tenancy changes: ISVs, keys (ISV and MSP), tenants, connections and grants. Internal tooling calls
 * most of these through the graph with the admin token; an MSP key turns its tenant's grants on and off.
 */
import type { DataSource } from 'typeorm';
import { CONNECTION_KINDS, type ApiKey, type Connection, type Grant, type Isv, type KeyCreator, type Tenant } from '../../entities';
import { TenantsStore } from './tenants.store';
import { connectorTitle, isConnectorName, readConnector } from '../connectors/registry';
import { checkCredentials } from './connection-checks';
import { uniqueViolation } from './unique-violation';
import { CANONICAL_STATUSES } from '../connectors/canonical';
import { ServiceError } from '../errors/service-error';
import { generateApiKey, generateMspKey } from '../security/api-keys';
import type { SecretBox } from '../security/secret-box';
import { isUuid } from '../shared/request';
import { isGrantKey, type GrantKey } from '../access/caller';
import { grantKeysFor, refuseKeysNotOffered, type AccessService } from '../access/access.service';
import { offBecause } from '../access/grant-words';
import { blockedGrantsByConnection } from '../access/permission-gaps';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A connection was created (the connection events write `connection.added`: src/events/connection-state.ts). */
    'tenants.connection_added': CommittedReaction<Connection>;
  }
}

const slugTaken = (slug: string) => new ServiceError('validation', `A tenant with slug "${slug}" exists already.`, { details: { field: 'slug' } });

export const WRITE_BACK_TARGETS = ['service_ticket', 'project'] as const;

export interface GrantView {
  isv_id: string;
  isv_name: string;
  connection_id: string;
  kind: string;
  connector: string;
  keys: string[];
  /** Keys the connection's vendor permissions rule out (src/access/permission-gaps.ts): shown off, refused by set_grants. */
  unavailable: { key: string; reason: string; vendor_permissions: string[] }[];
}

export class AdminService {
  private readonly store: TenantsStore;

  constructor(
    private readonly ds: DataSource, private readonly box: SecretBox, private readonly access: AccessService,
    /** Where a created connection is told (`tenants.connection_added`). */
    private readonly changes: CommittedChanges = new CommittedChanges(),
  ) {
    this.store = new TenantsStore(ds);
  }

  async createIsv(name: string, supportedTargets: string[] = [...WRITE_BACK_TARGETS], recommendation: Record<string, string> = {}): Promise<Isv> {
    for (const t of supportedTargets) {
      if (!(WRITE_BACK_TARGETS as readonly string[]).includes(t)) throw new ServiceError('validation', `Unknown write-back target "${t}".`);
    }
    return this.store.createIsv({ name, supportedTargets, routingRecommendation: recommendation });
  }

  private async isv(isvId: string): Promise<Isv> {
    const isv = isUuid(isvId) ? await this.store.isv(isvId) : null;
    if (!isv) throw ServiceError.notFound('ISV');
    return isv;
  }

  private async tenant(tenantId: string): Promise<Tenant> {
    const tenant = isUuid(tenantId) ? await this.store.tenant(tenantId) : null;
    if (!tenant) throw ServiceError.notFound('Tenant');
    return tenant;
  }

  /**
   * The one way an ISV key is minted: by the operator (the graph's `issue_api_key`) or by a person of the
   * ISV (its console's keys page, src/tenants/isv-keys.service.ts), never by a key. `createdBy` is kept.
   */
  async issueApiKey(isvId: string, label = '', createdBy: KeyCreator = { kind: 'operator' }): Promise<{ row: ApiKey; key: string }> {
    await this.isv(isvId);
    const { key, prefix, hash } = generateApiKey();
    const row = await this.store.saveApiKey({ kind: 'isv', isvId, tenantId: null, keyHash: hash, prefix, label, revokedAt: null, createdBy });
    return { row, key };
  }

  /** The MSP's own key for its tenant (`sk_msp_...`). */
  async issueMspKey(tenantId: string, label = ''): Promise<{ row: ApiKey; key: string }> {
    await this.tenant(tenantId);
    const { key, prefix, hash } = generateMspKey();
    const row = await this.store.saveApiKey({ kind: 'msp', isvId: null, tenantId, keyHash: hash, prefix, label, revokedAt: null });
    return { row, key };
  }

  async listKeys(filter: { isvId?: string | null; tenantId?: string | null }): Promise<ApiKey[]> {
    const where: { isvId?: string; tenantId?: string } = {};
    if (filter.isvId) { if (!isUuid(filter.isvId)) return []; where.isvId = filter.isvId; }
    if (filter.tenantId) { if (!isUuid(filter.tenantId)) return []; where.tenantId = filter.tenantId; }
    return this.store.apiKeys(where);
  }

  async revokeApiKey(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const revoked = await this.store.revokeApiKey(id);
    // Awaited: when the revoke answers, every process has been told.
    await this.access.invalidate();
    return revoked;
  }

  async createTenant(name: string, slug: string, sandbox = false): Promise<Tenant> {
    if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(slug)) throw new ServiceError('validation', 'slug must be lowercase letters, digits and dashes.');
    if (await this.store.tenantBySlug(slug)) throw slugTaken(slug);
    // The unique index still decides between two concurrent creates.
    return this.store.saveTenant({ name, slug, sandbox }).catch((err) => { throw uniqueViolation(err, () => slugTaken(slug)); });
  }

  async updateTenant(tenantId: string, change: { name?: string | null; slug?: string | null }): Promise<Tenant> {
    const tenant = await this.tenant(tenantId);
    if (change.slug != null && change.slug !== tenant.slug) {
      if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(change.slug)) throw new ServiceError('validation', 'slug must be lowercase letters, digits and dashes.', { details: { field: 'slug' } });
      tenant.slug = change.slug;
    }
    if (change.name != null) tenant.name = change.name;
    const saved = await this.store.saveTenant(tenant).catch((err) => { throw uniqueViolation(err, () => slugTaken(tenant.slug)); });
    this.access.invalidate();
    return saved;
  }

  /** A tenant by id (404 for an unknown or malformed id). */
  findTenant(tenantId: string): Promise<Tenant> {
    return this.tenant(tenantId);
  }

  /** A connection by id (404 for an unknown or malformed id). */
  async findConnection(connectionId: string): Promise<Connection> {
    const c = isUuid(connectionId) ? await this.store.connection(connectionId) : null;
    if (!c) throw ServiceError.notFound('Connection');
    return c;
  }

  /** Saves changed fields of a connection (credentials already checked, sealed here). */
  async saveConnection(c: Connection, change: { baseUrl?: string; credentials?: Record<string, string>; statusMapping?: Record<string, string> }): Promise<Connection> {
    if (change.baseUrl !== undefined) c.baseUrl = change.baseUrl;
    if (change.credentials !== undefined) c.credentialsEncrypted = this.box.sealJson(change.credentials);
    if (change.statusMapping !== undefined) c.statusMapping = change.statusMapping;
    const saved = await this.store.saveConnection(c);
    this.access.invalidate();
    return saved;
  }

  /** The connection's decrypted credentials (for a re-test after a partial update; never returned). */
  credentialsOf(c: Connection): Record<string, string> {
    return this.box.openJson<Record<string, string>>(c.credentialsEncrypted);
  }

  /** Removes an ISV's grant on a connection; false when it had none. */
  async removeGrant(isvId: string, connectionId: string): Promise<boolean> {
    if (!isUuid(isvId) || !isUuid(connectionId)) return false;
    const removed = await this.store.removeGrant(isvId, connectionId);
    this.access.invalidate();
    return removed;
  }

  async createConnection(input: {
    tenantId: string; kind: string; connector: string; baseUrl: string;
    credentials: Record<string, string>; statusMapping?: Record<string, string>;
  }): Promise<Connection> {
    if (!(CONNECTION_KINDS as readonly string[]).includes(input.kind)) throw new ServiceError('validation', `Unknown connection kind "${input.kind}".`);
    if (!isConnectorName(input.connector)) throw new ServiceError('validation', `Unknown connector "${input.connector}".`);
    const connector = readConnector(input.connector);
    if (connector.kind !== input.kind) throw new ServiceError('validation', `The ${input.connector} connector is a ${connector.kind} connector.`);
    const credentials = checkCredentials(input.connector, input.credentials);
    let url: URL;
    try { url = new URL(input.baseUrl); } catch { throw new ServiceError('validation', 'base_url must be an absolute URL.'); }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ServiceError('validation', 'base_url must be http(s).');
    for (const v of Object.values(input.statusMapping ?? {})) {
      if (!(CANONICAL_STATUSES as readonly string[]).includes(v)) throw new ServiceError('validation', `Unknown canonical status "${v}".`);
    }
    await this.tenant(input.tenantId);
    const saved = await this.store.saveConnection({
      tenantId: input.tenantId,
      kind: input.kind as Connection['kind'],
      connector: input.connector,
      baseUrl: input.baseUrl.replace(/\/$/, ''),
      credentialsEncrypted: this.box.sealJson(credentials),
      statusMapping: input.statusMapping ?? {},
      settings: {},
    });
    this.access.invalidate();
    await this.changes.publish('tenants.connection_added', saved, { tenantId: saved.tenantId, connectionId: saved.id });
    return saved;
  }

  async setGrant(isvId: string, connectionId: string, keys: string[]): Promise<Grant> {
    for (const k of keys) if (!isGrantKey(k)) throw new ServiceError('validation', `Unknown grant key "${k}".`);
    await this.isv(isvId);
    const connection = isUuid(connectionId) ? await this.store.connection(connectionId) : null;
    if (!connection) throw ServiceError.notFound('Connection');
    refuseKeysNotOffered(connection.kind, keys, connection.id);
    const grant = await this.store.setGrant({ isvId, connectionId, tenantId: connection.tenantId, keys: [...new Set(keys)] });
    this.access.invalidate();
    return grant;
  }

  /** Every ISV's grants on the tenant's connections. */
  async listGrants(tenant: Tenant, connections: Connection[]): Promise<GrantView[]> {
    const rows = await this.store.grantsOf(tenant.id);
    const isvs = rows.length ? await this.store.isvsByIds([...new Set(rows.map((r) => r.isvId))]) : [];
    const nameOf = new Map(isvs.map((i) => [i.id, i.name]));
    const byId = new Map(connections.map((c) => [c.id, c]));
    const blocked = await blockedGrantsByConnection(this.ds, tenant.id, connections);
    return rows.filter((g) => byId.has(g.connectionId)).map((g) => ({
      isv_id: g.isvId, isv_name: nameOf.get(g.isvId) ?? '', connection_id: g.connectionId,
      kind: byId.get(g.connectionId)!.kind, connector: byId.get(g.connectionId)!.connector,
      // A key stored before its kind's rule (or by hand) grants nothing there: not shown as held.
      keys: g.keys.filter((k) => (grantKeysFor(byId.get(g.connectionId)!.kind) as string[]).includes(k)).sort(),
      unavailable: [...(blocked.get(g.connectionId)?.entries() ?? [])].map(([key, b]) => ({
        key, reason: offBecause(b, connectorTitle(byId.get(g.connectionId)!.connector)), vendor_permissions: [...new Set(b.needs.map((n) => n.vendorTerms))],
      })),
    }));
  }

  /** The MSP sets an ISV's keys on the connections it names; the others stay as they are. */
  async setGrants(tenant: Tenant, connections: Connection[], isvId: string, entries: { connection_id: string; keys: GrantKey[] }[]): Promise<void> {
    await this.isv(isvId);
    const ids = new Set(connections.map((c) => c.id));
    for (const e of entries) if (!ids.has(e.connection_id)) throw new ServiceError('not_found', `Connection ${e.connection_id} is not a connection of this tenant.`);
    const byId = new Map(connections.map((c) => [c.id, c]));
    for (const e of entries) refuseKeysNotOffered(byId.get(e.connection_id)!.kind, e.keys, e.connection_id);
    // A key the connection's vendor permissions rule out is never granted (the console shows it off; a hand-made request is refused).
    const blocked = await blockedGrantsByConnection(this.ds, tenant.id, entries.map((e) => byId.get(e.connection_id)!));
    for (const e of entries) {
      const ruledOut = e.keys.filter((k) => blocked.get(e.connection_id)?.has(k));
      if (!ruledOut.length) continue;
      const why = ruledOut.map((k) => `${k}: ${offBecause(blocked.get(e.connection_id)!.get(k)!, connectorTitle(byId.get(e.connection_id)!.connector))}`);
      throw new ServiceError('request_invalid', `${ruledOut.join(', ')} cannot be granted on this connection: the vendor permission ${ruledOut.length === 1 ? 'it needs is' : 'they need is'} missing. ${why.join(' ')} Add the permission at the vendor, then Reconnect the system in the console to check again.`, {
        details: { connection_id: e.connection_id, refused: ruledOut, vendor_permissions: [...new Set(ruledOut.flatMap((k) => blocked.get(e.connection_id)!.get(k)!.needs.map((n) => n.vendorTerms)))] },
      });
    }
    await this.store.setGrants(entries.map((e) => ({ isvId, connectionId: e.connection_id, tenantId: tenant.id, keys: [...new Set(e.keys)] })));
    this.access.invalidate();
  }
}
