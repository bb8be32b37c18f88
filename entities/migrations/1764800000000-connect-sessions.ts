import type { MigrationInterface, QueryRunner } from "typeorm";

/** Connect sessions (docs/architecture.md, Connect sessions and console): token hashes, sealed drafts, what each session made. */
export class ConnectSessions1764800000000 implements MigrationInterface {
  name = "ConnectSessions1764800000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "connect_sessions" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "isv_id" uuid NOT NULL, "tenant_id" uuid, "msp_name" text, "kinds" jsonb NOT NULL DEFAULT '[]', "requested_grants" jsonb NOT NULL DEFAULT '[]', "redirect_url" text, "token_hash" text NOT NULL, "state" text NOT NULL DEFAULT 'pending', "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE, "cancelled_at" TIMESTAMP WITH TIME ZONE, "draft_sealed" text, "draft_info" jsonb NOT NULL DEFAULT '{}', "oauth_state_hash" text, "progress_hash" text, "connection_ids" jsonb NOT NULL DEFAULT '[]', "granted" jsonb NOT NULL DEFAULT '[]', "missing_permissions" jsonb NOT NULL DEFAULT '[]', "steps" jsonb NOT NULL DEFAULT '[]', CONSTRAINT "uq_connect_sessions_token" UNIQUE ("token_hash"), CONSTRAINT "PK_982053319b186a5483cb7be9321" PRIMARY KEY ("id"))`);
    await q.query(`CREATE INDEX "ix_connect_sessions_isv" ON "connect_sessions" ("isv_id", "created_at") `);
    await q.query(`CREATE INDEX "ix_connect_sessions_oauth_state" ON "connect_sessions" ("oauth_state_hash") `);
    await q.query(`CREATE INDEX "ix_connect_sessions_progress" ON "connect_sessions" ("progress_hash") `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "connect_sessions"');
  }
}
