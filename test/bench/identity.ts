/**
 * Issue "Companies, contacts, identity": auto-match of a book of 10,000 customers against 10,000 PSA
 * companies (1% of the names shared by two companies) through the service, against a plain SQL join on
 * the normal name over the same rows (the normal names precomputed for it), in the same run.
 */
import { randomUUID } from 'node:crypto';
import type { RunningServer } from '../../src/server';
import { normalizeName } from '../../src/identity/normalize';

const N = Number(process.env.BENCH_BOOK ?? 10_000);

export async function benchAutoMatch(svc: RunningServer): Promise<Record<string, string | number>> {
  const s = svc.services;
  const ds = s.ds;
  const tenant = await s.admin.createTenant('Bench Identity MSP', `bench-identity-${Date.now()}`);
  const conn = await ds.query(
    `INSERT INTO connections (tenant_id, kind, connector, base_url, credentials_encrypted, status_mapping, settings)
     VALUES ($1, 'psa', 'connectwise', 'https://bench.invalid', $2, '{}', '{}') RETURNING id`, [tenant.id, s.box.sealJson({})],
  );
  const connectionId = conn[0].id as string;
  const isv = await s.admin.createIsv('Bench Identity ISV');
  await s.admin.setGrant(isv.id, connectionId, ['psa.company.create']);
  // Company i is named "Company i Ltd"; the last 1% reuse the names of the 1% before them (two companies a name).
  const shared = Math.floor(N / 100);
  const companyName = (i: number) => `Bench Company ${i >= N - shared ? i - shared : i} Ltd`;
  for (let i = 0; i < N; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ id: String(i + j), name: companyName(i + j) }));
    await ds.query(
      `INSERT INTO companies (tenant_id, connection_id, source_id, raw, raw_hash, synced_at, name)
       SELECT $1, $2, x.id, '{}'::jsonb, 'h', now(), x.name FROM jsonb_to_recordset($3::jsonb) AS x(id text, name text)`,
      [tenant.id, connectionId, JSON.stringify(rows)],
    );
  }
  const customers = Array.from({ length: N }, (_, i) => ({ ref: `c-${i}`, name: `bench company ${i}, LTD.` }));
  const access = await s.access.tenantAccess({ kind: 'admin' }, tenant.id);
  // The book without auto-match (the insert is not what is measured).
  for (let i = 0; i < N; i += 1000) {
    await ds.query(
      `INSERT INTO isv_customers (tenant_id, isv_id, ref, name, normalized_name)
       SELECT $1, $2, x.ref, x.name, x.norm FROM jsonb_to_recordset($3::jsonb) AS x(ref text, name text, norm text)`,
      [tenant.id, isv.id, JSON.stringify(customers.slice(i, i + 1000).map((c) => ({ ...c, norm: normalizeName(c.name) })))],
    );
  }
  let t0 = process.hrtime.bigint();
  const matched = await s.identity.autoMatch(access, isv.id);
  const serviceMs = Number(process.hrtime.bigint() - t0) / 1e6;

  // The baseline: the same pairs by one SQL statement, the companies' normal names given to it.
  const baselineTable = `bench_norm_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
  await ds.query(`CREATE TABLE ${baselineTable} (connection_id uuid, source_id text, normalized_name text)`);
  const companies: { source_id: string; name: string }[] = await ds.query('SELECT source_id, name FROM companies WHERE tenant_id = $1', [tenant.id]);
  await ds.query(`INSERT INTO ${baselineTable} SELECT $1::uuid, x.id, x.norm FROM jsonb_to_recordset($2::jsonb) AS x(id text, norm text)`,
    [connectionId, JSON.stringify(companies.map((c) => ({ id: c.source_id, norm: normalizeName(c.name) })))]);
  await ds.query('DELETE FROM identity_matches WHERE tenant_id = $1', [tenant.id]);
  // A fair baseline: an index on the join key and fresh statistics, so the planner hashes instead of looping.
  await ds.query(`CREATE INDEX ON ${baselineTable} (normalized_name)`);
  await ds.query(`ANALYZE ${baselineTable}`);
  await ds.query('ANALYZE isv_customers');
  await ds.query('ANALYZE identity_matches');
  t0 = process.hrtime.bigint();
  const [baseline] = await ds.query(
    `WITH k AS (SELECT normalized_name, min(ref) AS ref FROM isv_customers WHERE tenant_id = $1 AND isv_id = $2 GROUP BY normalized_name HAVING count(*) = 1),
          c AS (SELECT normalized_name, min(connection_id::text)::uuid AS connection_id, min(source_id) AS source_id FROM ${baselineTable} GROUP BY normalized_name HAVING count(*) = 1),
          ins AS (INSERT INTO identity_matches (tenant_id, isv_id, customer_ref, connection_id, company_source_id, how, decided_by)
                  SELECT $1, $2, k.ref, c.connection_id, c.source_id, 'auto_exact_name', 'auto' FROM k JOIN c USING (normalized_name)
                  ON CONFLICT DO NOTHING RETURNING 1)
     SELECT count(*)::int AS n FROM ins`, [tenant.id, isv.id],
  );
  const baselineMs = Number(process.hrtime.bigint() - t0) / 1e6;
  await ds.query(`DROP TABLE ${baselineTable}`);
  return {
    'auto-match: customers / companies': `${N} / ${N}`,
    'auto-match pairs (service / SQL)': `${matched} / ${baseline.n}`,
    'auto-match ms (service)': Math.round(serviceMs),
    'auto-match ms (plain SQL join)': Math.round(baselineMs),
    'auto-match ratio (>=0.5)': +(baselineMs / serviceMs).toFixed(2),
  };
}
