/**
 * The sync states' store (src/sync/freshness.ts): which of a connection's resources are due, claimed at
 * once so that two ticks (or two worker processes) never check the same resource together.
 */
import type { DataSource } from 'typeorm';
import type { SyncResource } from '../connectors/types';

/** A claim lasts this long: a check that died with its process is due again after it. */
export const CLAIM_MS = 10 * 60_000;

export class SyncStatesStore {
  constructor(private readonly ds: DataSource) {}

  /**
   * The resources of `resources` that are due now, claimed until now + CLAIM_MS (a resource never checked
   * has no row yet: it is due, and its row is made here). `dueOnly` false: a sync someone asked for claims
   * them all, so that the scheduler's ticks leave them to it meanwhile.
   */
  async claimDue(tenantId: string, connectionId: string, resources: readonly SyncResource[], dueOnly = true): Promise<Set<SyncResource>> {
    await this.ds.query(
      `INSERT INTO sync_states (tenant_id, connection_id, resource) SELECT $1, $2, r FROM unnest($3::text[]) AS r
       ON CONFLICT (connection_id, resource) DO NOTHING`, [tenantId, connectionId, resources]);
    // Through a CTE: the driver answers an UPDATE's RETURNING rows with its count, a SELECT's as they are.
    const rows: { resource: SyncResource }[] = await this.ds.query(
      `WITH claimed AS (UPDATE sync_states SET next_check_at = now() + ($3::int * interval '1 millisecond')
         WHERE connection_id = $1 AND resource = ANY($2::text[]) AND (NOT $4::boolean OR next_check_at IS NULL OR next_check_at <= now())
         RETURNING resource)
       SELECT resource FROM claimed`, [connectionId, resources, CLAIM_MS, dueOnly]);
    return new Set(rows.map((r) => r.resource));
  }
}
