/**
 * The cost rows' and partner minimums' store (docs/architecture.md, Agreements and billing): the
 * replaceable submission (found by key or natural identity, then updated or inserted, inside the
 * caller's transaction), the totals, the charges each row is behind and the pages. The rules (checks,
 * shapes, retries) stay in cost-rows.service.ts.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { ServiceError } from '../errors/service-error';
import { afterKey, keysetAfter, rowsToFetch, toPage, type KeyColumn, type ListCursor, type Page, type PageRequest } from '../shared/paging';

/** One replaceable table: its natural identity and the columns a submission writes. */
export interface RowTable {
  table: 'isv_costs' | 'partner_minimums';
  constraint: string;
  natural: string[];
}
export const COSTS: RowTable = { table: 'isv_costs', constraint: 'uq_isv_costs_row', natural: ['external_customer_ref', 'product_source_id', 'period_start', 'period_end'] };
export const MINIMUMS: RowTable = { table: 'partner_minimums', constraint: 'uq_partner_minimums_row', natural: ['product_source_id', 'period_start', 'period_end'] };

export type Values = Record<string, unknown>;
export type StoredRow = Record<string, unknown> & { id: string; revision: number; created_at: Date; updated_at: Date };

/** Cost rows and minimums page newest period first, then by customer, product and id (unique). */
export const COST_ORDER: KeyColumn[] = [{ sql: 'period_start', desc: true }, { sql: 'external_customer_ref' }, { sql: 'product_source_id' }, { sql: 'id', cast: 'uuid' }];
export const MINIMUM_ORDER: KeyColumn[] = [{ sql: 'period_start', desc: true }, { sql: 'product_source_id' }, { sql: 'id', cast: 'uuid' }];

export class CostRowsStore {
  constructor(private readonly ds: DataSource) {}

  /**
   * The row a submission replaces: the one written under its key, else the one with its natural
   * identity. A key whose row now has another identity that a second row already holds would merge
   * two rows: refused (409), nothing written.
   */
  async prior(t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values, lock: boolean, m: EntityManager = this.ds.manager): Promise<{ id: string; revision: number } | null> {
    const forUpdate = lock ? ' FOR UPDATE' : '';
    const naturalWhere = t.natural.map((c, i) => `${c} = $${i + 3}`).join(' AND ');
    const naturalArgs = t.natural.map((c) => values[c]);
    const byNatural: { id: string; revision: number }[] = await m.query(
      `SELECT id, revision FROM ${t.table} WHERE tenant_id = $1 AND isv_id = $2 AND ${naturalWhere}${forUpdate}`, [tenantId, isvId, ...naturalArgs]);
    if (!key) return byNatural[0] ?? null;
    const byKey: { id: string; revision: number }[] = await m.query(
      `SELECT id, revision FROM ${t.table} WHERE tenant_id = $1 AND isv_id = $2 AND idempotency_key = $3${forUpdate}`, [tenantId, isvId, key]);
    if (byKey[0] && byNatural[0] && byKey[0].id !== byNatural[0].id) {
      throw new ServiceError('idempotency_conflict', `This idempotency_key wrote row ${byKey[0].id}; row ${byNatural[0].id} already holds this ${t.natural.join(', ')}. Replace that row with its own key (or none).`, {
        details: { key_row: byKey[0].id, identity_row: byNatural[0].id },
      });
    }
    return byKey[0] ?? byNatural[0] ?? null;
  }

  async write(m: EntityManager, t: RowTable, tenantId: string, isvId: string, key: string | null, values: Values): Promise<{ row: StoredRow; replaces: string | null }> {
    const before = await this.prior(t, tenantId, isvId, key, values, true, m);
    const cols = Object.keys(values);
    const args = cols.map((c) => values[c]);
    if (before) {
      const set = cols.map((c, i) => `${c} = $${i + 2}`).join(', ');
      const [rows]: [StoredRow[], number] = await m.query(
        `UPDATE ${t.table} SET ${set}, idempotency_key = COALESCE($${cols.length + 2}, idempotency_key), revision = revision + 1, updated_at = now() WHERE id = $1 RETURNING *`,
        [before.id, ...args, key]);
      return { row: rows[0], replaces: before.id };
    }
    const rows: StoredRow[] = await m.query(
      `INSERT INTO ${t.table} (tenant_id, isv_id, idempotency_key, ${cols.join(', ')}) VALUES ($1, $2, $3, ${cols.map((_c, i) => `$${i + 4}`).join(', ')}) RETURNING *`,
      [tenantId, isvId, key, ...args]);
    return { row: rows[0], replaces: null };
  }

  /** The sums of the cost rows `where` keeps (every page of them). */
  async costTotals(where: string, args: unknown[]): Promise<{ billable_quantity: string | null; msp_cost_extended: string | null } | undefined> {
    const [sum]: { billable_quantity: string | null; msp_cost_extended: string | null }[] = await this.ds.query(
      `SELECT SUM(billable_quantity) AS billable_quantity, SUM(msp_cost_extended) AS msp_cost_extended FROM isv_costs WHERE ${where}`, args);
    return sum;
  }

  /** The charges these cost rows are behind, latest first; `own_rows_only`: every row of the charge is `viewer`'s. */
  chargesOfRows(tenantId: string, ids: string[], viewer: string | null): Promise<Record<string, any>[]> {
    return this.ds.query(
      `SELECT ch.id, ch.status, ch.current_quantity, ch.proposed_quantity, ch.cost_rows, ch.updated_at,
              (SELECT bool_and(c.isv_id::text = $3) FROM isv_costs c WHERE c.id::text IN (SELECT jsonb_array_elements_text(ch.cost_rows))) AS own_rows_only
         FROM charges ch WHERE ch.tenant_id = $1 AND ch.cost_rows ?| $2::text[]
        ORDER BY ch.updated_at DESC, ch.id`, [tenantId, ids, viewer ?? '']);
  }

  /** One page of `table` under `where`, in `order`. */
  async page<T>(table: string, where: string, args: unknown[], q: PageRequest, codec: ListCursor, order: KeyColumn[], out: (r: Record<string, any>) => T): Promise<Page<T>> {
    const params = [...args];
    const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
    let sql = `SELECT * FROM ${table} WHERE ${where}`;
    const after = afterKey(codec, q);
    if (after) sql += ` AND ${keysetAfter(order, after, bind)}`;
    if (q.updated_since) sql += ` AND updated_at >= ${bind(q.updated_since)}::timestamptz`;
    sql += ` ORDER BY ${order.map((c) => `${c.sql}${c.desc ? ' DESC' : ''}`).join(', ')} LIMIT ${rowsToFetch(q.limit)}`;
    const rows: Record<string, any>[] = await this.ds.query(sql, params);
    const page = toPage(rows, q.limit, codec, (r) => order.map((c) => String(r[c.sql])));
    return { items: page.items.map(out), next_cursor: page.next_cursor };
  }
}
