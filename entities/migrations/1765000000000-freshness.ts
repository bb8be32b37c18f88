import type { MigrationInterface, QueryRunner } from "typeorm";

/** Freshness per resource (src/sync/freshness.ts): when it was last confirmed current, its interval and when it is due. */
export class Freshness1765000000000 implements MigrationInterface {
  name = "Freshness1765000000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sync_states"
      ADD COLUMN "checked_at" TIMESTAMP WITH TIME ZONE,
      ADD COLUMN "next_check_at" TIMESTAMP WITH TIME ZONE,
      ADD COLUMN "interval_seconds" integer,
      ADD COLUMN "quiet_checks" integer NOT NULL DEFAULT 0,
      ADD COLUMN "calls_per_check" integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "sync_states" DROP COLUMN "checked_at", DROP COLUMN "next_check_at", DROP COLUMN "interval_seconds",
      DROP COLUMN "quiet_checks", DROP COLUMN "calls_per_check"`);
  }
}
