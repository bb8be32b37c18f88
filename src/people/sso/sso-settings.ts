/**
 * Single sign-on settings of an organisation and the questions other modules ask of them
 * (docs/architecture.md, Single sign-on): an owner sets the issuer, the client id and secret (sealed
 * with the service's secret box, never shown again nor logged), the email domains it covers, whether
 * those domains must use it, and whether new people from them may join as viewers. The issuer is
 * checked by the outbound guard and by reading its discovery document before anything is saved.
 */
import type { DataSource } from 'typeorm';
import type { SecretBox } from '../../security/secret-box';
import { parseReceiverUrl, ReceiverUrlRefused } from '../../webhooks/ssrf-guard';
import type { Organisation } from '../people.types';
import { discover } from './openid';
import { DomainRefused, domainOfEmail, parseDomainList } from './sso-domains';
import { DomainTaken, SsoStore, type SsoConfigRow } from './sso.store';

/** What an owner submits; `clientSecret` empty keeps the stored one. */
export interface SsoSettingsInput {
  issuer: string;
  clientId: string;
  clientSecret: string;
  domains: string;
  requireSso: boolean;
  allowJoin: boolean;
}

/** What the settings page shows: everything but the secret, of which only its presence is told. */
export interface SsoSettingsView {
  issuer: string;
  clientId: string;
  hasSecret: boolean;
  domains: string[];
  requireSso: boolean;
  allowJoin: boolean;
  updatedAt: Date;
}

/** A configuration ready for a sign-in: its secret opened. */
export interface SsoClientConfig extends SsoConfigRow {
  clientSecret: string;
}

/** Why a save was refused, each problem in words for the owner; nothing was saved. */
export class SsoSettingsRefused extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join(' '));
    this.name = 'SsoSettingsRefused';
  }
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export class SsoSettings {
  readonly store: SsoStore;

  constructor(ds: DataSource, private readonly box: SecretBox, private readonly config: { webhookAllowLoopback: boolean }) {
    this.store = new SsoStore(ds);
  }

  async view(org: Organisation): Promise<SsoSettingsView | null> {
    const row = await this.store.byOrg(org);
    return row && {
      issuer: row.issuer, clientId: row.clientId, hasSecret: row.clientSecretSealed !== '', domains: row.domains,
      requireSso: row.requireSso, allowJoin: row.allowJoin, updatedAt: row.updatedAt,
    };
  }

  /** Validates, checks the issuer's discovery with these credentials' client id, then saves. */
  async save(org: Organisation, input: SsoSettingsInput, updatedBy: string | null): Promise<SsoSettingsView> {
    const problems: string[] = [];
    const existing = await this.store.byOrg(org);
    const issuer = input.issuer.trim();
    try {
      const url = parseReceiverUrl(issuer);
      if (url.search || url.hash) problems.push('The issuer URL takes no query or fragment.');
      if (url.protocol !== 'https:' && !this.config.webhookAllowLoopback) problems.push('The issuer URL must use https://.');
    } catch (err) {
      problems.push(err instanceof ReceiverUrlRefused ? `Issuer: ${err.message.replace(/^url/, 'the URL')}` : 'The issuer is not a URL.');
    }
    const clientId = input.clientId.trim();
    if (!clientId || clientId.length > 255 || CONTROL.test(clientId)) problems.push('The client id is required (at most 255 characters).');
    const secret = input.clientSecret.trim();
    if (!secret && !existing) problems.push('The client secret is required.');
    if (secret.length > 1024 || CONTROL.test(secret)) problems.push('The client secret is at most 1024 characters, without control characters.');
    let domains: string[] = [];
    try {
      domains = parseDomainList(input.domains);
    } catch (err) {
      if (!(err instanceof DomainRefused)) throw err;
      problems.push(err.message);
    }
    if (problems.length) throw new SsoSettingsRefused(problems);

    const clientSecret = secret || this.box.open(existing!.clientSecretSealed);
    try {
      await discover({ issuer, clientId, clientSecret }, this.config.webhookAllowLoopback);
    } catch (err) {
      throw new SsoSettingsRefused([`The issuer's discovery document could not be read (${providerProblem(err)}). Check the issuer URL; nothing was saved.`]);
    }
    try {
      await this.store.saveConfig(org, {
        issuer, clientId, clientSecretSealed: secret ? this.box.seal(secret) : null,
        requireSso: input.requireSso, allowJoin: input.allowJoin, domains, updatedBy,
      });
    } catch (err) {
      if (err instanceof DomainTaken) throw new SsoSettingsRefused([`${err.message} Ask support if the domain is yours.`]);
      throw err;
    }
    return (await this.view(org))!;
  }

  remove(org: Organisation): Promise<boolean> {
    return this.store.removeConfig(org);
  }

  /** The configuration covering the email's domain, its secret opened; null when none does. */
  async forEmail(email: string): Promise<SsoClientConfig | null> {
    const domain = domainOfEmail(email);
    const row = domain ? await this.store.byDomain(domain) : null;
    return row && this.opened(row);
  }

  async byId(id: string): Promise<SsoClientConfig | null> {
    const row = await this.store.byId(id);
    return row && this.opened(row);
  }

  /**
   * Whether the email's domain must sign in by single sign-on: the magic-link sign-in asks this and
   * refuses to mail a link when it answers true.
   */
  async ssoRequiredFor(email: string): Promise<boolean> {
    const domain = domainOfEmail(email);
    const row = domain ? await this.store.byDomain(domain) : null;
    return row?.requireSso ?? false;
  }

  private opened(row: SsoConfigRow): SsoClientConfig {
    return { ...row, clientSecret: this.box.open(row.clientSecretSealed) };
  }
}

/** A provider failure in words safe to show and log: the kind of failure, never a token or secret. */
export function providerProblem(err: unknown): string {
  // openid-client wraps what the guarded fetch threw: the first cause that is ours says it best.
  let e = err as { code?: string; error?: string; message?: string; cause?: unknown } | undefined;
  for (let depth = 0; e && depth < 5; depth++, e = e.cause as typeof e) {
    if (e instanceof ReceiverUrlRefused) return e.message.replace(/^url/, 'the URL');
    if (typeof e.error === 'string') return `the provider answered ${e.error}`;
    if (e.message && /identity provider/.test(e.message)) return e.message;
  }
  const top = err as { code?: string };
  return top?.code ? top.code : 'no usable answer';
}
