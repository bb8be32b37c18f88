/**
 * One session layer for both consoles (the MSP's at /console, the ISV's at /app; docs/architecture.md,
 * People). What the sign-in routes of this folder and of single sign-on (src/people/sso) call:
 *
 * - `signInPerson(req, res, { personId, organisation?, method })` ends the browser's current session,
 *   starts a new one (a new id: the session id is renewed at every sign-in), sets the cookie and answers
 *   where to send the person next (`res.redirect(303, next)`): the organisation's console when one is
 *   given or the person belongs to exactly one, else the organisation chooser `/sign-in/choose`.
 *   A person who is not a member of `organisation` gets a session bound to nothing (the chooser).
 * - `personByEmail(email)` and `membershipsOf(personId)`: lookups (emails are compared lower-cased).
 * - `signInFormToken(req, res)` / `signInFormAccepted(req, token)`: the CSRF pair of every form shown
 *   before sign-in (login CSRF): a pre-session cookie (`pre_session`, httpOnly, SameSite=Strict) and a
 *   token in the form that is an HMAC of it under a key derived from the service's encryption key. A page
 *   on another site cannot read the token nor send the cookie, so its auto-posted form is refused.
 * - `current(req)`: the live session of the request (its idle clock restarted), or null.
 *
 * The cookie `session` holds 32 random bytes (only their SHA-256 is stored), Path=/, httpOnly,
 * SameSite=Strict, Secure unless PUBLIC_URL is loopback. A session ends after an hour without a request,
 * 12 hours after sign-in whatever the activity, at sign-out, or at "sign out everywhere". It is bound to
 * one organisation and carries the member's role there; it sees nothing of another organisation.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { Request, Response } from 'express';
import { cookieOf } from '../pages/forms';
import type { PeopleStore } from './people.store';
import type { Membership, Organisation, Person } from './people.types';
import { CONSOLE_OF, normalEmail, sameOrganisation } from './people.types';
import { hashOf, newToken, sameSecret, tokenShaped } from './secret-tokens';
import type { SessionRow, SessionsStore } from './sessions.store';

export const SESSION_COOKIE = 'session';
export const PRE_SESSION_COOKIE = 'pre_session';
export const SESSION_IDLE_MS = 60 * 60_000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60_000;
const PRE_SESSION_SECONDS = 2 * 3600;

/** How a session was started: a person by magic link, invitation or SSO; or (MSP console only) a key or a one-time link. */
export type SignInMethod = 'magic_link' | 'invitation' | 'oidc' | 'msp_key' | 'console_link' | 'connect_session';

export interface PersonSession extends SessionRow {
  person: Person | null;
}

/** Where a session bound to an organisation lands. */
export function landingOf(org: Organisation): string {
  return CONSOLE_OF[org.kind] === 'console' ? '/console/health' : '/app';
}

export function loopbackUrl(publicUrl: string): boolean {
  const host = new URL(publicUrl).hostname;
  // An address of 127.0.0.0/8, not any name that starts with "127.".
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Written for every sign-in and sign-out (the audit log of a tenant; nothing is kept for an ISV yet). */
export type SessionAudit = (org: Organisation, action: string, detail: Record<string, unknown>) => Promise<void>;

export class PeopleSessions {
  private readonly formKey: Buffer;

  constructor(
    private readonly sessions: SessionsStore,
    private readonly people: PeopleStore,
    private readonly config: { publicUrl: string; encryptionKey: Buffer },
    private readonly audit: SessionAudit,
  ) {
    this.formKey = Buffer.from(hkdfSync('sha256', config.encryptionKey, Buffer.alloc(0), 'sign-in form csrf', 32));
  }

  personByEmail(email: string): Promise<Person | null> {
    return this.people.personByEmail(normalEmail(email));
  }

  membershipsOf(personId: string): Promise<Membership[]> {
    return this.people.membershipsOf(personId);
  }

  /** See the module comment: signs a person in and answers the path to redirect to. */
  async signInPerson(req: Request, res: Response, opts: { personId: string; organisation?: Organisation; method: SignInMethod }): Promise<string> {
    const memberships = await this.people.membershipsOf(opts.personId);
    const chosen = opts.organisation
      ? memberships.find((m) => sameOrganisation(m.organisation, opts.organisation!))
      : memberships.length === 1 ? memberships[0] : undefined;
    await this.start(req, res, { personId: opts.personId, organisation: chosen?.organisation ?? null, role: chosen?.role ?? null, method: opts.method });
    return chosen ? landingOf(chosen.organisation) : '/sign-in/choose';
  }

  /**
   * The MSP console's sign-ins that name no person (the sandbox's pasted MSP key, a one-time link a script
   * handed over): a session bound to the tenant, acting as its `admin`.
   */
  async signInTenantWithoutPerson(req: Request, res: Response, tenantId: string, method: 'msp_key' | 'console_link'): Promise<string> {
    await this.start(req, res, { personId: null, organisation: { kind: 'tenant', id: tenantId }, role: 'admin', method });
    return landingOf({ kind: 'tenant', id: tenantId });
  }

  /** Binds a person's session to one of their organisations (the chooser): a new session id, the old one ended. */
  async choose(req: Request, res: Response, session: PersonSession, org: Organisation): Promise<string | null> {
    if (!session.personId) return null;
    const m = await this.people.membership(session.personId, org);
    if (!m) return null;
    await this.start(req, res, { personId: session.personId, organisation: org, role: m.role, method: session.signedInWith as SignInMethod });
    return landingOf(org);
  }

  /** The live session of the request, its idle clock restarted; null when there is none. */
  async current(req: Request): Promise<PersonSession | null> {
    const cookie = cookieOf(req, SESSION_COOKIE);
    if (!tokenShaped(cookie)) return null;
    const row = await this.sessions.touch(hashOf(cookie), SESSION_IDLE_MS);
    if (!row) return null;
    return { ...row, person: row.personId ? await this.people.personById(row.personId) : null };
  }

  /** Whether a form of a signed-in page carries its session's CSRF token (constant time). */
  csrfAccepted(session: SessionRow, given: string): boolean {
    return sameSecret(given, session.csrfToken);
  }

  async signOut(res: Response, session: PersonSession): Promise<void> {
    await this.sessions.end(session.id);
    if (session.organisation) await this.audit(session.organisation, 'console.sign_out', this.detailOf(session));
    this.setCookie(res, SESSION_COOKIE, '', 0);
  }

  /** Ends every session of the person (every browser, every organisation), this one included. */
  async signOutEverywhere(res: Response, session: PersonSession): Promise<number> {
    if (!session.personId) {
      await this.signOut(res, session);
      return 1;
    }
    const n = await this.sessions.endAllOf(session.personId);
    if (session.organisation) await this.audit(session.organisation, 'console.sign_out_everywhere', { ...this.detailOf(session), sessions_ended: n });
    this.setCookie(res, SESSION_COOKIE, '', 0);
    return n;
  }

  /** The token a form shown before sign-in carries; sets the pre-session cookie when the browser has none. */
  signInFormToken(req: Request, res: Response): string {
    // One page may render several forms: the cookie set for the first is kept on the response.
    let pre = (res.locals.preSession as string | undefined) ?? cookieOf(req, PRE_SESSION_COOKIE);
    if (!tokenShaped(pre)) {
      pre = newToken();
      this.setCookie(res, PRE_SESSION_COOKIE, pre, PRE_SESSION_SECONDS);
    }
    res.locals.preSession = pre;
    return this.formTokenOf(pre);
  }

  /** Whether a form posted before sign-in carries the token of this browser's pre-session cookie. */
  signInFormAccepted(req: Request, given: string): boolean {
    const pre = cookieOf(req, PRE_SESSION_COOKIE);
    return tokenShaped(pre) && sameSecret(given, this.formTokenOf(pre));
  }

  /** The audit detail of a session's decisions: the person as actor, the console as surface. */
  detailOf(session: SessionRow & { person: Person | null }): Record<string, unknown> {
    return {
      via: 'console', console_session: session.id, decided_by: session.organisation && CONSOLE_OF[session.organisation.kind] === 'app' ? 'isv' : 'msp',
      actor: session.person ? { kind: 'person', id: session.person.id, email: session.person.email } : { kind: 'msp_key', id: session.organisation?.id ?? null },
      signed_in_with: session.signedInWith,
    };
  }

  private formTokenOf(pre: string): string {
    return createHmac('sha256', this.formKey).update(pre).digest('base64url');
  }

  private async start(req: Request, res: Response, s: { personId: string | null; organisation: Organisation | null; role: string | null; method: SignInMethod }): Promise<void> {
    // Renewed at sign-in: whatever session this browser had ends, and the new one has a new id and token.
    const previous = cookieOf(req, SESSION_COOKIE);
    if (tokenShaped(previous)) {
      const old = await this.sessions.touch(hashOf(previous), SESSION_IDLE_MS);
      if (old) await this.sessions.end(old.id);
    }
    const cookie = newToken();
    const id = await this.sessions.insertSession({
      tokenHash: hashOf(cookie), csrfToken: newToken(), personId: s.personId, organisation: s.organisation, role: s.role,
      signedInWith: s.method, expiresAt: new Date(Date.now() + SESSION_ABSOLUTE_MS),
    });
    const person = s.personId ? await this.people.personById(s.personId) : null;
    if (s.organisation) {
      await this.audit(s.organisation, 'console.sign_in', this.detailOf({ id, personId: s.personId, organisation: s.organisation, role: s.role, csrfToken: '', signedInWith: s.method, person }));
    }
    res.append('Set-Cookie', this.cookieLine(SESSION_COOKIE, cookie, Math.floor(SESSION_ABSOLUTE_MS / 1000)));
    // The pre-session has served its purpose; a new one is made for the next sign-in form.
    res.append('Set-Cookie', this.cookieLine(PRE_SESSION_COOKIE, '', 0));
  }

  private setCookie(res: Response, name: string, value: string, maxAgeSeconds: number): void {
    res.append('Set-Cookie', this.cookieLine(name, value, maxAgeSeconds));
  }

  private cookieLine(name: string, value: string, maxAgeSeconds: number): string {
    // Read late: the public URL is known only after listen when PORT is 0.
    const secure = !loopbackUrl(this.config.publicUrl);
    return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  }
}
