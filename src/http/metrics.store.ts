/** The reads behind the /metrics gauges that come from the database (metrics.ts shapes the series). */
import type { DataSource } from 'typeorm';

/** Per kind and connector, the worst connection's age in seconds (as text) of its stalest resource's last successful sync. */
export function syncLagByConnector(ds: DataSource): Promise<{ kind: string; connector: string; lag: string }[]> {
  return ds.query(
    `SELECT kind, connector, max(lag)::text AS lag FROM (
       SELECT c.kind, c.connector, extract(epoch FROM now() - min(st.last_synced_at)) AS lag
       FROM "connections" c JOIN "sync_states" st ON st.connection_id = c.id
       WHERE st.last_synced_at IS NOT NULL GROUP BY c.id, c.kind, c.connector) per_connection
     GROUP BY kind, connector`,
  );
}

/** Every connection, with what its budget is read by. */
export function connectionsForBudgets(ds: DataSource): Promise<{ id: string; connector: string; settings: Record<string, unknown> }[]> {
  return ds.query('SELECT id, connector, settings FROM "connections"');
}
