/** What /readyz asks the database (src/app.ts). */
import type { DataSource } from 'typeorm';

/**
 * Whether the database answers a read of a real table through the service's own search_path: SELECT 1
 * answered while every API call failed.
 */
export function databaseAnswers(ds: DataSource): Promise<boolean> {
  return ds.query('SELECT 1 FROM tenants LIMIT 1').then(() => true, () => false);
}
