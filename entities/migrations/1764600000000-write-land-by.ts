import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The write fence's landing deadline (src/writes/write-fence.ts): the time after which no vendor request
 * sent under a reservation can land any more; a take-over waits for it before it looks the marker up.
 */
export class WriteLandBy1764600000000 implements MigrationInterface {
  name = "WriteLandBy1764600000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "idempotency_records" ADD "land_by" TIMESTAMP WITH TIME ZONE');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "idempotency_records" DROP COLUMN "land_by"');
  }
}
