/**
 * The HTTP side of single sign-on (docs/architecture.md, Single sign-on):
 * - `POST /sign-in/sso` (the section of both sign-in pages, with the pre-session CSRF token): the email's
 *   domain names the organisation; the attempt cookie is set and the page continues to the provider by
 *   a link (a form's redirect to another origin would break the pages' `form-action 'self'`);
 * - `GET /sign-in/oidc/callback`: the attempt is spent and checked (sso-flow.ts); the person is found by
 *   email, joins as viewer only where the owner allows it, and is signed in by the people's session
 *   layer; the page then continues to the console by a same-site link, so the SameSite=Strict session
 *   cookie goes with it (a redirect chain begun at the provider would leave it behind);
 * - `GET|POST /console/settings/sso`, `/app/settings/sso` (and `/remove`): an owner's settings.
 * The attempt cookie is SameSite=Lax (the provider's redirect back is a cross-site navigation), httpOnly,
 * path /sign-in/oidc, ten minutes, Secure outside loopback.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { RateLimits } from '../../access/rate-limit';
import type { AuditService } from '../../audit/audit.service';
import { cookieOf, field, formBody } from '../../pages/forms';
import { html } from '../../pages/html';
import { pageHeaders } from '../../pages/page-headers';
import { managesMembers } from '../people.service';
import type { PeopleStore } from '../people.store';
import { sendSignInPage, type ConsoleArea } from '../people-ui';
import { notice } from '../../pages/notice';
import { CONSOLE_OF, type Organisation } from '../people.types';
import { loopbackUrl, type PersonSession, type PeopleSessions } from '../sessions';
import { domainOfEmail } from './sso-domains';
import { ATTEMPT_TTL_MS, CALLBACK_PATH, type FinishResult, type SsoFlow } from './sso-flow';
import { continuePage, refusalPage, settingsPage, SETTINGS_PATH } from './sso-pages';
import { providerProblem, SsoSettingsRefused, type SsoSettings } from './sso-settings';

export const ATTEMPT_COOKIE = 'sso_attempt';
/** Single sign-on starts a minute from one client address (each one reads the provider's discovery). */
export const SSO_STARTS_PER_ADDRESS = 20;

export interface SsoRouteDeps {
  config: { publicUrl: string };
  settings: SsoSettings;
  flow: SsoFlow;
  sessions: PeopleSessions;
  people: PeopleStore;
  audit: AuditService;
  rateLimits: Pick<RateLimits, 'admitPage'>;
  logger: Logger;
  /** The page script that follows a "Continue" link (registered with the page kit). */
  followScript: string;
}

const areaOf = (v: string): ConsoleArea => (v === 'app' ? 'app' : 'console');
const areaOfOrg = (org: Organisation): ConsoleArea => CONSOLE_OF[org.kind];

const REFUSALS: Record<Exclude<FinishResult, { ok: true }>['refusal'], { status: number; text: string }> = {
  no_attempt: { status: 400, text: 'This sign-in was already used, took longer than ten minutes, or was started in another browser. Start again from the sign-in page.' },
  config_gone: { status: 400, text: 'Single sign-on was turned off for your organisation meanwhile. Sign in with an email link instead.' },
  provider_declined: { status: 401, text: 'Your identity provider did not sign you in (you may have cancelled, or your account is not assigned to this application), so nobody was signed in here.' },
  provider_refused: { status: 401, text: 'The answer of your identity provider did not pass our checks, so nobody was signed in. Start again from the sign-in page.' },
  email_missing: { status: 403, text: 'Your identity provider did not tell us your email address, so nobody was signed in. Ask your administrator to release the email claim to this application.' },
  email_unverified: { status: 403, text: 'Your identity provider says your email address is not verified, so nobody was signed in.' },
  foreign_domain: { status: 403, text: 'You signed in at the identity provider with an email address outside the domains your organisation set up for single sign-on, so nobody was signed in.' },
};

export function ssoRouter(deps: SsoRouteDeps): Router {
  const router = express.Router();
  router.use(['/sign-in/sso', '/sign-in/oidc', SETTINGS_PATH.console, SETTINGS_PATH.app], pageHeaders());
  mountSsoStart(router, deps);
  mountSsoCallback(router, deps);
  for (const area of ['console', 'app'] as const) mountSsoSettings(router, deps, area);
  return router;
}

function setAttemptCookie(deps: SsoRouteDeps, res: Response, value: string, maxAgeSeconds: number): void {
  const secure = !loopbackUrl(deps.config.publicUrl);
  res.append('Set-Cookie', `${ATTEMPT_COOKIE}=${value}; Path=/sign-in/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
}

/** The start: the email's domain names the organisation, and the page continues to its provider. */
function mountSsoStart(router: Router, deps: SsoRouteDeps): void {
  const { settings, flow, sessions } = deps;
  router.post('/sign-in/sso', formBody, async (req, res) => {
    const area = areaOf(field(req.body, 'area'));
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) {
      return res.status(403).type('html').send(refusalPage('Refused', 'This form did not come from a page of ours in this browser, so nothing was done.', area));
    }
    const wait = await deps.rateLimits.admitPage('sso-start', req.socket.remoteAddress ?? 'unknown', SSO_STARTS_PER_ADDRESS);
    if (wait !== null) {
      res.setHeader('Retry-After', String(wait));
      return sendSignInPage(req, res, sessions, { area, status: 429, message: notice('bad', `Too many sign-in attempts. Wait ${wait} seconds and try again.`) });
    }
    const email = field(req.body, 'email').toLowerCase();
    const config = await settings.forEmail(email);
    if (!config) {
      const domain = domainOfEmail(email);
      return sendSignInPage(req, res, sessions, {
        area, status: 404,
        message: notice('warn', domain ? `No organisation signs in to this service with single sign-on for ${domain}. Ask for an email link instead.` : 'That is not an email address.'),
      });
    }
    let started;
    try {
      started = await flow.start(config, email);
    } catch (err) {
      deps.logger.warn({ sso_config: config.id, problem: providerProblem(err) }, 'single sign-on could not start');
      return res.status(502).type('html').send(refusalPage('Identity provider unavailable', `Your organisation's identity provider could not be reached (${providerProblem(err)}). Try again in a moment, or sign in with an email link.`, area));
    }
    setAttemptCookie(deps, res, started.browserToken, Math.floor(ATTEMPT_TTL_MS / 1000));
    const host = new URL(started.authorizeUrl).host;
    res.type('html').send(continuePage('Continue to your identity provider', html`Your organisation signs in at <strong>${host}</strong>. You come back here once you are signed in there.`,
      started.authorizeUrl, `Continue to ${host}`, deps.followScript, areaOfOrg(config.org)));
  });

}

/** The provider's answer: the person found (or joined as a viewer where the owner allows it) and signed in. */
function mountSsoCallback(router: Router, deps: SsoRouteDeps): void {
  const { flow, sessions } = deps;
  router.get(CALLBACK_PATH, async (req, res) => {
    const search = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const result = await flow.finish(cookieOf(req, ATTEMPT_COOKIE), search);
    setAttemptCookie(deps, res, '', 0);
    if (!result.ok) {
      const area = result.config ? areaOfOrg(result.config.org) : 'console';
      deps.logger.info({ sso_config: result.config?.id ?? null, refusal: result.refusal, problem: result.refusal.startsWith('provider_') ? result.detail : undefined }, 'single sign-on refused');
      if (result.config) await auditOf(deps, result.config.org, 'sso.sign_in_refused', { refusal: result.refusal });
      const r = REFUSALS[result.refusal];
      return res.status(r.status).type('html').send(refusalPage('Not signed in', r.text, area));
    }
    const org = result.config.org;
    const area = areaOfOrg(org);
    let person = await sessions.personByEmail(result.email);
    const member = person ? (await deps.people.membership(person.id, org)) !== null : false;
    if (!member) {
      const orgName = (await deps.people.organisationName(org)) ?? 'this organisation';
      if (!result.config.allowJoin) {
        await auditOf(deps, org, 'sso.sign_in_refused', { refusal: 'not_member', email: result.email });
        return res.status(403).type('html').send(refusalPage('Invitation needed', html`You signed in as <strong>${result.email}</strong>, but you are not a member of ${orgName} here. Ask an owner of ${orgName} to invite you; then single sign-on signs you in.`, area));
      }
      person = await deps.people.ensurePerson(result.email, result.name);
      await deps.people.addMembership(person.id, org, 'viewer');
      await auditOf(deps, org, 'member.joined', { via: 'sso', role: 'viewer', actor: { kind: 'person', id: person.id, email: person.email } });
    }
    const next = await sessions.signInPerson(req, res, { personId: person!.id, organisation: org, method: 'oidc' });
    res.type('html').send(continuePage('Signed in', html`Signed in as <strong>${result.email}</strong> through single sign-on.`, next, 'Continue to the console', deps.followScript, area));
  });
}

/** The signed-in owner of the session's organisation, in its own console; null with the answer sent. */
async function settingsOwner(deps: SsoRouteDeps, req: Request, res: Response, area: ConsoleArea): Promise<{ session: PersonSession; org: Organisation; orgName: string } | null> {
  const { sessions } = deps;
  const session = await sessions.current(req);
  const org = session?.organisation;
  if (!session || !org || areaOfOrg(org) !== area) {
    res.redirect(303, `/sign-in?area=${area}`);
    return null;
  }
  const orgName = (await deps.people.organisationName(org)) ?? '';
  if (!managesMembers(session.role)) {
    res.status(403).type('html').send(refusalPage('Owners only', 'Only an owner of the organisation sets up single sign-on.', area));
    return null;
  }
  if (req.method === 'POST' && !sessions.csrfAccepted(session, field(req.body, 'csrf'))) {
    res.status(403).type('html').send(refusalPage('Refused', 'This form did not carry your session\'s security token, so nothing was done. Reload the page and try again.', area));
    return null;
  }
  return { session, org, orgName };
}

/** An owner's settings, in the console of the session's organisation. */
function mountSsoSettings(router: Router, deps: SsoRouteDeps, area: ConsoleArea): void {
  const { settings, flow, sessions } = deps;
  const owner = (req: Request, res: Response) => settingsOwner(deps, req, res, area);
  const path = SETTINGS_PATH[area];
  const page = (who: { session: PersonSession; orgName: string }, extra: Partial<Parameters<typeof settingsPage>[0]>) => ({
    area, orgName: who.orgName, csrfToken: who.session.csrfToken, callbackUrl: flow.callbackUrl(), view: null, ...extra,
  });

  router.get(path, async (req, res) => {
    const who = await owner(req, res);
    if (!who) return;
    res.type('html').send(settingsPage(page(who, { view: await settings.view(who.org) })));
  });

  router.post(path, formBody, async (req, res) => {
    const who = await owner(req, res);
    if (!who) return;
    const typed = {
      issuer: field(req.body, 'issuer'), clientId: field(req.body, 'client_id'), domains: field(req.body, 'domains'),
      requireSso: field(req.body, 'require_sso') === 'on', allowJoin: field(req.body, 'allow_join') === 'on',
    };
    try {
      const view = await settings.save(who.org, { ...typed, clientSecret: field(req.body, 'client_secret') }, who.session.personId);
      await auditOf(deps, who.org, 'sso.configured', {
        ...sessions.detailOf(who.session), issuer: view.issuer, domains: view.domains, require_sso: view.requireSso, allow_join: view.allowJoin,
        secret_changed: field(req.body, 'client_secret') !== '',
      });
      res.type('html').send(settingsPage(page(who, { view, message: notice('ok', 'Saved. People of these domains can sign in with single sign-on now.') })));
    } catch (err) {
      if (!(err instanceof SsoSettingsRefused)) throw err;
      res.status(422).type('html').send(settingsPage(page(who, {
        view: await settings.view(who.org), typed,
        message: notice('bad', html`Nothing was saved:<ul>${err.problems.map((p) => html`<li>${p}</li>`)}</ul>`),
      })));
    }
  });

  router.post(`${path}/remove`, formBody, async (req, res) => {
    const who = await owner(req, res);
    if (!who) return;
    const removed = await settings.remove(who.org);
    if (removed) await auditOf(deps, who.org, 'sso.removed', sessions.detailOf(who.session));
    res.type('html').send(settingsPage(page(who, { message: notice('ok', 'Single sign-on is off. Members sign in with email links.') })));
  });
}

/** Tenants keep an audit log; an ISV has none yet (as for its sign-ins, src/people/sessions.ts). */
async function auditOf(deps: Pick<SsoRouteDeps, 'audit'>, org: Organisation, action: string, detail: Record<string, unknown>): Promise<void> {
  if (org.kind === 'tenant') await deps.audit.write({ tenantId: org.id, action, outcome: action.endsWith('refused') ? 'refused' : 'ok', detail });
}
