/**
 * The agreement-line mappings' store (docs/architecture.md, Agreements and billing): the statements of
 * create (inside its transaction), list, delete and suggest. The rules stay in line-mappings.service.ts.
 */
import type { DataSource, EntityManager } from 'typeorm';

const SELECT = `
  SELECT m.id, m.isv_id, m.vendor_product_ref, m.status, m.connection_id, m.agreement_source_id, m.line_source_id, m.decided_by, m.created_at,
         c.connector, a.company_source_id, a.company_name, l.product_source_id AS line_product_source_id, l.product_name AS line_product_name
    FROM agreement_line_mappings m
    LEFT JOIN connections c ON c.id = m.connection_id
    LEFT JOIN agreements a ON a.tenant_id = m.tenant_id AND a.connection_id = m.connection_id AND a.source_id = m.agreement_source_id
    LEFT JOIN agreement_lines l ON l.tenant_id = m.tenant_id AND l.connection_id = m.connection_id AND l.source_id = m.line_source_id`;

export interface MappingFilter {
  isvId: string | null;
  vendorProductRef?: string | null;
  agreementId?: string | null;
}

export class LineMappingsStore {
  constructor(private readonly ds: DataSource) {}

  /** The ISV's mappings of one product, locked for the rest of the transaction. */
  ofProductForUpdate(m: EntityManager, tenantId: string, isvId: string, productRef: string): Promise<{ id: string; status: string; connection_id: string | null; line_source_id: string | null }[]> {
    return m.query(
      'SELECT id, status, connection_id, line_source_id FROM agreement_line_mappings WHERE tenant_id = $1 AND isv_id = $2 AND vendor_product_ref = $3 FOR UPDATE',
      [tenantId, isvId, productRef]);
  }

  async removeIds(m: EntityManager, ids: string[]): Promise<void> {
    await m.query('DELETE FROM agreement_line_mappings WHERE id = ANY($1)', [ids]);
  }

  /** [tenant, isv, product ref, status, connection, agreement, line]; answers the new id. */
  async insertMapping(m: EntityManager, values: unknown[]): Promise<string> {
    const [row]: { id: string }[] = await m.query(
      `INSERT INTO agreement_line_mappings (tenant_id, isv_id, vendor_product_ref, status, connection_id, agreement_source_id, line_source_id, decided_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'isv') RETURNING id`,
      values);
    return row.id;
  }

  /** One mapping with its connector, agreement company and line product. */
  async one(id: string): Promise<Record<string, any>> {
    const [row] = await this.ds.query(`${SELECT} WHERE m.id = $1`, [id]);
    return row;
  }

  agreements(tenantId: string, connectionIds: string[], agreementId: string): Promise<{ connection_id: string; status: string }[]> {
    return this.ds.query('SELECT connection_id, status FROM agreements WHERE tenant_id = $1 AND connection_id = ANY($2) AND source_id = $3', [tenantId, connectionIds, agreementId]);
  }

  lineAgreement(tenantId: string, connectionId: string, lineRef: string): Promise<{ agreement_source_id: string }[]> {
    return this.ds.query('SELECT agreement_source_id FROM agreement_lines WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [tenantId, connectionId, lineRef]);
  }

  list(tenantId: string, f: MappingFilter): Promise<Record<string, any>[]> {
    const args: unknown[] = [tenantId];
    const where = ['m.tenant_id = $1'];
    const add = (sql: string, v: unknown) => { args.push(v); where.push(sql.replace('?', `$${args.length}`)); };
    if (f.isvId) add('m.isv_id::text = ?', f.isvId);
    if (f.vendorProductRef) add('m.vendor_product_ref = ?', f.vendorProductRef);
    if (f.agreementId) add('m.agreement_source_id = ?', f.agreementId);
    return this.ds.query(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY m.vendor_product_ref, m.agreement_source_id NULLS FIRST, m.line_source_id, m.id`, args);
  }

  /** The mapping of that (uuid) id on the tenant, the ISV's only when `isvId` is given. */
  mappingRows(tenantId: string, id: string, isvId: string | null): Promise<unknown[]> {
    return this.ds.query(`SELECT id FROM agreement_line_mappings WHERE tenant_id = $1 AND id = $2 ${isvId ? 'AND isv_id = $3' : ''}`, isvId ? [tenantId, id, isvId] : [tenantId, id]);
  }

  /** Deletes it; answers the rows deleted. */
  async deleteMapping(tenantId: string, id: string, isvId: string | null): Promise<{ id: string }[]> {
    const [rows]: [{ id: string }[], number] = await this.ds.query(`DELETE FROM agreement_line_mappings WHERE tenant_id = $1 AND id = $2 ${isvId ? 'AND isv_id = $3' : ''} RETURNING id`, isvId ? [tenantId, id, isvId] : [tenantId, id]);
    return rows;
  }

  /** Lines of active agreements on these connections still in effect on `today`, with their catalogue product. */
  activeLines(tenantId: string, connectionIds: string[], today: string): Promise<Record<string, any>[]> {
    return this.ds.query(
      `SELECT l.connection_id, l.agreement_source_id, l.source_id, l.product_source_id, l.product_name, l.quantity, a.name AS agreement_name,
              a.company_source_id, a.company_name, p.sku, p.name AS catalogue_name
         FROM agreement_lines l
         JOIN agreements a ON a.tenant_id = l.tenant_id AND a.connection_id = l.connection_id AND a.source_id = l.agreement_source_id AND a.status = 'active'
         LEFT JOIN products p ON p.tenant_id = l.tenant_id AND p.connection_id = l.connection_id AND p.source_id = l.product_source_id
        WHERE l.tenant_id = $1 AND l.connection_id = ANY($2) AND (l.effective_end IS NULL OR l.effective_end >= $3)`,
      [tenantId, connectionIds, today]);
  }

  /** The PSA companies matched to customers of the ISV that report this product. */
  reportingCompanies(tenantId: string, isvId: string, productRef: string): Promise<{ connection_id: string; company_source_id: string }[]> {
    return this.ds.query(
      `SELECT DISTINCT im.connection_id, im.company_source_id FROM isv_costs c
         JOIN identity_matches im ON im.tenant_id = c.tenant_id AND im.isv_id = c.isv_id AND im.customer_ref = c.external_customer_ref
        WHERE c.tenant_id = $1 AND c.isv_id = $2 AND c.product_source_id = $3`, [tenantId, isvId, productRef]);
  }

  async matchedCompany(tenantId: string, isvId: string, customerRef: string): Promise<{ connection_id: string; company_source_id: string } | undefined> {
    const [m] = await this.ds.query('SELECT connection_id, company_source_id FROM identity_matches WHERE tenant_id = $1 AND isv_id = $2 AND customer_ref = $3', [tenantId, isvId, customerRef]);
    return m;
  }

  mappedLines(tenantId: string, isvId: string, productRef: string): Promise<{ connection_id: string; line_source_id: string }[]> {
    return this.ds.query(
      "SELECT connection_id, line_source_id FROM agreement_line_mappings WHERE tenant_id = $1 AND isv_id = $2 AND vendor_product_ref = $3 AND status = 'mapped'",
      [tenantId, isvId, productRef]);
  }
}
