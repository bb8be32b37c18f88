import type { MigrationInterface, QueryRunner } from "typeorm";

/** Quarantine for vendor records the store refuses, and its per-resource counter on sync_states. */
export class SyncQuarantine1763790000000 implements MigrationInterface {
  name = "SyncQuarantine1763790000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"sync_quarantine\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL, \"connection_id\" uuid NOT NULL, \"resource\" text NOT NULL, \"source_id\" text NOT NULL, \"error\" text NOT NULL, \"payload\" text NOT NULL, \"attempts\" integer NOT NULL DEFAULT '1', CONSTRAINT \"uq_sync_quarantine_record\" UNIQUE (\"connection_id\", \"resource\", \"source_id\"), CONSTRAINT \"PK_3cce9856669253a23bebc465344\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_sync_quarantine_tenant\" ON \"sync_quarantine\"  (\"tenant_id\") ");
    await q.query("ALTER TABLE \"sync_states\" ADD \"quarantined\" integer NOT NULL DEFAULT '0'");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "sync_states" DROP COLUMN "quarantined"');
    await q.query('DROP INDEX IF EXISTS "ix_sync_quarantine_tenant"');
    await q.query('DROP TABLE IF EXISTS "sync_quarantine"');
  }
}
