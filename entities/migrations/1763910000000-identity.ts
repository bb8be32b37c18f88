import type { MigrationInterface, QueryRunner } from "typeorm";

/** Identity: the ISV book, match and skip decisions, import endpoints (docs/architecture.md, Companies, contacts and identity). */
export class Identity1763910000000 implements MigrationInterface {
  name = "Identity1763910000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"isv_customers\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL, \"isv_id\" uuid NOT NULL, \"ref\" text NOT NULL, \"name\" text NOT NULL, \"normalized_name\" text NOT NULL, \"domain\" text, CONSTRAINT \"uq_isv_customers_ref\" UNIQUE (\"tenant_id\", \"isv_id\", \"ref\"), CONSTRAINT \"PK_135cdc60e6fad0ee35e5f470934\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_isv_customers_name\" ON \"isv_customers\"  (\"tenant_id\", \"isv_id\", \"normalized_name\") ");
    await q.query("CREATE TABLE \"identity_matches\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL, \"isv_id\" uuid NOT NULL, \"customer_ref\" text NOT NULL, \"connection_id\" uuid NOT NULL, \"company_source_id\" text NOT NULL, \"how\" text NOT NULL, \"decided_by\" text NOT NULL, CONSTRAINT \"uq_identity_match_company\" UNIQUE (\"tenant_id\", \"isv_id\", \"connection_id\", \"company_source_id\"), CONSTRAINT \"uq_identity_match_customer\" UNIQUE (\"tenant_id\", \"isv_id\", \"customer_ref\"), CONSTRAINT \"PK_401ef9a9f0eeca24ec85a06e727\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE TABLE \"identity_skips\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL, \"isv_id\" uuid NOT NULL, \"side\" text NOT NULL, \"subject\" text NOT NULL, \"decided_by\" text NOT NULL, CONSTRAINT \"uq_identity_skip\" UNIQUE (\"tenant_id\", \"isv_id\", \"side\", \"subject\"), CONSTRAINT \"PK_2cf5f79a4a0ba5ba16186c22369\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE TABLE \"identity_import_endpoints\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"created_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"updated_at\" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), \"tenant_id\" uuid NOT NULL, \"isv_id\" uuid NOT NULL, \"url\" text NOT NULL, \"secret_encrypted\" text NOT NULL, CONSTRAINT \"uq_identity_import_endpoint\" UNIQUE (\"tenant_id\", \"isv_id\"), CONSTRAINT \"PK_b7ad507f52c969cc0cbba474b33\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_identity_import_endpoints_tenant\" ON \"identity_import_endpoints\"  (\"tenant_id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "identity_import_endpoints"');
    await q.query('DROP TABLE IF EXISTS "identity_skips"');
    await q.query('DROP TABLE IF EXISTS "identity_matches"');
    await q.query('DROP TABLE IF EXISTS "isv_customers"');
  }
}
