/**
 * Ask's store (docs/architecture.md, Device write and ask): the statements an answer runs. The service
 * compiles a validated query into its FROM and WHERE (from the resource definitions of ask.resources.ts,
 * every value a parameter); the statements themselves are run here.
 */
import type { DataSource } from 'typeorm';

export interface CitedRow {
  id: string;
  source_id: string;
  label: string | null;
  company: string | null;
}

export class AskStore {
  constructor(private readonly ds: DataSource) {}

  /** Every company name the tenant's records of these connections carry, for the parser. */
  companyNames(tenantId: string, connectionIds: string[]): Promise<{ name: string }[]> {
    return this.ds.query(
      `SELECT name FROM (
         SELECT company_name AS name FROM tickets WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[])
         UNION SELECT company_name FROM devices WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[])
         UNION SELECT company_name FROM agreements WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[])
         UNION SELECT name FROM companies WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[])
       ) n WHERE name IS NOT NULL AND name <> '' ORDER BY name`,
      [tenantId, connectionIds],
    );
  }

  applicationNames(tenantId: string, connectionIds: string[]): Promise<{ name: string }[]> {
    return this.ds.query(
      'SELECT DISTINCT name FROM installed_applications WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[]) ORDER BY name',
      [tenantId, connectionIds],
    );
  }

  /** The `limit` largest groups by `key` of the records `from` keeps. */
  top(key: string, from: string, limit: number, values: unknown[]): Promise<{ name: string; n: number }[]> {
    return this.ds.query(
      `SELECT ${key} AS name, COUNT(*)::int AS n ${from} AND ${key} IS NOT NULL GROUP BY ${key} ORDER BY n DESC, ${key} ASC LIMIT ${limit}`,
      values,
    );
  }

  async countRecords(from: string, values: unknown[]): Promise<number> {
    const [{ n }] = await this.ds.query(`SELECT COUNT(*)::int AS n ${from}`, values);
    return n;
  }

  /** The rows of `statement` (a SELECT with its FROM and WHERE) in `orderBy`, at most `limit`. */
  rows(statement: string, orderBy: string, limit: number, values: unknown[]): Promise<CitedRow[]> {
    return this.ds.query(`${statement} ORDER BY ${orderBy} LIMIT ${limit}`, values);
  }

  /** The oldest last sync of these (connection, resource) pairs, and how many of them ever synced. */
  async oldestSync(pairs: [string, string][]): Promise<{ oldest: Date | null; n: number } | undefined> {
    const [row] = await this.ds.query(
      `SELECT MIN(s.last_synced_at) AS oldest, COUNT(s.last_synced_at)::int AS n
         FROM unnest($1::uuid[], $2::text[]) AS c(id, resource)
         LEFT JOIN sync_states s ON s.connection_id = c.id AND s.resource = c.resource`,
      [pairs.map((x) => x[0]), pairs.map((x) => x[1])],
    );
    return row;
  }
}
