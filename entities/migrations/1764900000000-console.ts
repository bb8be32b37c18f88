import type { MigrationInterface, QueryRunner } from "typeorm";

/** The MSP's console: one-time sign-in links and server-side sessions (entities/console.ts). */
export class Console1764900000000 implements MigrationInterface {
  name = "Console1764900000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "console_links" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "token_hash" text NOT NULL,
      "issued_by" text NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_console_links" PRIMARY KEY ("id"), CONSTRAINT "uq_console_links_token" UNIQUE ("token_hash"))`);
    await q.query('CREATE INDEX "ix_console_links_tenant" ON "console_links" ("tenant_id")');
    await q.query(`CREATE TABLE "console_sessions" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "tenant_id" uuid NOT NULL, "token_hash" text NOT NULL,
      "csrf_token" text NOT NULL, "signed_in_with" text NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "ended_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "pk_console_sessions" PRIMARY KEY ("id"), CONSTRAINT "uq_console_sessions_token" UNIQUE ("token_hash"))`);
    await q.query('CREATE INDEX "ix_console_sessions_tenant" ON "console_sessions" ("tenant_id")');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "console_sessions"');
    await q.query('DROP TABLE IF EXISTS "console_links"');
  }
}
