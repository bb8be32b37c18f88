/**
 * The console's HTTP side (docs/architecture.md, Connect sessions and console): people sign in on the
 * shared sign-in pages (src/people: magic link, SSO); a one-time link from `POST /tenants/{t}/console-links`
 * or, for sandbox tenants only, the MSP key pasted once still hand a browser in. Sessions are the one
 * layer both consoles share (src/people/sessions.ts); every form, the sign-in forms included, carries a
 * CSRF token; a viewer changes nothing. A request without a live session bound to a tenant gets the
 * sign-in page (or the organisation chooser) and nothing else; an ISV key signs no one in.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { mspTenantOf, type Caller } from '../access/caller';
import { ServiceError } from '../errors/service-error';
import { html, type SafeHtml } from '../pages/html';
import { cookieOf, field, formBody, type FormFields } from '../pages/forms';
import type { ConsoleRoutes, PageContext, PageHandler } from './page-context';
import { pageHeaders } from '../pages/page-headers';
import { changesThings } from '../people/people.service';
import { refusedPage, sendSignInPage, signInCsrfField } from '../people/people-ui';
import { SESSION_COOKIE, type PersonSession } from '../people/sessions';
import type { ConsoleDeps } from './console-deps';
import { consolePage, publicPage, refusal } from './ui';
import { notice } from '../pages/notice';
import { registerHealth } from './pages/health';
import { registerGrants } from './pages/grants';
import { registerIdentity } from './pages/identity';
import { registerCharges } from './pages/charges';
import { registerReconciliation } from './pages/reconciliation';
import { registerAudit } from './pages/audit';
import { registerKey } from './pages/key';
import { registerMembers } from './pages/members';

export function consoleRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.use('/console', pageHeaders());
  const signInPage = consoleSignInPage(deps);
  mountSignInRoutes(router, deps, signInPage);
  const routes = signedInPageRoutes(router, deps, signedInRequest(deps, signInPage));
  registerHealth(routes);
  registerGrants(routes);
  registerIdentity(routes);
  registerCharges(routes);
  registerReconciliation(routes);
  registerAudit(routes);
  registerKey(routes);
  registerMembers(routes, deps);
  return router;
}

type SignInPage = (req: Request, res: Response, status: number, message?: SafeHtml) => void;
type SignedInRequest = { session: PersonSession; caller: Caller; tenantName: string };

function consoleSignInPage({ sessions }: ConsoleDeps): SignInPage {
  // People sign in by magic link (or SSO, where set up); the MSP key pasted once stays for sandbox tenants.
  return (req, res, status, message) => {
    sendSignInPage(req, res, sessions, {
      area: 'console', status, message,
      extra: (token) => html`<section class="card stack" aria-labelledby="key-heading"><h2 id="key-heading">Sandbox tenants: paste the MSP key</h2>
<form class="stack" method="post" action="/console/sign-in">${signInCsrfField(token)}
<div><label for="api_key">MSP key</label><p class="hint" id="api_key_hint">A sandbox tenant's key, starting with sk_msp_. It is not kept in your browser; an ISV key or a real tenant's key does not open the console.</p>
<input id="api_key" name="api_key" type="password" autocomplete="off" required aria-describedby="api_key_hint"></div>
<button type="submit" class="secondary">Sign in with the key</button></form></section>`,
    });
  };
}

/** Signing in (the MSP key of a sandbox tenant, a one-time link) and out; the people's sign-in is src/people. */
function mountSignInRoutes(router: Router, deps: ConsoleDeps, signInPage: SignInPage): void {
  const { sessions } = deps;

  router.get('/console', async (req, res) => {
    const session = await sessions.current(req);
    if (session?.organisation?.kind === 'tenant') return res.redirect(303, '/console/health');
    if (session?.personId) return res.redirect(303, '/sign-in/choose');
    signInPage(req, res, 200);
  });

  router.post('/console/sign-in', formBody, async (req, res) => {
    // Login CSRF: a page elsewhere cannot post its own key here and sign this browser in to its tenant.
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) return refusedPage(res);
    const key = field(req.body, 'api_key');
    let caller: Caller | null = null;
    try {
      caller = key ? await deps.callerOfKey(key, req.socket.remoteAddress ?? 'unknown') : null;
    } catch (err) {
      const r = refusal(err);
      return signInPage(req, res, err instanceof ServiceError && err.code === 'rate_limited' ? 429 : 401, notice('bad', r?.message ?? 'That key was not accepted.'));
    }
    const tenantId = caller ? mspTenantOf(caller) : null;
    if (!tenantId) return signInPage(req, res, 401, notice('bad', 'That is not an MSP key. Sign in with your email instead.'));
    if (!(await deps.isSandboxTenant(tenantId))) return signInPage(req, res, 403, notice('bad', 'A key opens the console of a sandbox tenant only. Sign in with your email: your tenant\'s owner invites you.'));
    res.redirect(303, await sessions.signInTenantWithoutPerson(req, res, tenantId, 'msp_key'));
  });

  // The link shows a button: a link preview or a mail scanner fetching it does not spend it, and the
  // session cookie is set by a same-site POST, so SameSite=Strict sends it on the next page.
  router.get('/console/link/:token', (req, res) => {
    const token = sessions.signInFormToken(req, res);
    res.type('html').send(publicPage('Sign in', html`<h1>Sign in to your console</h1>
<p class="lead">This one-time link signs you in once, within 15 minutes of being issued.</p>
<form method="post" action="/console/link" class="stack">${signInCsrfField(token)}<input type="hidden" name="token" value="${String(req.params.token)}"><button type="submit">Continue to the console</button></form>`));
  });

  router.post('/console/link', formBody, async (req, res) => {
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) return refusedPage(res);
    const tenantId = await deps.auth.redeemLink(field(req.body, 'token'));
    if (!tenantId || !(await deps.mspCaller(tenantId, null))) {
      return signInPage(req, res, 401, notice('bad', 'This sign-in link has been used, has expired, or is not one we issued. Ask for a new one, or sign in with your email.'));
    }
    res.redirect(303, await sessions.signInTenantWithoutPerson(req, res, tenantId, 'console_link'));
  });

  router.post('/console/sign-out', formBody, async (req, res) => {
    const session = await sessions.current(req);
    if (session && !sessions.csrfAccepted(session, field(req.body, 'csrf'))) {
      return res.status(403).type('html').send(publicPage('Refused', html`<h1>Refused</h1><p>The form did not carry this session's token.</p>`));
    }
    if (session) await sessions.signOut(res, session);
    res.redirect(303, '/console');
  });
}

/** The signed-in request, or the sign-in page (401) and nothing else. */
function signedInRequest(deps: ConsoleDeps, signInPage: SignInPage) {
  const { sessions } = deps;
  return async (req: Request, res: Response): Promise<SignedInRequest | null> => {
    const session = await sessions.current(req);
    if (session?.personId && session.organisation?.kind !== 'tenant') {
      // Signed in, but to an ISV or to no organisation yet: this console shows nothing of it.
      res.redirect(303, '/sign-in/choose');
      return null;
    }
    const caller = session?.organisation ? await deps.mspCaller(session.organisation.id, session.person) : null;
    if (!session || !caller) {
      signInPage(req, res, 401, cookieOf(req, SESSION_COOKIE) ? notice('warn', 'Your session has ended. Sign in again.') : undefined);
      return null;
    }
    if (!(await deps.admit(caller, res))) {
      res.status(429).type('html').send(publicPage('Slow down', html`<h1>Too many requests</h1><p>Wait a minute and try again.</p>`));
      return null;
    }
    const tenants = await deps.run<{ tenants: { id: string; name: string }[] }>('list_tenants', { query: {} }, caller, session);
    return { session, caller, tenantName: tenants.tenants.find((t) => t.id === session.organisation!.id)?.name ?? '' };
  };
}

/**
 * The routes of the signed-in pages: each runs for a signed-in request only, a form only with the session's
 * CSRF token and not for a viewer, and a refusal becomes a page that says why.
 */
function signedInPageRoutes(router: Router, deps: ConsoleDeps, signed: (req: Request, res: Response) => Promise<SignedInRequest | null>): ConsoleRoutes {
  const { sessions } = deps;

  const handle = (method: 'get' | 'post', path: string, handler: PageHandler) => {
    const stack = method === 'post' ? [formBody] : [];
    router[method](path, ...stack, async (req: Request, res: Response, _next: NextFunction) => {
      const who = await signed(req, res);
      if (!who) return;
      const form = (method === 'post' ? req.body : {}) as FormFields;
      const send: PageContext['send'] = (current, title, main, status = 200, scripts = []) => {
        res.status(status).type('html').send(consolePage({ session: who.session, tenantName: who.tenantName }, current, title, main, scripts));
      };
      // Every form of a signed-in page carries the session's CSRF token; without it nothing runs.
      if (method === 'post' && !sessions.csrfAccepted(who.session, field(form, 'csrf'))) {
        return send(`/${path.split('/').slice(1, 3).join('/')}`, 'Refused', html`<h1>Refused</h1>${notice('bad', 'This form did not carry your session\'s security token, so nothing was done. Reload the page and try again.')}`, 403);
      }
      // A viewer changes nothing (the members page's own forms follow the members rules: leaving is open to all).
      if (method === 'post' && !changesThings(who.session.role) && !path.startsWith('/console/members/')) {
        return send(`/${path.split('/').slice(1, 3).join('/')}`, 'Refused', html`<h1>Refused</h1>${notice('bad', 'You are a viewer here: you can look, not change anything. An owner can change your role.')}`, 403);
      }
      const ctx: PageContext = {
        ...who, req, res, form, tenantId: who.session.organisation!.id,
        run: (name, raw) => deps.run(name, { path: { tenant_id: who.session.organisation!.id, ...(raw.path ?? {}) }, query: raw.query ?? {}, body: raw.body }, who.caller, who.session),
        send,
      };
      try {
        await handler(ctx);
      } catch (err) {
        const r = refusal(err);
        if (!r) throw err;
        const area = `/${path.split('/').slice(1, 3).join('/')}`;
        send(area, 'Not done', html`<h1>Not done</h1>${notice('bad', r.message)}<p><a href="${area}">Back</a></p>`, r.status);
      }
    });
  };
  return { get: (p, h) => handle('get', p, h), post: (p, h) => handle('post', p, h) };
}
