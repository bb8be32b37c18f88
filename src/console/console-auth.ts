/**
 * Signing in to the MSP's console (docs/architecture.md, Connect sessions and console):
 * - a one-time link: 32 random bytes (base64url) in the URL, stored only as SHA-256, valid 15 minutes,
 *   spent by its first use (one UPDATE decides, so two clicks cannot both sign in);
 * - a server-side session: the cookie holds 32 random bytes, stored only as SHA-256, with the session's
 *   CSRF token (every form carries it); it ends after an hour without a request, 12 hours after sign-in
 *   whatever the activity, or at sign-out.
 * Who the signed-in person acts as is asked of src/access (`mspCallerOf`): the tenant's MSP caller.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';

export const LINK_TTL_MS = 15 * 60_000;
export const SESSION_IDLE_MS = 60 * 60_000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60_000;

const token = () => randomBytes(32).toString('base64url');
const hashOf = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
/** What a link or cookie token looks like (43 base64url characters); anything else is looked up nowhere. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export interface ConsoleSessionInfo {
  id: string;
  tenantId: string;
  csrfToken: string;
  signedInWith: string;
}

export class ConsoleAuth {
  constructor(private readonly ds: DataSource) {}

  /** A new one-time link's token for the tenant (shown once; only its hash is kept). */
  async issueLink(tenantId: string, issuedBy: string): Promise<{ token: string; expiresAt: Date }> {
    const t = token();
    const expiresAt = new Date(Date.now() + LINK_TTL_MS);
    await this.ds.query('INSERT INTO console_links (tenant_id, token_hash, issued_by, expires_at) VALUES ($1, $2, $3, $4)', [tenantId, hashOf(t), issuedBy, expiresAt]);
    return { token: t, expiresAt };
  }

  /** Spends a link: its tenant when it was unused and unexpired, else null (used, expired or unknown alike). */
  async redeemLink(t: string): Promise<string | null> {
    if (!TOKEN_SHAPE.test(t)) return null;
    const [rows]: [{ tenant_id: string }[], number] = await this.ds.query(
      'UPDATE console_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING tenant_id', [hashOf(t)]);
    return rows[0]?.tenant_id ?? null;
  }

  /** Starts a session; the cookie value is returned once. */
  async startSession(tenantId: string, signedInWith: 'link' | 'key'): Promise<{ cookie: string; session: ConsoleSessionInfo }> {
    const cookie = token();
    const csrfToken = token();
    const rows: { id: string }[] = await this.ds.query(
      'INSERT INTO console_sessions (tenant_id, token_hash, csrf_token, signed_in_with, expires_at) VALUES ($1, $2, $3, $4, $5) RETURNING id',
      [tenantId, hashOf(cookie), csrfToken, signedInWith, new Date(Date.now() + SESSION_ABSOLUTE_MS)]);
    return { cookie, session: { id: rows[0]!.id, tenantId, csrfToken, signedInWith } };
  }

  /** The live session of a cookie (and its idle clock restarted), or null: unknown, ended, idle or past its end. */
  async session(cookie: string | undefined): Promise<ConsoleSessionInfo | null> {
    if (!cookie || !TOKEN_SHAPE.test(cookie)) return null;
    const [rows]: [{ id: string; tenant_id: string; csrf_token: string; signed_in_with: string }[], number] = await this.ds.query(
      `UPDATE console_sessions SET last_seen_at = now()
        WHERE token_hash = $1 AND ended_at IS NULL AND expires_at > now() AND last_seen_at > now() - ($2 || ' milliseconds')::interval
        RETURNING id, tenant_id, csrf_token, signed_in_with`, [hashOf(cookie), String(SESSION_IDLE_MS)]);
    const r = rows[0];
    return r ? { id: r.id, tenantId: r.tenant_id, csrfToken: r.csrf_token, signedInWith: r.signed_in_with } : null;
  }

  async endSession(id: string): Promise<void> {
    await this.ds.query('UPDATE console_sessions SET ended_at = now() WHERE id = $1 AND ended_at IS NULL', [id]);
  }
}

/** Whether a submitted CSRF token is the session's (constant time). */
export function csrfMatches(session: ConsoleSessionInfo, given: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(session.csrfToken, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
