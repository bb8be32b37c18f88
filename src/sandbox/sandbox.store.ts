/**
 * The sandbox service's statements beside its repository calls (docs/architecture.md, Sandbox): the
 * largest numeric vendor id stored per connection (a restarted simulator continues after it), the
 * tenant's last event before a simulated change, and the simulators' snapshot between a graceful close
 * and the next start.
 */
import type { DataSource } from 'typeorm';

export class SandboxStore {
  constructor(private readonly ds: DataSource) {}

  /** Per connection, the largest numeric source_id of the tenant's rows in `table`. */
  largestNumericIds(table: string, tenantId: string): Promise<{ connection_id: string; max: string | null }[]> {
    return this.ds.query(
      `SELECT connection_id, max(source_id::numeric) AS max FROM "${table}" WHERE tenant_id = $1 AND source_id ~ '^[0-9]{1,15}$' GROUP BY connection_id`,
      [tenantId],
    );
  }

  /** The seq of the tenant's last event (0 when it has none), as text. */
  async lastEventSeq(tenantId: string): Promise<string> {
    const [{ seq }] = await this.ds.query('SELECT coalesce(max(seq), 0)::text AS seq FROM "events" WHERE tenant_id = $1', [tenantId]);
    return seq;
  }

  /** Writes (or replaces) a tenant's simulators snapshot: a graceful close does, nothing else. */
  async saveSnapshot(tenantId: string, state: unknown): Promise<void> {
    await this.ds.query(
      `INSERT INTO "sandbox_snapshots" (tenant_id, state, saved_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (tenant_id) DO UPDATE SET state = EXCLUDED.state, saved_at = EXCLUDED.saved_at`,
      [tenantId, JSON.stringify(state)],
    );
  }

  /** Removes and answers a tenant's snapshot (undefined when there is none): it can be restored once only. */
  async takeSnapshot(tenantId: string): Promise<unknown> {
    // As a SELECT, so that every driver answers the rows alone (a bare DELETE answers [rows, count] on some).
    const rows: { state: unknown }[] = await this.ds.query(
      'WITH taken AS (DELETE FROM "sandbox_snapshots" WHERE tenant_id = $1 RETURNING state) SELECT state FROM taken', [tenantId],
    );
    return rows[0]?.state;
  }
}
