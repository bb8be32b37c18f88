import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Ordered webhook delivery (src/webhooks/delivery-lanes.ts): when a delivery's next try is due (a failed
 * try holds its receiver's lane until then), and the index the lane reads its pending deliveries by.
 */
export class WebhookLanes1764700000000 implements MigrationInterface {
  name = "WebhookLanes1764700000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhook_deliveries" ADD "next_attempt_at" TIMESTAMP WITH TIME ZONE');
    await q.query(`CREATE INDEX "ix_webhook_deliveries_pending" ON "webhook_deliveries" ("webhook_id") WHERE "status" = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS "ix_webhook_deliveries_pending"');
    await q.query('ALTER TABLE "webhook_deliveries" DROP COLUMN "next_attempt_at"');
  }
}
