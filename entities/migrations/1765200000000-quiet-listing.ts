import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * `sync_states.quiet_listing`: the digest of a full listing that a scheduled check found exactly as
 * stored (docs/architecture.md, Freshness). The next check whose listing has the same digest needs no
 * read of the store; any write to the resource forgets it in its own transaction.
 */
export class QuietListing1765200000000 implements MigrationInterface {
  name = "QuietListing1765200000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "sync_states" ADD "quiet_listing" text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE "sync_states" DROP COLUMN "quiet_listing"');
  }
}
