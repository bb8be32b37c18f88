import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Where each cost row lands, stored by the charge recomputation (src/billing/cost-resolution.ts), and a
 * per-tenant count of changes to what that depends on. Triggers count every change to the columns the
 * resolution reads, in the five tables it reads; the recomputation records the count it resolved at.
 * The reconciliation reads the stored resolution only when the two agree, and resolves inline otherwise.
 */
const RESOLUTION_INPUTS: Record<string, string[]> = {
  isv_costs: ['isv_id', 'external_customer_ref', 'product_source_id', 'period_start', 'period_end'],
  identity_matches: ['isv_id', 'customer_ref', 'connection_id', 'company_source_id'],
  agreement_line_mappings: ['isv_id', 'vendor_product_ref', 'status', 'connection_id', 'agreement_source_id', 'line_source_id'],
  agreements: ['connection_id', 'source_id', 'company_source_id', 'status'],
  agreement_lines: ['connection_id', 'source_id', 'agreement_source_id', 'product_source_id', 'effective_end'],
};

export class CostResolutions1764400000000 implements MigrationInterface {
  name = "CostResolutions1764400000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE "billing_versions" ("tenant_id" uuid NOT NULL, "changed" bigint NOT NULL DEFAULT 0, "resolved" bigint NOT NULL DEFAULT -1, CONSTRAINT "PK_billing_versions" PRIMARY KEY ("tenant_id"))');
    await q.query('CREATE TABLE "cost_resolutions" ("cost_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "connection_id" uuid, "company_source_id" text, "agreement_source_id" text, "line_source_id" text, "line_product_source_id" text, "reason" text, "explicitly_unmapped" boolean NOT NULL DEFAULT false, CONSTRAINT "PK_cost_resolutions" PRIMARY KEY ("cost_id"))');
    await q.query('CREATE INDEX "ix_cost_resolutions_tenant" ON "cost_resolutions" ("tenant_id")');
    // One statement-level trigger per event (transition tables allow one event each). An update counts
    // only when a column the resolution reads moved: a sync re-stamping a row, or a cost row's new
    // quantity, leaves the stored resolution current. TG_ARGV[0]: those columns, comma-separated.
    await q.query(`CREATE FUNCTION "billing_inputs_changed"() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  cols text[] := string_to_array(TG_ARGV[0], ',');
  bump constant text := ' ON CONFLICT ("tenant_id") DO UPDATE SET "changed" = "billing_versions"."changed" + 1';
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE 'INSERT INTO "billing_versions" ("tenant_id", "changed") SELECT DISTINCT "tenant_id", 1 FROM "new_rows"' || bump;
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE 'INSERT INTO "billing_versions" ("tenant_id", "changed") SELECT DISTINCT "tenant_id", 1 FROM "old_rows"' || bump;
  ELSIF TG_OP = 'UPDATE' THEN
    EXECUTE format('INSERT INTO "billing_versions" ("tenant_id", "changed") SELECT DISTINCT n."tenant_id", 1 FROM "new_rows" n JOIN "old_rows" o ON o."id" = n."id" WHERE ROW(%s, NULL) IS DISTINCT FROM ROW(%s, NULL)',
      (SELECT string_agg('n.' || quote_ident(c), ', ') FROM unnest(cols) c), (SELECT string_agg('o.' || quote_ident(c), ', ') FROM unnest(cols) c)) || bump;
  ELSE
    UPDATE "billing_versions" SET "changed" = "changed" + 1;
  END IF;
  RETURN NULL;
END
$fn$`);
    for (const [table, cols] of Object.entries(RESOLUTION_INPUTS)) {
      const arg = `'${cols.join(',')}'`;
      await q.query(`CREATE TRIGGER "${table}_billing_insert" AFTER INSERT ON "${table}" REFERENCING NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "billing_inputs_changed"(${arg})`);
      await q.query(`CREATE TRIGGER "${table}_billing_update" AFTER UPDATE ON "${table}" REFERENCING OLD TABLE AS "old_rows" NEW TABLE AS "new_rows" FOR EACH STATEMENT EXECUTE FUNCTION "billing_inputs_changed"(${arg})`);
      await q.query(`CREATE TRIGGER "${table}_billing_delete" AFTER DELETE ON "${table}" REFERENCING OLD TABLE AS "old_rows" FOR EACH STATEMENT EXECUTE FUNCTION "billing_inputs_changed"(${arg})`);
      await q.query(`CREATE TRIGGER "${table}_billing_truncate" AFTER TRUNCATE ON "${table}" FOR EACH STATEMENT EXECUTE FUNCTION "billing_inputs_changed"(${arg})`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of Object.keys(RESOLUTION_INPUTS)) {
      for (const e of ['insert', 'update', 'delete', 'truncate']) await q.query(`DROP TRIGGER IF EXISTS "${table}_billing_${e}" ON "${table}"`);
    }
    await q.query('DROP FUNCTION IF EXISTS "billing_inputs_changed"()');
    await q.query('DROP TABLE IF EXISTS "cost_resolutions"');
    await q.query('DROP TABLE IF EXISTS "billing_versions"');
  }
}
