import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The write fence (src/writes/write-fence.ts): a reservation's generation (grows at each take-over), the
 * lease held across a vendor call, the count of calls made under it, the process that owns an
 * in-progress commit, and the processes' heartbeats.
 */
export class WriteFence1764300000000 implements MigrationInterface {
  name = "WriteFence1764300000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "idempotency_records" ADD "generation" integer NOT NULL DEFAULT 1, ADD "owner_instance" text, ADD "lease_owner" text, ADD "lease_until" TIMESTAMP WITH TIME ZONE, ADD "vendor_attempts" integer NOT NULL DEFAULT 0');
    await q.query('CREATE TABLE "service_instances" ("id" text NOT NULL, "role" text NOT NULL, "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "seen_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_service_instances" PRIMARY KEY ("id"))');
    await q.query('CREATE INDEX "ix_idempotency_in_progress" ON "idempotency_records" ("owner_instance") WHERE "state" = \'in_progress\'');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "service_instances"');
    await q.query('DROP INDEX IF EXISTS "ix_idempotency_in_progress"');
    await q.query('ALTER TABLE "idempotency_records" DROP COLUMN "generation", DROP COLUMN "owner_instance", DROP COLUMN "lease_owner", DROP COLUMN "lease_until", DROP COLUMN "vendor_attempts"');
  }
}
