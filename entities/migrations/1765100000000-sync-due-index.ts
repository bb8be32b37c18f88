import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * The sweeper (src/sync/sweeper.ts) claims the fleet's due resources, the longest overdue first, several
 * times a second: an index on next_check_at keeps that a short index range instead of a scan of every state.
 */
export class SyncDueIndex1765100000000 implements MigrationInterface {
  name = "SyncDueIndex1765100000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE INDEX "ix_sync_states_next_check" ON "sync_states" ("next_check_at" NULLS FIRST)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX IF EXISTS "ix_sync_states_next_check"');
  }
}
