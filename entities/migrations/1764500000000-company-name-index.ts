import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Ticket create and finding route resolve `company_name` to one company of the connection by its exact
 * name (identity.service.ts resolveCompany): an index on the name, so the lookup no longer reads every
 * company of the connection.
 */
export class CompanyNameIndex1764500000000 implements MigrationInterface {
  name = "CompanyNameIndex1764500000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX "ix_companies_name" ON "companies" ("tenant_id", "connection_id", "name")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX "ix_companies_name"');
  }
}
