import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The sandbox's simulator state between a graceful close and the next start (docs/architecture.md, Sandbox):
 * one row per sandbox tenant, written at close and deleted when the next start restores it, so a row is
 * only ever the state of the close just before (a crash leaves none and the start resets instead).
 */
export class SandboxSnapshots1765600000000 implements MigrationInterface {
  name = "SandboxSnapshots1765600000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "sandbox_snapshots" (
      "tenant_id" uuid NOT NULL REFERENCES "tenants" ("id") ON DELETE CASCADE, "state" jsonb NOT NULL,
      "saved_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "pk_sandbox_snapshots" PRIMARY KEY ("tenant_id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "sandbox_snapshots"');
  }
}
