import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Each delivery carries its event's feed position (`event_seq`), written by the fan-out, so a lane reads
 * its pending deliveries in feed order from one index range (webhook, position) instead of joining and
 * sorting every pending delivery of the webhook at each batch. Rows whose event is gone get 0 (the lane
 * never sends them: it reads deliveries with their event).
 */
export class WebhookDeliveryPosition1765050000000 implements MigrationInterface {
  name = "WebhookDeliveryPosition1765050000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_deliveries" ADD "event_seq" bigint');
    await q.query('UPDATE "webhook_deliveries" d SET "event_seq" = e."seq" FROM "events" e WHERE e."id" = d."event_id"');
    await q.query('UPDATE "webhook_deliveries" SET "event_seq" = 0 WHERE "event_seq" IS NULL');
    await q.query('ALTER TABLE "webhook_deliveries" ALTER COLUMN "event_seq" SET NOT NULL');
    await q.query('DROP INDEX IF EXISTS "ix_webhook_deliveries_pending"');
    await q.query(`CREATE INDEX "ix_webhook_deliveries_pending" ON "webhook_deliveries" ("webhook_id", "event_seq") WHERE "status" = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS "ix_webhook_deliveries_pending"');
    await q.query(`CREATE INDEX "ix_webhook_deliveries_pending" ON "webhook_deliveries" ("webhook_id") WHERE "status" = 'pending'`);
    await q.query('ALTER TABLE "webhook_deliveries" DROP COLUMN "event_seq"');
  }
}
