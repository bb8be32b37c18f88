/** Console sign-in links as stored (console-auth.ts holds their rules): only the token's hash is kept. */
import type { DataSource } from 'typeorm';

export class ConsoleLinksStore {
  constructor(private readonly ds: DataSource) {}

  async insert(link: { tenantId: string; tokenHash: string; issuedBy: string; expiresAt: Date }): Promise<void> {
    await this.ds.query('INSERT INTO console_links (tenant_id, token_hash, issued_by, expires_at) VALUES ($1, $2, $3, $4)',
      [link.tenantId, link.tokenHash, link.issuedBy, link.expiresAt]);
  }

  /** Marks the link used if it was unused and unexpired (one UPDATE decides); its tenant then, else null. */
  async spend(tokenHash: string): Promise<string | null> {
    const [rows]: [{ tenant_id: string }[], number] = await this.ds.query(
      'UPDATE console_links SET used_at = now() WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING tenant_id', [tokenHash]);
    return rows[0]?.tenant_id ?? null;
  }
}
