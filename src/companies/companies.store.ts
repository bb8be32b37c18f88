/**
 * The companies feature's store: the statements its company create (match first) and contact match run
 * (docs/architecture.md, Companies, contacts and identity). The rules stay in feature.ts; the SQL is here.
 */
import type { DataSource } from 'typeorm';
import type { PsaCompany } from '../identity/identity.service';

export class CompaniesStore {
  constructor(private readonly ds: DataSource) {}

  /** The company on one of `connectionIds` that the ISV's book matched to `customerRef`, if any. */
  async matchedCompany(tenantId: string, isvId: string, customerRef: string, connectionIds: string[]): Promise<PsaCompany | null> {
    const [m] = await this.ds.query(
      `SELECT c.connection_id, c.source_id, c.name, c.identifier FROM identity_matches m
         JOIN companies c ON c.tenant_id = m.tenant_id AND c.connection_id = m.connection_id AND c.source_id = m.company_source_id
        WHERE m.tenant_id = $1 AND m.isv_id = $2 AND m.customer_ref = $3 AND m.connection_id = ANY($4::uuid[])`,
      [tenantId, isvId, customerRef, connectionIds],
    );
    return m ?? null;
  }

  /** Every company of these connections, in source id order. */
  companiesOf(tenantId: string, connectionIds: string[]): Promise<PsaCompany[]> {
    return this.ds.query(
      'SELECT connection_id, source_id, name, identifier FROM companies WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[]) ORDER BY source_id',
      [tenantId, connectionIds],
    );
  }

  /** Contacts of these connections (id, names, their company's name), those of `email` (any case) only when it is given. */
  contacts(tenantId: string, email: string | null, connectionIds: string[]): Promise<{ id: string; first_name: string | null; last_name: string | null; company_name: string | null }[]> {
    return this.ds.query(
      `SELECT r.id, r.first_name, r.last_name, (SELECT c.name FROM companies c WHERE c.tenant_id = r.tenant_id AND c.connection_id = r.connection_id AND c.source_id = r.company_source_id LIMIT 1) AS company_name
         FROM contacts r WHERE r.tenant_id = $1 AND r.connection_id = ANY($3::uuid[]) AND ($2::text IS NULL OR lower(r.email) = lower($2)) ORDER BY r.id`,
      [tenantId, email, connectionIds],
    );
  }
}
