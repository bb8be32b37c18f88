import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Agreements and billing: the synced product catalogues (PSA catalogue, distributor products) and the
 * distributor's subscriptions, both SyncedRecord tables like the others.
 */
export class ProductsAndSubscriptions1763795000000 implements MigrationInterface {
  name = "ProductsAndSubscriptions1763795000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query("CREATE TABLE \"products\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"tenant_id\" uuid NOT NULL, \"connection_id\" uuid NOT NULL, \"source_id\" text NOT NULL, \"raw\" jsonb NOT NULL, \"raw_hash\" text NOT NULL, \"vendor_updated_at\" TIMESTAMP WITH TIME ZONE, \"synced_at\" TIMESTAMP WITH TIME ZONE NOT NULL, \"name\" text NOT NULL, \"sku\" text, \"unit_price\" double precision, \"unit_cost\" double precision, \"active\" boolean, CONSTRAINT \"uq_products_source\" UNIQUE (\"tenant_id\", \"connection_id\", \"source_id\"), CONSTRAINT \"PK_0806c755e0aca124e67c0cf6d7d\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_products_tenant_id\" ON \"products\"  (\"tenant_id\", \"id\") ");
    await q.query("CREATE TABLE \"subscriptions\" (\"id\" uuid NOT NULL DEFAULT gen_random_uuid(), \"tenant_id\" uuid NOT NULL, \"connection_id\" uuid NOT NULL, \"source_id\" text NOT NULL, \"raw\" jsonb NOT NULL, \"raw_hash\" text NOT NULL, \"vendor_updated_at\" TIMESTAMP WITH TIME ZONE, \"synced_at\" TIMESTAMP WITH TIME ZONE NOT NULL, \"company_source_id\" text, \"product_source_id\" text, \"product_name\" text, \"quantity\" double precision, \"price\" double precision, \"partner_cost\" double precision, \"billing_term\" text, \"status\" text, \"start_date\" text, \"end_date\" text, CONSTRAINT \"uq_subscriptions_source\" UNIQUE (\"tenant_id\", \"connection_id\", \"source_id\"), CONSTRAINT \"PK_a87248d73155605cf782be9ee5e\" PRIMARY KEY (\"id\"))");
    await q.query("CREATE INDEX \"ix_subscriptions_tenant_id\" ON \"subscriptions\"  (\"tenant_id\", \"id\") ");
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE IF EXISTS "subscriptions"');
    await q.query('DROP TABLE IF EXISTS "products"');
  }
}
