/**
 * What a person is and where they belong (docs/architecture.md, People): a person (email, name) holds
 * memberships in organisations, an ISV (roles owner, developer, viewer) or a tenant, the MSP (roles
 * owner, admin, viewer). Apart from the stores and sessions so that each can import it without the other.
 */
export type OrgKind = 'isv' | 'tenant';

/** One organisation a session can be bound to. */
export interface Organisation {
  kind: OrgKind;
  id: string;
}

export const ROLES: Record<OrgKind, readonly string[]> = {
  isv: ['owner', 'developer', 'viewer'],
  tenant: ['owner', 'admin', 'viewer'],
};

/** Which console an organisation's people use: the ISV's at /app, the MSP's at /console. */
export const CONSOLE_OF: Record<OrgKind, 'app' | 'console'> = { isv: 'app', tenant: 'console' };
/** An organisation's kind in words, for people. */
export const ORG_WORD: Record<OrgKind, string> = { isv: 'ISV', tenant: 'MSP' };
/** Whether a submitted value names a kind of organisation. */
export const isOrgKind = (v: string): v is OrgKind => Object.hasOwn(ROLES, v);

export interface Person {
  id: string;
  email: string;
  name: string;
}

export interface Membership {
  personId: string;
  organisation: Organisation;
  /** The organisation's name, for the chooser and the page header. */
  name: string;
  role: string;
}

/** An email as it is compared and stored: trimmed and lower-cased. */
export function normalEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A plausible address (one @, a dot in the domain, no spaces), at most 254 characters. */
export function plausibleEmail(email: string): boolean {
  // No control character either (NUL among them, which PostgreSQL refuses in text).
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  return email.length <= 254 && /^[^\s@\u0000-\u001f\u007f]+@[^\s@\u0000-\u001f\u007f]+\.[^\s@\u0000-\u001f\u007f]+$/.test(email);
}

/** A person's name as kept: control characters (NUL among them, which PostgreSQL refuses) dropped, trimmed, at most 200 characters. */
export function personName(raw: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what it drops
  return raw.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 200);
}

export function sameOrganisation(a: Organisation, b: Organisation): boolean {
  return a.kind === b.kind && a.id === b.id;
}
