import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The ISV's request log (docs/architecture.md, Request log): one row per request made with an ISV's key,
 * its bodies redacted and cut at 64 KiB; pruned after REQUEST_LOG_DAYS and past REQUEST_LOG_MAX_ROWS.
 */
export class RequestLog1765540000000 implements MigrationInterface {
  name = "RequestLog1765540000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "request_log" (
      "seq" BIGSERIAL NOT NULL, "id" text NOT NULL, "isv_id" uuid NOT NULL, "api_key_id" uuid, "key_prefix" text,
      "at" TIMESTAMP WITH TIME ZONE NOT NULL, "method" text NOT NULL, "path" text NOT NULL, "route" text, "tenant_id" text,
      "status" integer NOT NULL, "duration_ms" integer NOT NULL, "error_code" text, "surface" text NOT NULL,
      "query" text, "request_headers" jsonb NOT NULL DEFAULT '[]', "request_body" text, "request_body_truncated" boolean NOT NULL DEFAULT false,
      "response_headers" jsonb NOT NULL DEFAULT '[]', "response_body" text, "response_body_truncated" boolean NOT NULL DEFAULT false,
      CONSTRAINT "pk_request_log" PRIMARY KEY ("seq"))`);
    await q.query('CREATE INDEX "ix_request_log_isv_at" ON "request_log" ("isv_id", "at" DESC, "seq" DESC)');
    await q.query('CREATE INDEX "ix_request_log_isv_id" ON "request_log" ("isv_id", "id")');
    await q.query('CREATE INDEX "ix_request_log_at" ON "request_log" ("at")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "request_log"');
  }
}
