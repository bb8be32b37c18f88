import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Connection events (docs/architecture.md, Events and webhooks): each connection's health state, whose
 * changes are the `connection.*` events; events an ISV gets with no tenant (a connect session for a new MSP
 * that expired: `isv_id` set, `tenant_id` null); the ISV-wide feed's order (`seq` alone); and when a connect
 * session's expiry was noticed (its `connect_session.expired` event, once).
 */
export class ConnectionEvents1765520000000 implements MigrationInterface {
  name = "ConnectionEvents1765520000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "connection_health" ("connection_id" uuid NOT NULL, "tenant_id" uuid NOT NULL, "state" text NOT NULL DEFAULT 'ok', "previous_state" text, "failures" integer NOT NULL DEFAULT 0, "reason" text, "changed_at" TIMESTAMP WITH TIME ZONE, "version" integer NOT NULL DEFAULT 0, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_c51579f8759f105a07d55bfcd84" PRIMARY KEY ("connection_id"))`);
    await q.query(`CREATE INDEX "ix_connection_health_tenant" ON "connection_health" ("tenant_id")`);
    await q.query(`ALTER TABLE "events" ALTER COLUMN "tenant_id" DROP NOT NULL`);
    await q.query(`ALTER TABLE "events" ADD COLUMN "isv_id" uuid`);
    await q.query(`CREATE UNIQUE INDEX "uq_events_isv_dedupe" ON "events" ("isv_id", "dedupe_key") WHERE "tenant_id" IS NULL`);
    await q.query(`CREATE INDEX "ix_events_seq" ON "events" ("seq")`);
    await q.query(`ALTER TABLE "connect_sessions" ADD COLUMN "expiry_noticed_at" TIMESTAMP WITH TIME ZONE`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "connect_sessions" DROP COLUMN "expiry_noticed_at"`);
    await q.query(`DROP INDEX "ix_events_seq"`);
    await q.query(`DROP INDEX "uq_events_isv_dedupe"`);
    await q.query(`DELETE FROM "events" WHERE "tenant_id" IS NULL`);
    await q.query(`ALTER TABLE "events" DROP COLUMN "isv_id"`);
    await q.query(`ALTER TABLE "events" ALTER COLUMN "tenant_id" SET NOT NULL`);
    await q.query(`DROP TABLE "connection_health"`);
  }
}
