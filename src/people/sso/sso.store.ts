/**
 * The statements of single sign-on (docs/architecture.md, Single sign-on): configurations, the domains
 * each covers (one configuration per domain, held by the primary key) and the sign-in attempts.
 */
import type { DataSource, EntityManager } from 'typeorm';
import type { Organisation, OrgKind } from '../people.types';

export interface SsoConfigRow {
  id: string;
  org: Organisation;
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  requireSso: boolean;
  allowJoin: boolean;
  domains: string[];
  updatedAt: Date;
}

export interface SsoConfigWrite {
  issuer: string;
  clientId: string;
  /** null keeps the stored secret (an edit that leaves the field empty). */
  clientSecretSealed: string | null;
  requireSso: boolean;
  allowJoin: boolean;
  domains: string[];
  updatedBy: string | null;
}

/** A domain another organisation's configuration already covers. */
export class DomainTaken extends Error {
  constructor(readonly domain: string) {
    super(`${domain} is already covered by another organisation's single sign-on.`);
    this.name = 'DomainTaken';
  }
}

interface ConfigRecord {
  id: string; org_kind: OrgKind; org_id: string; issuer: string; client_id: string; client_secret_sealed: string;
  require_sso: boolean; allow_join: boolean; updated_at: Date; domains: string[] | null;
}

const SELECT_CONFIG = `SELECT c.id, c.org_kind, c.org_id, c.issuer, c.client_id, c.client_secret_sealed, c.require_sso, c.allow_join, c.updated_at,
  (SELECT array_agg(d.domain ORDER BY d.domain) FROM sso_domains d WHERE d.config_id = c.id) AS domains
  FROM sso_configs c`;

function toRow(r: ConfigRecord): SsoConfigRow {
  return {
    id: r.id, org: { kind: r.org_kind, id: r.org_id }, issuer: r.issuer, clientId: r.client_id, clientSecretSealed: r.client_secret_sealed,
    requireSso: r.require_sso, allowJoin: r.allow_join, domains: r.domains ?? [], updatedAt: new Date(r.updated_at),
  };
}

export class SsoStore {
  constructor(private readonly ds: DataSource) {}

  async byOrg(org: Organisation): Promise<SsoConfigRow | null> {
    const rows: ConfigRecord[] = await this.ds.query(`${SELECT_CONFIG} WHERE c.org_kind = $1 AND c.org_id = $2`, [org.kind, org.id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  async byId(id: string): Promise<SsoConfigRow | null> {
    const rows: ConfigRecord[] = await this.ds.query(`${SELECT_CONFIG} WHERE c.id = $1`, [id]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The configuration covering a domain (stored form), if any. */
  async byDomain(domain: string): Promise<SsoConfigRow | null> {
    const rows: ConfigRecord[] = await this.ds.query(`${SELECT_CONFIG} WHERE c.id = (SELECT config_id FROM sso_domains WHERE domain = $1)`, [domain]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /**
   * Creates or replaces the organisation's configuration and its domains in one transaction. A domain
   * another configuration covers is refused (DomainTaken) and nothing is changed. A first save must
   * carry a secret (the caller checks; the column is NOT NULL).
   */
  async saveConfig(org: Organisation, w: SsoConfigWrite): Promise<SsoConfigRow> {
    return this.ds.transaction(async (m: EntityManager) => {
      const rows: { id: string }[] = await m.query(
        `INSERT INTO sso_configs (org_kind, org_id, issuer, client_id, client_secret_sealed, require_sso, allow_join, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (org_kind, org_id) DO UPDATE SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
           client_secret_sealed = COALESCE($9, sso_configs.client_secret_sealed), require_sso = EXCLUDED.require_sso,
           allow_join = EXCLUDED.allow_join, updated_by = EXCLUDED.updated_by, updated_at = now()
         RETURNING id`,
        [org.kind, org.id, w.issuer, w.clientId, w.clientSecretSealed ?? '', w.requireSso, w.allowJoin, w.updatedBy, w.clientSecretSealed]);
      const id = rows[0]!.id;
      const taken: { domain: string }[] = await m.query('SELECT domain FROM sso_domains WHERE domain = ANY($1) AND config_id <> $2 ORDER BY domain LIMIT 1', [w.domains, id]);
      if (taken[0]) throw new DomainTaken(taken[0].domain);
      await m.query('DELETE FROM sso_domains WHERE config_id = $1', [id]);
      try {
        // ON CONFLICT DO NOTHING is not used: a domain a concurrent save took must fail this one.
        await m.query('INSERT INTO sso_domains (domain, config_id) SELECT unnest($1::text[]), $2', [w.domains, id]);
      } catch (err) {
        if ((err as { code?: string }).code === '23505') throw new DomainTaken(w.domains.join(', '));
        throw err;
      }
      const saved: ConfigRecord[] = await m.query(`${SELECT_CONFIG} WHERE c.id = $1`, [id]);
      return toRow(saved[0]!);
    });
  }

  /** Removes the organisation's configuration (its domains and attempts go with it). */
  async removeConfig(org: Organisation): Promise<boolean> {
    const [, count]: [unknown, number] = await this.ds.query('DELETE FROM sso_configs WHERE org_kind = $1 AND org_id = $2', [org.kind, org.id]);
    return count > 0;
  }

  /** A new sign-in attempt; attempts past their end are cleared on the way (a bounded delete). */
  async addAttempt(browserHash: string, configId: string, checksSealed: string, expiresAt: Date): Promise<void> {
    await this.ds.query(`DELETE FROM sso_attempts WHERE id IN (SELECT id FROM sso_attempts WHERE expires_at < now() LIMIT 100)`);
    await this.ds.query('INSERT INTO sso_attempts (browser_hash, config_id, checks_sealed, expires_at) VALUES ($1, $2, $3, $4)', [browserHash, configId, checksSealed, expiresAt]);
  }

  /** Spends the browser's attempt: its configuration and sealed checks when unused and unexpired, else null. One UPDATE decides. */
  async spendAttempt(browserHash: string): Promise<{ configId: string; checksSealed: string } | null> {
    const [rows]: [{ config_id: string; checks_sealed: string }[], number] = await this.ds.query(
      'UPDATE sso_attempts SET used_at = now() WHERE browser_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING config_id, checks_sealed', [browserHash]);
    return rows[0] ? { configId: rows[0].config_id, checksSealed: rows[0].checks_sealed } : null;
  }
}
