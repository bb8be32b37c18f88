import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The ISV's keys page (docs/architecture.md, People; design: the ISV's console, Keys): who minted a key
 * (`created_by`: a person from the console, the operator through the graph; null for keys made before),
 * and an audit log of the ISV's own (entries with no tenant, `isv_id` set: key created, rotated, revoked).
 * A key rotated with overlap keeps working until its `revoked_at`, which may then lie in the future.
 */
export class IsvKeys1765510000000 implements MigrationInterface {
  name = "IsvKeys1765510000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "api_keys" ADD COLUMN "created_by" jsonb`);
    await q.query(`ALTER TABLE "audit_entries" ALTER COLUMN "tenant_id" DROP NOT NULL`);
    await q.query(`CREATE INDEX "ix_audit_isv_own" ON "audit_entries" ("isv_id", "seq") WHERE "tenant_id" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "ix_audit_isv_own"`);
    await q.query(`DELETE FROM "audit_entries" WHERE "tenant_id" IS NULL`);
    await q.query(`ALTER TABLE "audit_entries" ALTER COLUMN "tenant_id" SET NOT NULL`);
    await q.query(`ALTER TABLE "api_keys" DROP COLUMN "created_by"`);
  }
}
