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
    // One statement per tick: a missing row is made claimed, an existing one is claimed only when due (a row
    // the WHERE leaves alone is neither written nor returned). Through a CTE: the driver answers a bare
    // RETURNING with its count on some statements, a SELECT's rows as they are.
    const rows: { resource: SyncResource }[] = await this.ds.query(
      `WITH claimed AS (
         INSERT INTO sync_states (tenant_id, connection_id, resource, next_check_at)
         SELECT $1, $2, r, now() + ($4::int * interval '1 millisecond') FROM unnest($3::text[]) AS r
         ON CONFLICT (connection_id, resource) DO UPDATE SET next_check_at = EXCLUDED.next_check_at
         WHERE NOT $5::boolean OR sync_states.next_check_at IS NULL OR sync_states.next_check_at <= now()
         RETURNING resource)
       SELECT resource FROM claimed`, [tenantId, connectionId, resources, CLAIM_MS, dueOnly]);
    return new Set(rows.map((r) => r.resource));
  }
}
