import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Operable webhooks (src/webhooks): ISV-wide endpoints (no tenant: every tenant the ISV sees, now and
 * later), a kinds filter, secret rotation with an overlap (the replaced secret still signs until
 * `previous_secret_expires_at`), each delivery's last latency, and deliveries of no tenant (an ISV's own
 * events, such as a connect session for a new MSP that expired, reach its ISV-wide endpoints).
 */
export class WebhookEndpoints1765530000000 implements MigrationInterface {
  name = "WebhookEndpoints1765530000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "tenant_id" DROP NOT NULL');
    await q.query('ALTER TABLE "webhooks" ADD "kinds" jsonb');
    await q.query('ALTER TABLE "webhooks" ADD "previous_secret_encrypted" text');
    await q.query('ALTER TABLE "webhooks" ADD "previous_secret_expires_at" TIMESTAMP WITH TIME ZONE');
    await q.query('CREATE INDEX "ix_webhooks_isv_wide" ON "webhooks" ("isv_id") WHERE "tenant_id" IS NULL');
    await q.query('ALTER TABLE "webhook_deliveries" ADD "last_latency_ms" integer');
    // An ISV's own events (no tenant) reach its ISV-wide endpoints: their deliveries have no tenant either.
    await q.query('ALTER TABLE "webhook_deliveries" ALTER COLUMN "tenant_id" DROP NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DELETE FROM "webhook_deliveries" WHERE "tenant_id" IS NULL');
    await q.query('ALTER TABLE "webhook_deliveries" ALTER COLUMN "tenant_id" SET NOT NULL');
    await q.query('ALTER TABLE "webhook_deliveries" DROP COLUMN "last_latency_ms"');
    await q.query('DROP INDEX IF EXISTS "ix_webhooks_isv_wide"');
    await q.query('DELETE FROM "webhook_deliveries" WHERE "webhook_id" IN (SELECT "id" FROM "webhooks" WHERE "tenant_id" IS NULL)');
    await q.query('DELETE FROM "webhooks" WHERE "tenant_id" IS NULL');
    await q.query('ALTER TABLE "webhooks" DROP COLUMN "previous_secret_expires_at"');
    await q.query('ALTER TABLE "webhooks" DROP COLUMN "previous_secret_encrypted"');
    await q.query('ALTER TABLE "webhooks" DROP COLUMN "kinds"');
    await q.query('ALTER TABLE "webhooks" ALTER COLUMN "tenant_id" SET NOT NULL');
  }
}
