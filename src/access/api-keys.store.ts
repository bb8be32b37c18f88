/** API keys as authorisation reads them (access.service.ts): by hash, their last use, a tenant's MSP keys. */
import { IsNull, type DataSource } from 'typeorm';
import { ApiKey } from '../../entities';

export class ApiKeysStore {
  constructor(private readonly ds: DataSource) {}

  byHash(keyHash: string): Promise<ApiKey | null> {
    return this.ds.getRepository(ApiKey).findOne({ where: { keyHash } });
  }

  /** Records the key's use at `at`, unless another process recorded one within the minute before. */
  async noteLastUsed(id: string, at: Date): Promise<void> {
    await this.ds.query(
      `UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $2::timestamptz - interval '1 minute')`,
      [id, at],
    );
  }

  /** The tenant's unrevoked MSP keys, newest first. */
  unrevokedMspKeys(tenantId: string): Promise<ApiKey[]> {
    return this.ds.getRepository(ApiKey).find({ where: { tenantId, kind: 'msp', revokedAt: IsNull() }, order: { createdAt: 'DESC' } });
  }
}
