import type { MigrationInterface, QueryRunner } from "typeorm";

/**
 * People and their sign-in (docs/architecture.md, People): people, memberships in an ISV or a tenant,
 * invitations and magic links (only SHA-256 of their tokens), server-side sessions of both consoles, and
 * the local mail outbox used when SMTP_URL is unset.
 */
export class People1765400000000 implements MigrationInterface {
  name = "People1765400000000";

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE "people" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "email" text NOT NULL, "name" text NOT NULL DEFAULT '',
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_people" PRIMARY KEY ("id"), CONSTRAINT "uq_people_email" UNIQUE ("email"))`);
    await q.query(`CREATE TABLE "memberships" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "person_id" uuid NOT NULL REFERENCES "people" ("id") ON DELETE CASCADE,
      "org_kind" text NOT NULL, "org_id" uuid NOT NULL, "role" text NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_memberships" PRIMARY KEY ("id"), CONSTRAINT "uq_memberships_person_org" UNIQUE ("person_id", "org_kind", "org_id"),
      CONSTRAINT "ck_memberships_kind" CHECK ("org_kind" IN ('isv', 'tenant')))`);
    await q.query('CREATE INDEX "ix_memberships_org" ON "memberships" ("org_kind", "org_id")');
    await q.query(`CREATE TABLE "invitations" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "token_hash" text NOT NULL, "email" text NOT NULL,
      "org_kind" text NOT NULL, "org_id" uuid NOT NULL, "role" text NOT NULL, "invited_by" text NOT NULL,
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_invitations" PRIMARY KEY ("id"), CONSTRAINT "uq_invitations_token" UNIQUE ("token_hash"))`);
    await q.query('CREATE INDEX "ix_invitations_org" ON "invitations" ("org_kind", "org_id")');
    await q.query(`CREATE TABLE "sign_in_links" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "token_hash" text NOT NULL,
      "person_id" uuid NOT NULL REFERENCES "people" ("id") ON DELETE CASCADE,
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "used_at" TIMESTAMP WITH TIME ZONE,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_sign_in_links" PRIMARY KEY ("id"), CONSTRAINT "uq_sign_in_links_token" UNIQUE ("token_hash"))`);
    await q.query(`CREATE TABLE "person_sessions" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "token_hash" text NOT NULL, "csrf_token" text NOT NULL,
      "person_id" uuid REFERENCES "people" ("id") ON DELETE CASCADE, "org_kind" text, "org_id" uuid, "role" text,
      "signed_in_with" text NOT NULL,
      "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_seen_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, "ended_at" TIMESTAMP WITH TIME ZONE,
      CONSTRAINT "pk_person_sessions" PRIMARY KEY ("id"), CONSTRAINT "uq_person_sessions_token" UNIQUE ("token_hash"))`);
    await q.query('CREATE INDEX "ix_person_sessions_person" ON "person_sessions" ("person_id") WHERE "ended_at" IS NULL');
    await q.query(`CREATE TABLE "mail_outbox" (
      "id" uuid NOT NULL DEFAULT gen_random_uuid(), "seq" BIGSERIAL NOT NULL, "to_address" text NOT NULL, "subject" text NOT NULL,
      "text_body" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
      CONSTRAINT "pk_mail_outbox" PRIMARY KEY ("id"))`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['mail_outbox', 'person_sessions', 'sign_in_links', 'invitations', 'memberships', 'people']) await q.query(`DROP TABLE IF EXISTS "${t}"`);
  }
}
