/** Internal tooling operations (GraphQL, admin token): ISVs, keys, tenants, connections, grants. */
import type { DataSource } from 'typeorm';
import { ApiKey, Connection, CONNECTION_KINDS, CONNECTOR_NAMES, Grant, Isv, Tenant } from '../../entities';
import { readConnector } from '../connectors/registry';
import { CANONICAL_STATUSES } from '../connectors/canonical';
import { ServiceError } from '../errors/service-error';
import { generateApiKey } from '../security/api-keys';
import type { SecretBox } from '../security/secret-box';
import { GRANT_KEYS } from './caller';
import type { AccessService } from './access.service';

export const WRITE_BACK_TARGETS = ['service_ticket', 'project'] as const;

export class AdminService {
  constructor(private readonly ds: DataSource, private readonly box: SecretBox, private readonly access: AccessService) {}

  async createIsv(name: string, supportedTargets: string[] = [...WRITE_BACK_TARGETS], recommendation: Record<string, string> = {}): Promise<Isv> {
    for (const t of supportedTargets) {
      if (!(WRITE_BACK_TARGETS as readonly string[]).includes(t)) throw new ServiceError('validation', `Unknown write-back target "${t}".`);
    }
    return this.ds.getRepository(Isv).save({ name, supportedTargets, routingRecommendation: recommendation });
  }

  async issueApiKey(isvId: string, label = ''): Promise<{ row: ApiKey; key: string }> {
    await this.ds.getRepository(Isv).findOneByOrFail({ id: isvId }).catch(() => { throw ServiceError.notFound('ISV'); });
    const { key, prefix, hash } = generateApiKey();
    const row = await this.ds.getRepository(ApiKey).save({ isvId, keyHash: hash, prefix, label, revokedAt: null });
    return { row, key };
  }

  async revokeApiKey(id: string): Promise<boolean> {
    const res = await this.ds.getRepository(ApiKey).update({ id }, { revokedAt: new Date() });
    this.access.invalidate();
    return (res.affected ?? 0) > 0;
  }

  async createTenant(name: string, slug: string, sandbox = false): Promise<Tenant> {
    if (!/^[a-z0-9][a-z0-9-]{1,62}$/.test(slug)) throw new ServiceError('validation', 'slug must be lowercase letters, digits and dashes.');
    return this.ds.getRepository(Tenant).save({ name, slug, sandbox });
  }

  async createConnection(input: {
    tenantId: string; kind: string; connector: string; baseUrl: string;
    credentials: Record<string, string>; statusMapping?: Record<string, string>;
  }): Promise<Connection> {
    if (!(CONNECTION_KINDS as readonly string[]).includes(input.kind)) throw new ServiceError('validation', `Unknown connection kind "${input.kind}".`);
    if (!(CONNECTOR_NAMES as readonly string[]).includes(input.connector)) throw new ServiceError('validation', `Unknown connector "${input.connector}".`);
    const connector = readConnector(input.connector as Connection['connector']);
    if (connector.kind !== input.kind) throw new ServiceError('validation', `The ${input.connector} connector is a ${connector.kind} connector.`);
    let url: URL;
    try { url = new URL(input.baseUrl); } catch { throw new ServiceError('validation', 'base_url must be an absolute URL.'); }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new ServiceError('validation', 'base_url must be http(s).');
    for (const v of Object.values(input.statusMapping ?? {})) {
      if (!(CANONICAL_STATUSES as readonly string[]).includes(v)) throw new ServiceError('validation', `Unknown canonical status "${v}".`);
    }
    await this.ds.getRepository(Tenant).findOneByOrFail({ id: input.tenantId }).catch(() => { throw ServiceError.notFound('Tenant'); });
    const saved = await this.ds.getRepository(Connection).save({
      tenantId: input.tenantId,
      kind: input.kind as Connection['kind'],
      connector: input.connector as Connection['connector'],
      baseUrl: input.baseUrl.replace(/\/$/, ''),
      credentialsEncrypted: this.box.sealJson(input.credentials),
      statusMapping: input.statusMapping ?? {},
      settings: {},
    });
    this.access.invalidate();
    return saved;
  }

  async setGrant(isvId: string, connectionId: string, keys: string[]): Promise<Grant> {
    for (const k of keys) {
      if (!(GRANT_KEYS as readonly string[]).includes(k)) throw new ServiceError('validation', `Unknown grant key "${k}".`);
    }
    const connection = await this.ds.getRepository(Connection).findOneBy({ id: connectionId });
    if (!connection) throw ServiceError.notFound('Connection');
    const repo = this.ds.getRepository(Grant);
    await repo.upsert({ isvId, connectionId, tenantId: connection.tenantId, keys: [...new Set(keys)] }, ['isvId', 'connectionId']);
    this.access.invalidate();
    return repo.findOneByOrFail({ isvId, connectionId });
  }
}
