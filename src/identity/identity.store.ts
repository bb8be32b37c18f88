/**
 * The identity feature's store: the statements of the book, auto-match, company resolution and the
 * import endpoint (docs/architecture.md, Companies, contacts and identity). IdentityService holds the
 * rules and reaches the database only through this module; a method that takes an EntityManager runs
 * inside the service's transaction.
 */
import { In, type DataSource, type EntityManager } from 'typeorm';
import { IdentityMatch, IdentitySkip, ImportEndpoint, IsvCustomer, type Connection, type DecidedBy } from '../../entities';
import { preparedQuery } from '../db/prepared';

/** A PSA company as the store holds it (the shape identity and company create match on). */
export interface PsaCompany {
  connection_id: string;
  source_id: string;
  name: string;
  identifier: string | null;
}

/** One side of a decision: a book customer (its ref) or a PSA company (`connection:source`). */
export type IdentitySide = 'isv_customer' | 'psa_company';

/** A book customer as it is written (its normal name computed by the service). */
export interface CustomerRow { tenantId: string; isvId: string; ref: string; name: string; normalizedName: string; domain: string | null }

export class IdentityStore {
  constructor(private readonly ds: DataSource) {}

  /** The companies of these (PSA) connections, by name when `ordered`. */
  companies(tenantId: string, connectionIds: string[], ordered: boolean): Promise<PsaCompany[]> {
    return this.ds.query(
      `SELECT connection_id, source_id, name, identifier FROM companies WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[])${ordered ? ' ORDER BY name, source_id' : ''}`,
      [tenantId, connectionIds],
    );
  }

  /** The companies of these (PSA) connections with their vendor record (what tells companies of one name apart). */
  companiesWithRaw(tenantId: string, connectionIds: string[]): Promise<(PsaCompany & { raw: Record<string, unknown> | null })[]> {
    return this.ds.query(
      'SELECT connection_id, source_id, name, identifier, raw FROM companies WHERE tenant_id = $1 AND connection_id = ANY($2::uuid[]) ORDER BY name, source_id',
      [tenantId, connectionIds],
    );
  }

  /** How many customers the ISV's book holds and how many of them are matched. */
  async bookCounts(tenantId: string, isvId: string): Promise<{ total: number; matched: number }> {
    const [counts] = await this.ds.query(
      `SELECT count(*)::int AS total, count(m.id)::int AS matched FROM isv_customers k
         LEFT JOIN identity_matches m ON m.tenant_id = k.tenant_id AND m.isv_id = k.isv_id AND m.customer_ref = k.ref
        WHERE k.tenant_id = $1 AND k.isv_id = $2`, [tenantId, isvId],
    );
    return counts;
  }

  customerNames(tenantId: string, isvId: string): Promise<{ ref: string; normalized_name: string }[]> {
    return this.ds.query('SELECT ref, normalized_name FROM isv_customers WHERE tenant_id = $1 AND isv_id = $2', [tenantId, isvId]);
  }

  matchKeys(tenantId: string, isvId: string): Promise<{ customer_ref: string; connection_id: string; company_source_id: string }[]> {
    return this.ds.query('SELECT customer_ref, connection_id, company_source_id FROM identity_matches WHERE tenant_id = $1 AND isv_id = $2', [tenantId, isvId]);
  }

  skipKeys(tenantId: string, isvId: string): Promise<{ side: string; subject: string }[]> {
    return this.ds.query('SELECT side, subject FROM identity_skips WHERE tenant_id = $1 AND isv_id = $2', [tenantId, isvId]);
  }

  /** One statement for the whole set; a pair decided meanwhile by someone else wins (DO NOTHING). Answers a row per insert. */
  insertAutoMatches(tenantId: string, isvId: string, rows: { ref: string; connection_id: string; source_id: string }[]): Promise<unknown[]> {
    return this.ds.query(
      `INSERT INTO identity_matches (tenant_id, isv_id, customer_ref, connection_id, company_source_id, how, decided_by)
       SELECT $1, $2, x.ref, x.connection_id, x.source_id, 'auto_exact_name', 'auto'
         FROM jsonb_to_recordset($3::jsonb) AS x(ref text, connection_id uuid, source_id text)
       ON CONFLICT DO NOTHING RETURNING 1`,
      [tenantId, isvId, JSON.stringify(rows)],
    );
  }

  async isvsWithBooks(tenantId: string): Promise<string[]> {
    return (await this.ds.query('SELECT DISTINCT isv_id FROM isv_customers WHERE tenant_id = $1', [tenantId])).map((r: { isv_id: string }) => r.isv_id);
  }

  /**
   * One round trip: the caller's matched company (rank 0), else companies of exactly that name (rank 1).
   * The match subquery names the tenant by parameter, not by the outer row: evaluated once, and each
   * branch is one index lookup (ix_companies_name), however many companies the connection has.
   */
  matchedOrNamed(c: Connection, isvId: string | null, wanted: string, name: string): Promise<(PsaCompany & { rank: number })[]> {
    return preparedQuery<PsaCompany & { rank: number }>(this.ds,
      `SELECT c.connection_id, c.source_id, c.name, c.identifier, 0 AS rank FROM companies c
         WHERE $2::uuid IS NOT NULL AND c.tenant_id = $5 AND c.connection_id = $1 AND c.source_id = (
           SELECT m.company_source_id FROM identity_matches m
             JOIN isv_customers k ON k.tenant_id = m.tenant_id AND k.isv_id = m.isv_id AND k.ref = m.customer_ref
            WHERE m.tenant_id = $5 AND m.isv_id = $2 AND m.connection_id = $1 AND (k.normalized_name = $3 OR k.ref = $4)
            ORDER BY (k.ref = $4) DESC LIMIT 1)
       UNION ALL
       SELECT connection_id, source_id, name, identifier, 1 AS rank FROM companies WHERE tenant_id = $5 AND connection_id = $1 AND name = $4
       ORDER BY rank, source_id`,
      [c.id, isvId, wanted, name, c.tenantId],
    );
  }

  companiesOfConnection(c: Connection): Promise<PsaCompany[]> {
    return preparedQuery<PsaCompany>(this.ds,
      'SELECT connection_id, source_id, name, identifier FROM companies WHERE tenant_id = $2 AND connection_id = $1 ORDER BY source_id', [c.id, c.tenantId]);
  }

  /** The ISV's import endpoint on the tenant, if it registered one. */
  importEndpoint(tenantId: string, isvId: string): Promise<ImportEndpoint | null> {
    return this.ds.getRepository(ImportEndpoint).findOneBy({ tenantId, isvId });
  }

  /** Registers (or replaces) the ISV's import endpoint; answers the stored row. */
  async putImportEndpoint(tenantId: string, isvId: string, url: string, secretEncrypted: string): Promise<ImportEndpoint> {
    const repo = this.ds.getRepository(ImportEndpoint);
    await repo.upsert({ tenantId, isvId, url, secretEncrypted }, ['tenantId', 'isvId']);
    return repo.findOneByOrFail({ tenantId, isvId });
  }

  // ---- the book ------------------------------------------------------------------------------

  /** Upserts customers of a book; one pushed again unchanged is left as it is (its updated_at too). */
  async upsertCustomers(m: EntityManager, rows: CustomerRow[]): Promise<void> {
    await m.createQueryBuilder().insert().into(IsvCustomer).values(rows)
      .orUpdate(['name', 'normalized_name', 'domain'], ['tenant_id', 'isv_id', 'ref'], { skipUpdateIfNoValuesChanged: true }).execute();
  }

  /** Adds or renames one customer (its updated_at moves). */
  async upsertCustomer(row: CustomerRow): Promise<void> {
    await this.ds.createQueryBuilder().insert().into(IsvCustomer).values(row)
      .orUpdate(['name', 'normalized_name', 'updated_at'], ['tenant_id', 'isv_id', 'ref']).execute();
  }

  /** One ISV's book, by ref. */
  customersOfIsv(tenantId: string, isvId: string): Promise<IsvCustomer[]> {
    return this.ds.getRepository(IsvCustomer).find({ where: { tenantId, isvId }, order: { ref: 'ASC' } });
  }

  /** The books of these ISVs on the tenant (null: every ISV's). */
  customersOfTenant(tenantId: string, isvIds: string[] | null): Promise<IsvCustomer[]> {
    return this.ds.getRepository(IsvCustomer).find({ where: { tenantId, ...(isvIds ? { isvId: In(isvIds) } : {}) } });
  }

  customer(tenantId: string, isvId: string, ref: string): Promise<IsvCustomer | null> {
    return this.ds.getRepository(IsvCustomer).findOneBy({ tenantId, isvId, ref });
  }

  /** Deletes one customer; whether there was one. */
  async deleteCustomer(m: EntityManager, tenantId: string, isvId: string, ref: string): Promise<boolean> {
    return ((await m.getRepository(IsvCustomer).delete({ tenantId, isvId, ref })).affected ?? 0) > 0;
  }

  // ---- matches and skips ---------------------------------------------------------------------

  /** The matches of these ISVs on the tenant (null: every ISV's), oldest first. */
  matchesOfTenant(tenantId: string, isvIds: string[] | null): Promise<IdentityMatch[]> {
    return this.ds.getRepository(IdentityMatch).find({ where: { tenantId, ...(isvIds ? { isvId: In(isvIds) } : {}) }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  matchesOfIsv(tenantId: string, isvId: string): Promise<IdentityMatch[]> {
    return this.ds.getRepository(IdentityMatch).find({ where: { tenantId, isvId } });
  }

  skipsOfIsv(tenantId: string, isvId: string): Promise<IdentitySkip[]> {
    return this.ds.getRepository(IdentitySkip).find({ where: { tenantId, isvId } });
  }

  hasImportEndpoint(tenantId: string, isvId: string): Promise<boolean> {
    return this.ds.getRepository(ImportEndpoint).existsBy({ tenantId, isvId });
  }

  /** The match of a customer, or of a PSA company, of the ISV (the manager's transaction when given). */
  matchOf(tenantId: string, isvId: string, of: { customerRef: string } | { connectionId: string; companySourceId: string }, m: EntityManager = this.ds.manager): Promise<IdentityMatch | null> {
    return m.getRepository(IdentityMatch).findOneBy({ tenantId, isvId, ...of });
  }

  /** A match that already holds the customer or the company. */
  matchOfEither(m: EntityManager, tenantId: string, isvId: string, customerRef: string, company: { connectionId: string; companySourceId: string }): Promise<IdentityMatch | null> {
    return m.getRepository(IdentityMatch).findOne({ where: [{ tenantId, isvId, customerRef }, { tenantId, isvId, ...company }] });
  }

  insertMatch(m: EntityManager, row: { tenantId: string; isvId: string; customerRef: string; connectionId: string; companySourceId: string; how: string; decidedBy: DecidedBy }): Promise<IdentityMatch> {
    const repo = m.getRepository(IdentityMatch);
    return repo.save(repo.create(row));
  }

  /** Deletes the match of a customer, or of a PSA company; whether there was one. */
  async deleteMatchOf(m: EntityManager, tenantId: string, isvId: string, of: { customerRef: string } | { connectionId: string; companySourceId: string }): Promise<boolean> {
    return ((await m.getRepository(IdentityMatch).delete({ tenantId, isvId, ...of })).affected ?? 0) > 0;
  }

  /** Sets a row aside; a skip already there stays. */
  async insertSkip(row: { tenantId: string; isvId: string; side: IdentitySide; subject: string; decidedBy: DecidedBy }): Promise<void> {
    await this.ds.createQueryBuilder().insert().into(IdentitySkip).values(row).orIgnore().execute();
  }

  /** Deletes the skip of a subject; whether there was one. */
  async deleteSkip(m: EntityManager, tenantId: string, isvId: string, side: IdentitySide, subject: string): Promise<boolean> {
    return ((await m.getRepository(IdentitySkip).delete({ tenantId, isvId, side, subject })).affected ?? 0) > 0;
  }
}
