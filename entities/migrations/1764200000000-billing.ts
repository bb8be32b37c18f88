import type { MigrationInterface, QueryRunner } from "typeorm";

/** ISV cost rows, partner minimums, agreement-line mappings and charges (docs/architecture.md, Agreements and billing). */
export class Billing1764200000000 implements MigrationInterface {
  name = "Billing1764200000000";

  async up(q: QueryRunner): Promise<void> {
    const base = "\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL";
    await q.query(`CREATE TABLE "isv_costs" (${base}, "isv_id" uuid NOT NULL, "idempotency_key" text, "external_customer_ref" text NOT NULL, "external_customer_name" text, "product_source_id" text NOT NULL, "product_name" text, "period_start" text NOT NULL, "period_end" text NOT NULL, "actual_quantity" double precision NOT NULL, "billable_quantity" double precision NOT NULL, "currency" text NOT NULL, "msp_cost_unit" double precision NOT NULL, "msp_cost_extended" double precision NOT NULL, "prices" jsonb NOT NULL DEFAULT '{}', "revision" integer NOT NULL DEFAULT 1, CONSTRAINT "uq_isv_costs_row" UNIQUE ("tenant_id", "isv_id", "external_customer_ref", "product_source_id", "period_start", "period_end"), CONSTRAINT "PK_isv_costs" PRIMARY KEY ("id"))`);
    await q.query('CREATE INDEX "ix_isv_costs_period" ON "isv_costs" ("tenant_id", "period_start", "period_end")');
    await q.query('CREATE UNIQUE INDEX "uq_isv_costs_key" ON "isv_costs" ("tenant_id", "isv_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL');
    await q.query(`CREATE TABLE "partner_minimums" (${base}, "isv_id" uuid NOT NULL, "idempotency_key" text, "product_source_id" text NOT NULL, "product_name" text, "period_start" text NOT NULL, "period_end" text NOT NULL, "currency" text NOT NULL, "minimum_amount" double precision NOT NULL, "revision" integer NOT NULL DEFAULT 1, CONSTRAINT "uq_partner_minimums_row" UNIQUE ("tenant_id", "isv_id", "product_source_id", "period_start", "period_end"), CONSTRAINT "PK_partner_minimums" PRIMARY KEY ("id"))`);
    await q.query('CREATE UNIQUE INDEX "uq_partner_minimums_key" ON "partner_minimums" ("tenant_id", "isv_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL');
    await q.query(`CREATE TABLE "agreement_line_mappings" (${base}, "isv_id" uuid NOT NULL, "vendor_product_ref" text NOT NULL, "status" text NOT NULL, "connection_id" uuid, "agreement_source_id" text, "line_source_id" text, "decided_by" text NOT NULL, CONSTRAINT "PK_agreement_line_mappings" PRIMARY KEY ("id"))`);
    await q.query('CREATE INDEX "ix_line_mappings_product" ON "agreement_line_mappings" ("tenant_id", "isv_id", "vendor_product_ref")');
    await q.query('CREATE INDEX "ix_line_mappings_agreement" ON "agreement_line_mappings" ("tenant_id", "connection_id", "agreement_source_id")');
    // Cost rows reach an agreement through its company (cost-resolution.ts).
    await q.query('CREATE INDEX "ix_agreements_company" ON "agreements" ("tenant_id", "connection_id", "company_source_id")');
    // One row per (product, line); one explicit `unmapped` row per product.
    await q.query('CREATE UNIQUE INDEX "uq_line_mappings_pair" ON "agreement_line_mappings" ("tenant_id", "isv_id", "vendor_product_ref", (COALESCE("connection_id"::text, \'\')), (COALESCE("line_source_id", \'\')))');
    await q.query(`CREATE TABLE "charges" (${base}, "connection_id" uuid NOT NULL, "agreement_source_id" text NOT NULL, "line_source_id" text NOT NULL, "company_source_id" text, "company_name" text, "product_source_id" text, "product_name" text, "current_quantity" double precision, "proposed_quantity" double precision NOT NULL, "unit_price" double precision, "period_start" text NOT NULL, "period_end" text NOT NULL, "cost_rows" jsonb NOT NULL DEFAULT '[]', "status" text NOT NULL, "decided_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_charges" PRIMARY KEY ("id"))`);
    await q.query('CREATE INDEX "ix_charges_status" ON "charges" ("tenant_id", "status")');
    // At most one open charge per line: recomputation updates it in place.
    await q.query('CREATE UNIQUE INDEX "uq_charges_open_line" ON "charges" ("tenant_id", "connection_id", "line_source_id") WHERE "status" IN (\'pending\', \'approving\')');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['charges', 'agreement_line_mappings', 'partner_minimums', 'isv_costs']) await q.query(`DROP TABLE IF EXISTS "${t}"`);
    await q.query('DROP INDEX IF EXISTS "ix_agreements_company"');
  }
}
