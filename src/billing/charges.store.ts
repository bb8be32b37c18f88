/**
 * The charges' store (docs/architecture.md, Agreements and billing): the statements of the recomputation
 * (run inside its transaction, under the tenant's lock), the charge lists and the decisions (approval claim, dismiss, restore). The rules
 * (what a charge proposes, when it is stale, what an approval sends) stay in charges.service.ts.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { z } from 'zod';
import { afterKey, keysetAfter, rowsToFetch, toPage, type KeyColumn } from '../shared/paging';
import { CHARGES_CURSOR, type ChargesQuery } from './billing.schemas';

export interface LineFacts {
  connection_id: string;
  source_id: string;
  quantity: number | null;
  unit_price: number | null;
  unit_cost: number | null;
  product_source_id: string | null;
  product_name: string | null;
  effective_start: string | null;
  effective_end: string | null;
  company_source_id: string | null;
  company_name: string | null;
}

export const lineKey = (connectionId: string, lineSourceId: string) => `${connectionId}|${lineSourceId}`;

const CHARGE_SELECT = 'SELECT ch.*, c.connector FROM charges ch JOIN connections c ON c.id = ch.connection_id';
/** Charges newest period first, then by agreement, line and id (unique). */
const CHARGE_ORDER: KeyColumn[] = [{ sql: 'ch.period_start', desc: true }, { sql: 'ch.agreement_source_id' }, { sql: 'ch.line_source_id' }, { sql: 'ch.id', cast: 'uuid' }];

export class ChargesStore {
  constructor(private readonly ds: DataSource) {}

  /** One recomputation per tenant at a time (across processes on PostgreSQL). */
  async lock(m: EntityManager, tenantId: string): Promise<void> {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`charges:${tenantId}`]);
  }

  existing(m: EntityManager, tenantId: string): Promise<Record<string, any>[]> {
    return m.query('SELECT id, connection_id, line_source_id, status, proposed_quantity, current_quantity, unit_price, period_start, period_end, cost_rows FROM charges WHERE tenant_id = $1', [tenantId]);
  }

  /** [id, proposed quantity, current quantity, unit price, period start, period end, cost rows]. */
  async updateCharge(m: EntityManager, values: unknown[]): Promise<void> {
    await m.query(
      `UPDATE charges SET proposed_quantity = $2, current_quantity = $3, unit_price = $4, period_start = $5, period_end = $6, cost_rows = $7, updated_at = now() WHERE id = $1`,
      values);
  }

  /** New pending charges, 500 a statement; each row has the 14 columns before `status`. */
  async insertPendingCharges(m: EntityManager, inserts: unknown[][]): Promise<void> {
    for (let i = 0; i < inserts.length; i += 500) {
      const chunk = inserts.slice(i, i + 500);
      const values = chunk.map((_r, j) => `(${Array.from({ length: 14 }, (_x, k) => `$${j * 14 + k + 1}`).join(', ')}, 'pending')`).join(', ');
      await m.query(
        `INSERT INTO charges (tenant_id, connection_id, agreement_source_id, line_source_id, company_source_id, company_name, product_source_id, product_name, current_quantity, proposed_quantity, unit_price, period_start, period_end, cost_rows, status) VALUES ${values}`,
        chunk.flat());
    }
  }

  async deleteCharges(m: EntityManager, ids: string[]): Promise<void> {
    await m.query('DELETE FROM charges WHERE id = ANY($1)', [ids]);
  }

  /** The agreement line behind each charge to be, with its agreement's company and its product's name. */
  async lineFacts(tenantId: string, lineIds: string[], m: EntityManager = this.ds.manager): Promise<Map<string, LineFacts>> {
    if (!lineIds.length) return new Map();
    const rows: LineFacts[] = await m.query(
      `SELECT l.connection_id, l.source_id, l.quantity, l.unit_price, l.unit_cost, l.product_source_id, COALESCE(p.name, l.product_name) AS product_name,
              l.effective_start, l.effective_end, a.company_source_id, a.company_name
         FROM agreement_lines l
         JOIN agreements a ON a.tenant_id = l.tenant_id AND a.connection_id = l.connection_id AND a.source_id = l.agreement_source_id
         LEFT JOIN products p ON p.tenant_id = l.tenant_id AND p.connection_id = l.connection_id AND p.source_id = l.product_source_id
        WHERE l.tenant_id = $1 AND l.source_id = ANY($2)`, [tenantId, [...new Set(lineIds)]]);
    return new Map(rows.map((r) => [lineKey(r.connection_id, r.source_id), r]));
  }

  /** The billable quantity of each of these cost rows that belongs to the ISV. */
  isvQuantities(tenantId: string, isvId: string, ids: string[]): Promise<{ id: string; billable_quantity: number }[]> {
    return this.ds.query('SELECT id, billable_quantity FROM isv_costs WHERE tenant_id = $1 AND isv_id = $2 AND id = ANY($3::uuid[])', [tenantId, isvId, ids]);
  }

  /** One page of charge rows; with `isvId`, only the charges some row of that ISV is behind. */
  async page(tenantId: string, q: z.infer<typeof ChargesQuery>, isvId: string | null): Promise<{ rows: Record<string, any>[]; next_cursor: string | null }> {
    const args: unknown[] = [tenantId];
    const bind = (v: unknown) => { args.push(v); return `$${args.length}`; };
    let where = 'ch.tenant_id = $1';
    if (isvId) {
      where += ` AND EXISTS (SELECT 1 FROM isv_costs c WHERE c.tenant_id = ch.tenant_id AND c.isv_id = ${bind(isvId)}::uuid
                             AND c.id::text IN (SELECT jsonb_array_elements_text(ch.cost_rows)))`;
    }
    // An approval being written is still pending to whoever lists pending charges.
    if (q.status) where += ` AND ch.status = ANY(${bind(q.status === 'pending' ? ['pending', 'approving'] : [q.status])})`;
    const after = afterKey(CHARGES_CURSOR, q);
    if (after) where += ` AND ${keysetAfter(CHARGE_ORDER, after, bind)}`;
    if (q.updated_since) where += ` AND ch.updated_at >= ${bind(q.updated_since)}::timestamptz`;
    const rows: Record<string, any>[] = await this.ds.query(
      `${CHARGE_SELECT} WHERE ${where} ORDER BY ${CHARGE_ORDER.map((c) => `${c.sql}${c.desc ? ' DESC' : ''}`).join(', ')} LIMIT ${rowsToFetch(q.limit)}`, args);
    const page = toPage(rows, q.limit, CHARGES_CURSOR, (r) => [r.period_start, r.agreement_source_id, r.line_source_id, r.id]);
    return { rows: page.items, next_cursor: page.next_cursor };
  }

  /** The charge of that id on the tenant (none or one row). */
  one(tenantId: string, id: string): Promise<Record<string, any>[]> {
    return this.ds.query(`${CHARGE_SELECT} WHERE ch.tenant_id = $1 AND ch.id = $2`, [tenantId, id]);
  }

  /**
   * Moves a charge from one decision state to the other (dismiss: pending -> dismissed, restore: dismissed
   * -> pending); answers the rows it changed (none when the charge was no longer in `from`).
   */
  async decide(id: string, from: 'pending' | 'dismissed', to: 'pending' | 'dismissed'): Promise<unknown[]> {
    const decidedAt = to === 'dismissed' ? 'now()' : 'NULL';
    const [rows]: [unknown[], number] = await this.ds.query(
      `UPDATE charges SET status = $3, decided_at = ${decidedAt}, updated_at = now() WHERE id = $1 AND status = $2 RETURNING id`, [id, from, to]);
    return rows;
  }

  /** Claims a pending charge for approval (a take-over may claim one it was approving); false: taken or decided. */
  async claimForApproval(id: string, takeover: boolean): Promise<boolean> {
    const [claimed]: [unknown[], number] = await this.ds.query(
      `UPDATE charges SET status = 'approving', updated_at = now() WHERE id = $1 AND (status = 'pending' OR (status = 'approving' AND $2::boolean)) RETURNING id`,
      [id, takeover]);
    return claimed.length > 0;
  }

  /** An approval whose write failed gives the charge back. */
  async releaseApproval(id: string): Promise<void> {
    await this.ds.query("UPDATE charges SET status = 'pending', updated_at = now() WHERE id = $1 AND status = 'approving'", [id]);
  }

  async markApproved(id: string): Promise<void> {
    await this.ds.query("UPDATE charges SET status = 'approved', decided_at = now(), updated_at = now() WHERE id = $1", [id]);
  }
}
