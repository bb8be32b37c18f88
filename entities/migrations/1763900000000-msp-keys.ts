import type { MigrationInterface, QueryRunner } from "typeorm";

/** MSP keys: an API key is an ISV's or a tenant's own (docs/architecture.md, Tenancy, keys and grants). */
export class MspKeys1763900000000 implements MigrationInterface {
  name = "MspKeys1763900000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query("ALTER TABLE \"api_keys\" ADD \"kind\" text NOT NULL DEFAULT 'isv'");
    await q.query("ALTER TABLE \"api_keys\" ALTER COLUMN \"isv_id\" DROP NOT NULL");
    await q.query("ALTER TABLE \"api_keys\" ADD \"tenant_id\" uuid");
    await q.query("CREATE INDEX \"IDX_3ac18429c8d27858d79432e0dd\" ON \"api_keys\"  (\"tenant_id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query("DROP INDEX \"IDX_3ac18429c8d27858d79432e0dd\"");
    await q.query("ALTER TABLE \"api_keys\" DROP COLUMN \"tenant_id\"");
    await q.query("DELETE FROM \"api_keys\" WHERE \"isv_id\" IS NULL");
    await q.query("ALTER TABLE \"api_keys\" ALTER COLUMN \"isv_id\" SET NOT NULL");
    await q.query("ALTER TABLE \"api_keys\" DROP COLUMN \"kind\"");
  }
}
