import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * Single sign-on by OpenID Connect (docs/architecture.md, Single sign-on): one configuration per
 * organisation (an ISV or a tenant) with its client secret sealed by the secret box, the email domains it
 * covers (a domain belongs to one configuration at most, so an email names one way to sign in), and the
 * short-lived sign-in attempts that bind `state`, `nonce` and the PKCE verifier to the browser that
 * started them (the browser's token stored only as SHA-256, the rest sealed, spent once). Entities: entities/sso.ts.
 */
export class Sso1765405000000 implements MigrationInterface {
  name = "Sso1765405000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "sso_configs" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "org_kind" text NOT NULL, "org_id" uuid NOT NULL,
      "issuer" text NOT NULL, "client_id" text NOT NULL, "client_secret_sealed" text NOT NULL,
      "require_sso" boolean NOT NULL DEFAULT false, "allow_join" boolean NOT NULL DEFAULT false,
      "updated_by" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_sso_configs" PRIMARY KEY ("id"), CONSTRAINT "uq_sso_configs_org" UNIQUE ("org_kind", "org_id"),
      CONSTRAINT "ck_sso_configs_kind" CHECK ("org_kind" IN ('isv', 'tenant')))`);
    await q.query(`CREATE TABLE "sso_domains" (
      "domain" text NOT NULL, "config_id" uuid NOT NULL REFERENCES "sso_configs" ("id") ON DELETE CASCADE,
      CONSTRAINT "pk_sso_domains" PRIMARY KEY ("domain"))`);
    await q.query('CREATE INDEX "ix_sso_domains_config" ON "sso_domains" ("config_id")');
    await q.query(`CREATE TABLE "sso_attempts" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "browser_hash" text NOT NULL,
      "config_id" uuid NOT NULL REFERENCES "sso_configs" ("id") ON DELETE CASCADE, "checks_sealed" text NOT NULL,
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_sso_attempts" PRIMARY KEY ("id"), CONSTRAINT "uq_sso_attempts_browser" UNIQUE ("browser_hash"))`);
    await q.query('CREATE INDEX "ix_sso_attempts_expires" ON "sso_attempts" ("expires_at")');
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['sso_attempts', 'sso_domains', 'sso_configs']) await q.query(`DROP TABLE IF EXISTS "${t}"`);
  }
}
