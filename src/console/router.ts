/**
 * The console's HTTP side (docs/architecture.md, Connect sessions and console): sign-in by a one-time
 * link or the MSP key, the session cookie (httpOnly, SameSite=Strict, Secure outside loopback, path
 * /console), the CSRF check on every form of a signed-in page, sign-out, and the pages. A request
 * without a live session gets the sign-in page and nothing else; an ISV key signs no one in.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { mspTenantOf, type Caller } from '../access/caller';
import { ServiceError } from '../errors/service-error';
import { html, type SafeHtml } from '../pages/html';
import { cookieOf, field, formBody, type FormFields } from '../pages/forms';
import type { ConsoleRoutes, PageContext, PageHandler } from './page-context';
import { pageHeaders } from '../pages/page-headers';
import { csrfMatches, SESSION_ABSOLUTE_MS, type ConsoleSessionInfo } from './console-auth';
import type { ConsoleDeps } from './console-deps';
import { consolePage, notice, publicPage, refusal } from './ui';
import { registerHealth } from './pages/health';
import { registerGrants } from './pages/grants';
import { registerIdentity } from './pages/identity';
import { registerCharges } from './pages/charges';
import { registerReconciliation } from './pages/reconciliation';
import { registerAudit } from './pages/audit';
import { registerKey } from './pages/key';

export const COOKIE = 'console_session';

function loopback(publicUrl: string): boolean {
  const host = new URL(publicUrl).hostname;
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\./.test(host);
}

export function consoleRouter(deps: ConsoleDeps): Router {
  const router = express.Router();
  const secure = !loopback(deps.publicUrl);
  router.use(pageHeaders());

  const setCookie = (res: Response, value: string, maxAgeSeconds: number) => {
    res.setHeader('Set-Cookie', `${COOKIE}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
  };

  const signInPage = (res: Response, status: number, message?: SafeHtml) => {
    res.status(status).type('html').send(publicPage('Sign in', html`<h1>Sign in to your console</h1>
${message ?? ''}
<p class="lead">Open the one-time sign-in link you were given, or paste your MSP key (<code>sk_msp_…</code>) once. The key is not kept in your browser: you get a session that ends after an hour without use, after 12 hours in any case, or when you sign out.</p>
<form class="stack card" method="post" action="/console/sign-in">
<div><label for="api_key">MSP key</label><p class="hint" id="api_key_hint">Your tenant's key, starting with sk_msp_. An ISV key does not open the console.</p>
<input id="api_key" name="api_key" type="password" autocomplete="off" required aria-describedby="api_key_hint"></div>
<button type="submit">Sign in</button></form>
<p class="muted">Need a link? Whoever holds the MSP key can issue one with <code>POST /tenants/{tenant_id}/console-links</code>; the connect flow gives one at its end.</p>`));
  };

  const startSession = async (res: Response, tenantId: string, via: 'link' | 'key') => {
    const { cookie, session } = await deps.auth.startSession(tenantId, via);
    await deps.audit(tenantId, 'console.sign_in', { via: 'console', console_session: session.id, signed_in_with: via, decided_by: 'msp' });
    setCookie(res, cookie, Math.floor(SESSION_ABSOLUTE_MS / 1000));
    res.redirect(303, '/console/health');
  };

  router.get('/console', async (req, res) => {
    if (await deps.auth.session(cookieOf(req, COOKIE))) return res.redirect(303, '/console/health');
    signInPage(res, 200);
  });

  router.post('/console/sign-in', formBody, async (req, res) => {
    const key = field(req.body, 'api_key');
    let caller: Caller | null = null;
    try {
      caller = key ? await deps.callerOfKey(key, req.socket.remoteAddress ?? 'unknown') : null;
    } catch (err) {
      const r = refusal(err);
      return signInPage(res, err instanceof ServiceError && err.code === 'rate_limited' ? 429 : 401, notice('bad', r?.message ?? 'That key was not accepted.'));
    }
    const tenantId = caller ? mspTenantOf(caller) : null;
    if (!tenantId) return signInPage(res, 401, notice('bad', 'That is not an MSP key. The console opens only with your tenant\'s MSP key (sk_msp_…) or a sign-in link.'));
    await startSession(res, tenantId, 'key');
  });

  // The link shows a button: a link preview or a mail scanner fetching it does not spend it, and the
  // session cookie is set by a same-site POST, so SameSite=Strict sends it on the next page.
  router.get('/console/link/:token', (req, res) => {
    res.type('html').send(publicPage('Sign in', html`<h1>Sign in to your console</h1>
<p class="lead">This one-time link signs you in once, within 15 minutes of being issued.</p>
<form method="post" action="/console/link" class="stack"><input type="hidden" name="token" value="${String(req.params.token)}"><button type="submit">Continue to the console</button></form>`));
  });

  router.post('/console/link', formBody, async (req, res) => {
    const tenantId = await deps.auth.redeemLink(field(req.body, 'token'));
    if (!tenantId || !(await deps.mspCaller(tenantId))) {
      return signInPage(res, 401, notice('bad', 'This sign-in link has been used, has expired, or is not one we issued. Ask for a new one, or sign in with your MSP key.'));
    }
    await startSession(res, tenantId, 'link');
  });

  /** The signed-in request, or the sign-in page (401) and nothing else. */
  const signed = async (req: Request, res: Response): Promise<{ session: ConsoleSessionInfo; caller: Caller; tenantName: string } | null> => {
    const session = await deps.auth.session(cookieOf(req, COOKIE));
    const caller = session ? await deps.mspCaller(session.tenantId) : null;
    if (!session || !caller) {
      signInPage(res, 401, cookieOf(req, COOKIE) ? notice('warn', 'Your session has ended. Sign in again.') : undefined);
      return null;
    }
    if (!(await deps.admit(caller, res))) {
      res.status(429).type('html').send(publicPage('Slow down', html`<h1>Too many requests</h1><p>Wait a minute and try again.</p>`));
      return null;
    }
    const tenants = await deps.run<{ tenants: { id: string; name: string }[] }>('list_tenants', { query: {} }, caller, session);
    return { session, caller, tenantName: tenants.tenants.find((t) => t.id === session.tenantId)?.name ?? '' };
  };

  router.post('/console/sign-out', formBody, async (req, res) => {
    const session = await deps.auth.session(cookieOf(req, COOKIE));
    if (session && csrfMatches(session, field(req.body, 'csrf'))) {
      await deps.auth.endSession(session.id);
      await deps.audit(session.tenantId, 'console.sign_out', { via: 'console', console_session: session.id });
    }
    else if (session) return res.status(403).type('html').send(publicPage('Refused', html`<h1>Refused</h1><p>The form did not carry this session's token.</p>`));
    setCookie(res, '', 0);
    res.redirect(303, '/console');
  });

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
      if (method === 'post' && !csrfMatches(who.session, field(form, 'csrf'))) {
        return send(`/${path.split('/').slice(1, 3).join('/')}`, 'Refused', html`<h1>Refused</h1>${notice('bad', 'This form did not carry your session\'s security token, so nothing was done. Reload the page and try again.')}`, 403);
      }
      const ctx: PageContext = {
        ...who, req, res, form, tenantId: who.session.tenantId,
        run: (name, raw) => deps.run(name, { path: { tenant_id: who.session.tenantId, ...(raw.path ?? {}) }, query: raw.query ?? {}, body: raw.body }, who.caller, who.session),
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
  const routes: ConsoleRoutes = { get: (p, h) => handle('get', p, h), post: (p, h) => handle('post', p, h) };
  registerHealth(routes);
  registerGrants(routes);
  registerIdentity(routes);
  registerCharges(routes);
  registerReconciliation(routes);
  registerAudit(routes);
  registerKey(routes);
  return router;
}
