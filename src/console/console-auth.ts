/**
 * One-time links into the MSP's console (docs/architecture.md, Connect sessions and console), for scripts
 * that hand a person in: 32 random bytes (base64url) in the URL, stored only as SHA-256, valid 15 minutes,
 * spent by its first use (one UPDATE decides, so two clicks cannot both sign in). The session a link
 * starts is the one session layer of both consoles (src/people/sessions.ts).
 */
import { hashOf, newToken, tokenShaped } from '../people/secret-tokens';
import type { DataSource } from 'typeorm';
import { ConsoleLinksStore } from './console-links.store';

export const LINK_TTL_MS = 15 * 60_000;


export class ConsoleAuth {
  private readonly store: ConsoleLinksStore;

  constructor(ds: DataSource) {
    this.store = new ConsoleLinksStore(ds);
  }

  /** A new one-time link's token for the tenant (shown once; only its hash is kept). */
  async issueLink(tenantId: string, issuedBy: string): Promise<{ token: string; expiresAt: Date }> {
    const t = newToken();
    const expiresAt = new Date(Date.now() + LINK_TTL_MS);
    await this.store.insert({ tenantId, tokenHash: hashOf(t), issuedBy, expiresAt });
    return { token: t, expiresAt };
  }

  /** Spends a link: its tenant when it was unused and unexpired, else null (used, expired or unknown alike). */
  async redeemLink(t: string): Promise<string | null> {
    if (!tokenShaped(t)) return null;
    return this.store.spend(hashOf(t));
  }
}

