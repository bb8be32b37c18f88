import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Repair sessions (docs/architecture.md, Connect sessions and console): the MSP console's Reconnect opens a
 * connect session of its own, with no ISV, naming the one connection it repairs.
 */
export class RepairSessions1765430000000 implements MigrationInterface {
  name = "RepairSessions1765430000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "connect_sessions" ALTER COLUMN "isv_id" DROP NOT NULL`);
    await q.query(`ALTER TABLE "connect_sessions" ADD COLUMN "repair_connection_id" uuid`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "connect_sessions" DROP COLUMN "repair_connection_id"`);
    await q.query(`DELETE FROM "connect_sessions" WHERE "isv_id" IS NULL`);
    await q.query(`ALTER TABLE "connect_sessions" ALTER COLUMN "isv_id" SET NOT NULL`);
  }
}
