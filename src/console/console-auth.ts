/**
 * One-time links into the MSP's console (docs/architecture.md, Connect sessions and console), for scripts
 * that hand a person in: 32 random bytes (base64url) in the URL, stored only as SHA-256, valid 15 minutes,
 * spent by its first use (one UPDATE decides, so two clicks cannot both sign in). The session a link
 * starts is the one session layer of both consoles (src/people/sessions.ts).
 */
import { hashOf, newToken, tokenShaped } from '../people/secret-tokens';
import type { DataSource } from 'typeorm';

export const LINK_TTL_MS = 15 * 60_000;


export class ConsoleAuth {
  constructor(private readonly ds: DataSource) {}

  /** A new one-time link's token for the tenant (shown once; only its hash is kept). */
  async issueLink(tenantId: string, issuedBy: string): Promise<{ token: string; expiresAt: Date }> {
    const t = newToken();
    const expiresAt = new Date(Date.now() + LINK_TTL_MS);
    await this.ds.query('INSERT INTO console_links (tenant_id, token_hash, issued_by, expires_at) VALUES ($1, $2, $3, $4)', [tenantId, hashOf(t), issuedBy, expiresAt]);
    return { token: t, expiresAt };
  }

  /** Spends a link: its tenant when it was unused and unexpired, else null (used, expired or unknown alike). */
  async redeemLink(t: string): Promise<string | null> {
    if (!tokenShaped(t)) return null;
    const [rows]: [{ tenant_id: string }[], number] = await this.ds.query(
      'UPDATE console_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING tenant_id', [hashOf(t)]);
    return rows[0]?.tenant_id ?? null;
  }
}

