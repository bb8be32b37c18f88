/**
 * The connect page's HTTP side (docs/architecture.md, Pages): plain forms and redirects that work
 * without JavaScript, the OAuth start and callback, and the first sync's progress. Every route is rate
 * limited per client address; an unknown token counts as a failed authentication of the address.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { sandboxVendorOrigin } from '../config/config';
import { withAuditSurface } from '../operations/audit-context';
import { ServiceError } from '../errors/service-error';
import { registerPageScript } from '../pages/assets';
import { cookieOf, field, fieldList, formBody, type FormFields } from '../pages/forms';
import { pageHeaders } from '../pages/page-headers';
import { capabilitiesOf } from '../connectors/registry';
import type { ConnectionKind } from '../../entities';
import type { PeopleSessions } from '../people/sessions';
import { completionPage, connectPage, refusalPage, signInGatePage, type ProgressModel } from './connect-page';
import { ConnectPageRefusal, redirectTarget, type ConnectDeps, type ConnectSessions, type PageDecider, type Placement } from './connect-sessions.service';
import { PROGRESS_SCRIPT } from './progress-script';

const RESUME_COOKIE = 'connect_resume';
/** The completion page's cookie: the secret that opens what it showed once (a browser-session cookie, on that page only). */
const SHOWN_COOKIE = 'connect_shown';
const NOTICES: Record<string, { tone: 'ok' | 'warn' | 'bad'; text: string }> = {
  tested: { tone: 'ok', text: 'The vendor accepted the keys. Check the permissions below, then choose the grants and press Connect.' },
  authorised: { tone: 'ok', text: 'Signed in and approved at the vendor.' },
  'oauth-refused': { tone: 'bad', text: 'The vendor did not authorise the sign-in. Try again, or connect without it (what needs it stays off).' },
};

export function connectRouter(deps: ConnectDeps, sessions: ConnectSessions, people: PeopleSessions): Router {
  const router = express.Router();
  router.use('/connect', pageHeaders(), rateLimitedPages(deps));
  const kit = connectPageKit(deps, sessions, people);
  mountOAuthRoutes(router, kit);
  mountProgressRoutes(router, kit);
  mountSessionPageRoutes(router, kit);
  mountDecisionRoutes(router, kit);
  return router;
}

/** Every connect route is rate limited per client address. */
function rateLimitedPages(deps: ConnectDeps) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const wait = await deps.rateLimits.admitPage('connect', req.ip ?? 'unknown', deps.config.rateLimitPerMinute);
    if (wait != null) {
      res.setHeader('Retry-After', String(wait));
      return void res.status(429).type('html').send(refusalPage('Too many requests', `Wait ${wait} seconds and try again.`));
    }
    next();
  };
}

type ConnectPageKit = ReturnType<typeof connectPageKit>;

/** What the connect routes share: how a page handler runs, who may decide, and how the page renders. */
function connectPageKit(deps: ConnectDeps, sessions: ConnectSessions, people: PeopleSessions) {
  const secureCookie = deps.config.publicUrl.startsWith('https:');

  /** Runs a page handler: a refusal in words, a 429 for an address that keeps guessing tokens, our own failure logged. */
  const page = (fn: (req: Request, res: Response) => Promise<void>) => async (req: Request, res: Response) => {
    try {
      // Every audit entry a step of this page writes names the connect page as its surface.
      await withAuditSurface('connect', () => fn(req, res));
    } catch (err) {
      if (err instanceof ConnectPageRefusal) {
        if (err.status === 404) {
          const wait = await deps.rateLimits.authFailed(req.ip ?? 'unknown');
          if (wait != null) {
            res.setHeader('Retry-After', String(wait));
            return void res.status(429).type('html').send(refusalPage('Too many attempts', `Wait ${wait} seconds and try again.`));
          }
        }
        return void res.status(err.status).type('html').send(refusalPage(err.title, err.message));
      }
      req.log?.error({ err }, 'connect page failed');
      res.status(500).type('html').send(refusalPage('Something went wrong on our side', 'Nothing was connected. Try again in a moment; the request id identifies it in our logs.'));
    }
  };

  /**
   * Who may decide on this page (an existing tenant's signed-in owner or admin; null on a new tenant's
   * page); for anyone else, an existing tenant's page is the sign-in gate and nothing is saved.
   */
  const deciderFor = async (req: Request, session: Awaited<ReturnType<ConnectSessions['byToken']>>, form?: FormFields) => {
    const signedIn = await people.current(req);
    const decider = await sessions.deciderOf(session, signedIn);
    // A decision is a form of this page in this browser: it carries the session's CSRF token.
    if (decider && form && !people.csrfAccepted(signedIn!, field(form, 'csrf'))) {
      throw new ConnectPageRefusal(403, 'Refused', 'This form did not come from this page in this browser. Nothing was saved.');
    }
    return decider;
  };

  const render = async (req: Request, res: Response, token: string, status: number, extra: Partial<Parameters<typeof connectPage>[0]> = {}) => {
    const session = await sessions.byToken(token);
    const signedIn = await people.current(req);
    if (!sessions.mayDecide(session, signedIn)) {
      // The ISV that holds its own link, or a person of another organisation: what is asked, and a way to sign in.
      const member = signedIn?.personId ? (await people.membershipsOf(signedIn.personId)).find((m) => m.organisation.kind === 'tenant' && m.organisation.id === session.tenantId) : undefined;
      return void res.status(status).type('html').send(signInGatePage({
        token, isvName: await sessions.isvName(session), tenantName: await sessions.tenantName(session), session,
        current: await sessions.currentConnections(session), formToken: people.signInFormToken(req, res),
        signedIn: signedIn?.person ? { email: signedIn.person.email, csrf: signedIn.csrfToken, memberRole: member?.role ?? null } : null,
      }));
    }
    const connectors = Object.fromEntries(await Promise.all(session.kinds.map(async (k) => [k, await sessions.connectorsOf(session, k)] as const)));
    res.status(status).type('html').send(connectPage({
      session, token, isvName: await sessions.isvName(session), tenantName: await sessions.tenantName(session), connectors,
      info: sessions.infoOf(session), sandbox: deps.simulators ? { origin: sandboxVendorOrigin(deps.config) } : null,
      callbackUrl: (c) => sessions.callbackUrl(c), current: await sessions.currentConnections(session),
      csrf: signedIn?.csrfToken ?? null, ...extra,
    }));
  };

  return { deps, sessions, people, secureCookie, page, deciderFor, render };
}

/** The OAuth sign-in at the vendor: its start from the page, and the vendor's callback back to it. */
function mountOAuthRoutes(router: Router, { sessions, deciderFor, page, secureCookie }: ConnectPageKit): void {
  router.get('/connect/oauth/:connector/callback', page(async (req, res) => {
    const q = (n: string) => (typeof req.query[n] === 'string' ? (req.query[n] as string) : '');
    const resume = cookieOf(req, RESUME_COOKIE);
    const out = await sessions.finishOAuth(String(req.params.connector), { state: q('state'), code: q('code'), error: q('error'), errorDescription: q('error_description') }, resume);
    res.setHeader('Set-Cookie', `${RESUME_COOKIE}=; Path=/connect; HttpOnly; SameSite=Lax; Max-Age=0${secureCookie ? '; Secure' : ''}`);
    const kind = Object.entries(sessions.infoOf(out.session)).find(([, i]) => i.connector === req.params.connector)?.[0] ?? '';
    res.redirect(303, `/connect/${resume}?notice=${out.ok ? 'authorised' : 'oauth-refused'}#kind-${kind}`);
  }));

  router.get('/connect/:token/oauth/:kind/start', page(async (req, res) => {
    const token = String(req.params.token);
    const session = await sessions.byToken(token);
    const decider = await deciderFor(req, session);
    const url = await sessions.startOAuth(session, String(req.params.kind), decider);
    // The callback finds its way back to this page through this cookie (the token is never sent to the vendor).
    res.setHeader('Set-Cookie', `${RESUME_COOKIE}=${token}; Path=/connect; HttpOnly; SameSite=Lax; Max-Age=900${secureCookie ? '; Secure' : ''}`);
    res.redirect(302, url);
  }));
}

/** The first sync's progress: the completion page, and the JSON it polls. */
function mountProgressRoutes(router: Router, { sessions, page }: ConnectPageKit): void {
  const script = registerPageScript('connect-progress', PROGRESS_SCRIPT);
  router.get('/connect/progress/:key', page(async (req, res) => {
    const raw = String(req.params.key);
    const json = raw.endsWith('.json');
    const key = json ? raw.slice(0, -5) : raw;
    const p = await sessions.progress(key);
    if (json) {
      await sessions.forgetShown(p.session);
      return void res.json({ done: p.done, connections: p.connections });
    }
    // What Connect's answer showed once, again for the browser that completed it (its cookie), for a few minutes.
    const { again, keyShown } = await sessions.shownAgain(p.session, cookieOf(req, SHOWN_COOKIE) || null);
    res.type('html').send(completionPage(await progressModel(p, key, again?.mspKey ?? null, again?.owner ?? null, keyShown), script));
  }));

  async function progressModel(p: Awaited<ReturnType<ConnectSessions['progress']>>, key: string, mspKey: string | null, owner: ProgressModel['owner'], keyShown: boolean): Promise<ProgressModel> {
    const s = p.session;
    return {
      isvName: await sessions.isvName(s), tenantName: await sessions.tenantName(s), done: p.done, connections: p.connections,
      progressUrl: `/connect/progress/${key}`, redirect: redirectTarget(s), mspKey, owner, keyShown,
      missing: (s.missingPermissions as { permission: string; grants: string[] }[]).map((m) => ({ permission: m.permission, grants: m.grants })),
    };
  }

}

/** The connect page itself, and a signed-in member opening it for their tenant. */
function mountSessionPageRoutes(router: Router, { sessions, people, page, render }: ConnectPageKit): void {
  router.get('/connect/:token', page(async (req, res) => {
    const notice = typeof req.query.notice === 'string' ? NOTICES[req.query.notice] ?? null : null;
    const fill = typeof req.query.fill === 'string' ? req.query.fill : null;
    await render(req, res, String(req.params.token), 200, { notice, fill });
  }));

  // A signed-in member of the tenant whose session is bound elsewhere (another organisation, or the
  // chooser) opens this tenant for the page: the session is renewed, bound to it, and the page shown again.
  router.post('/connect/:token/as-member', formBody, page(async (req, res) => {
    const token = String(req.params.token);
    const session = await sessions.byToken(token);
    const signedIn = await people.current(req);
    if (!session.tenantId || !signedIn || !people.csrfAccepted(signedIn, field(req.body as FormFields, 'csrf'))) {
      throw new ConnectPageRefusal(403, 'Sign in to continue', 'This form did not come from this page in a signed-in browser. Nothing was saved.');
    }
    await people.choose(req, res, signedIn, { kind: 'tenant', id: session.tenantId });
    res.redirect(303, `/connect/${token}`);
  }));

}

/** The decisions of the page: testing a vendor's keys, and Connect itself. */
function mountDecisionRoutes(router: Router, { sessions, people, page, render, deciderFor, secureCookie }: ConnectPageKit): void {
  router.post('/connect/:token/test', formBody, page(async (req, res) => {
    const token = String(req.params.token);
    const form = req.body as FormFields;
    const session = await sessions.byToken(token);
    const decider = await deciderFor(req, session, form);
    const kind = field(form, 'kind');
    const connector = field(form, 'connector');
    const baseUrl = field(form, 'base_url');
    const credentials: Record<string, string> = {};
    const known = (await sessions.connectorsOf(session, kind)).includes(connector) ? capabilitiesOf(connector).connect.fields.map((f) => f.name) : [];
    for (const name of known) credentials[name] = field(form, `cred_${name}`);
    try {
      await sessions.test(session, kind, connector, baseUrl, credentials, decider);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      // The form again with its address; no credential typed is ever sent back to the browser.
      return render(req, res, token, 422, { retry: { kind, connector, baseUrl, error: err.message } });
    }
    res.redirect(303, `/connect/${token}?notice=tested#kind-${kind}`);
  }));

  router.post('/connect/:token/complete', formBody, page(async (req, res) => {
    const token = String(req.params.token);
    const form = req.body as FormFields;
    const session = await sessions.byToken(token);
    const chosen = new Map(session.kinds.map((k) => [k, fieldList(form, `grant_${k as ConnectionKind}`)]));
    const member = await deciderFor(req, session, form);
    const decider: PageDecider = member ?? { kind: 'first_owner', name: field(form, 'owner_name'), email: field(form, 'owner_email') };
    const placements = new Map<string, Placement>();
    for (const k of session.kinds) {
      const v = field(form, `place_${k}`);
      if (v) placements.set(k, v === 'new' ? 'new' : { replace: v });
    }
    let done;
    try {
      done = await sessions.complete(token, chosen, req.ip ?? 'unknown', decider, placements);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      return render(req, res, token, 422, { notice: { tone: 'bad', text: err.message } });
    }
    const p = await sessions.progress(done.progressKey);
    // A new tenant's first owner is signed in to its console here; nobody else is ever handed a console.
    if (done.owner?.kind === 'signed_in' && p.session.tenantId) {
      await people.signInPerson(req, res, { personId: done.owner.personId, organisation: { kind: 'tenant', id: p.session.tenantId }, method: 'connect_session' });
    }
    const owner: ProgressModel['owner'] = done.owner?.kind === 'signed_in' ? 'signed_in' : done.owner?.kind === 'invited' ? 'invited' : 'member';
    // The answer is a redirect to the completion page (a reload shows it again instead of sending Connect
    // once more); what it shows once is kept sealed for this browser only (its cookie, scoped to that page).
    const secret = await sessions.keepShown(p.session, { mspKey: done.mspKey, owner });
    const path = `/connect/progress/${done.progressKey}`;
    res.append('Set-Cookie', `${SHOWN_COOKIE}=${secret}; Path=${path}; HttpOnly; SameSite=Strict${secureCookie ? '; Secure' : ''}`);
    res.redirect(303, path);
  }));
}

