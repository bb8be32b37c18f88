/** The devices feature's store (docs/architecture.md, Folders): the devices, packages and reservation a deploy reads. */
import type { DataSource } from 'typeorm';

export interface DeviceRow { id: string; source_id: string; connection_id: string; os: string | null; online: boolean; raw: Record<string, unknown> }
export interface PackageRow { source_id: string; name: string; operating_systems: string[] | null; active: boolean }

export class DeployStore {
  constructor(private readonly ds: DataSource) {}

  /** The devices of these RMM connections named by our id or their source id. */
  devices(tenantId: string, connectionIds: string[], deviceId: string): Promise<DeviceRow[]> {
    return this.ds.query(
      `SELECT id, source_id, connection_id, os, online, raw FROM devices
        WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[]) AND (id::text = $3 OR source_id = $3) ORDER BY id`,
      [tenantId, connectionIds, deviceId]);
  }

  /** The catalogue packages of a connection with this name, in any case. */
  packagesNamed(tenantId: string, connectionId: string, name: string): Promise<PackageRow[]> {
    return this.ds.query(
      `SELECT source_id, name, operating_systems, active FROM packages
        WHERE tenant_id = $1 AND connection_id = $2 AND lower(name) = lower($3) ORDER BY source_id`,
      [tenantId, connectionId, name]);
  }

  /** When an idempotency key was first reserved (undefined: no such record). */
  async reservedAt(recordId: string): Promise<Date | undefined> {
    const [row]: { created_at: Date }[] = await this.ds.query('SELECT created_at FROM idempotency_records WHERE id = $1', [recordId]);
    return row?.created_at;
  }
}
