/**
 * The sandbox service's statements beside its repository calls (docs/architecture.md, Sandbox): the
 * largest numeric vendor id stored per connection (a restarted simulator continues after it) and the
 * tenant's last event before a simulated change.
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
}
