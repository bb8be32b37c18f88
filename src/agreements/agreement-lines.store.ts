/** The agreements feature's store (docs/architecture.md, Folders): the synced agreements, lines and products a line write names. */
import type { DataSource } from 'typeorm';

export interface LineRow {
  source_id: string;
  agreement_source_id: string;
  product_source_id: string | null;
  quantity: number | null;
  unit_price: number | null;
  unit_cost: number | null;
  effective_start: string | null;
  effective_end: string | null;
}

export interface ProductRow { source_id: string; name: string; sku: string | null; unit_price: number | null; unit_cost: number | null; active: boolean | null }

export class AgreementLinesStore {
  constructor(private readonly ds: DataSource) {}

  /** Every synced agreement of the tenant with this source id (one per PSA connection at most). */
  agreements(tenantId: string, agreementSourceId: string): Promise<{ connection_id: string; status: string }[]> {
    return this.ds.query('SELECT connection_id, status FROM agreements WHERE tenant_id = $1 AND source_id = $2 ORDER BY connection_id', [tenantId, agreementSourceId]);
  }

  lines(tenantId: string, connectionId: string, lineSourceId: string): Promise<LineRow[]> {
    return this.ds.query(
      `SELECT source_id, agreement_source_id, product_source_id, quantity, unit_price, unit_cost, effective_start, effective_end
         FROM agreement_lines WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3`,
      [tenantId, connectionId, lineSourceId],
    );
  }

  products(tenantId: string, connectionId: string, productSourceId: string): Promise<ProductRow[]> {
    return this.ds.query('SELECT source_id, name, sku, unit_price, unit_cost, active FROM products WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [tenantId, connectionId, productSourceId]);
  }
}
