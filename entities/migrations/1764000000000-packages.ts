import type { MigrationInterface, QueryRunner } from "typeorm";

/** The RMM's catalogue of installable packages (docs/architecture.md, Device write and ask: device deploy). */
export class Packages1764000000000 implements MigrationInterface {
  name = "Packages1764000000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"packages\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"tenant_id\" uuid NOT NULL, \"connection_id\" uuid NOT NULL, \"source_id\" text NOT NULL, \"raw\" jsonb NOT NULL, \"raw_hash\" text NOT NULL, \"vendor_updated_at\" TIMESTAMP WITH TIME ZONE, \"synced_at\" TIMESTAMP WITH TIME ZONE NOT NULL, \"name\" text NOT NULL, \"description\" text, \"operating_systems\" jsonb NOT NULL, \"active\" boolean NOT NULL DEFAULT true, CONSTRAINT \"uq_packages_source\" UNIQUE (\"tenant_id\", \"connection_id\", \"source_id\"), CONSTRAINT \"PK_packages\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_packages_tenant_id\" ON \"packages\"  (\"tenant_id\", \"id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "packages"');
  }
}
