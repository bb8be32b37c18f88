/**
 * The ISV's console at /app (docs/architecture.md, People): for now its sign-in
 * (magic link, and single sign-on where it is set up), a landing page and the members page. A request
 * without a session bound to an ISV gets the sign-in page or the organisation chooser, nothing else.
 */
import express, { type Request, type Response, type Router } from 'express';
import { ServiceError } from '../errors/service-error';
import { field, formBody } from '../pages/forms';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import { pageHeaders } from '../pages/page-headers';
import { refusal } from '../console/ui';
import { applyMembersForm, MEMBERS_ACTIONS, membersView, type MembersAction } from '../people/members-page';
import type { PeopleService } from '../people/people.service';
import { notice, refusedPage, sendSignInPage, sessionCsrfField } from '../people/people-ui';
import { CONSOLE_OF, type Organisation } from '../people/people.types';
import type { PeopleSessions, PersonSession } from '../people/sessions';

export interface IsvConsoleDeps {
  people: PeopleService;
  sessions: PeopleSessions;
  /** The ISV's name (shown in the header). */
  isvName(isvId: string): Promise<string | null>;
}

const PAGES = [{ href: '/app', label: 'Overview' }, { href: '/app/members', label: 'Members' }, { href: '/app/settings/sso', label: 'Single sign-on' }, { href: '/sign-in/choose', label: 'Switch organisation' }];

function appPage(s: PersonSession, isvName: string, current: string, title: string, main: SafeHtml): string {
  return renderPage({
    title, area: 'ISV console', main,
    nav: PAGES.map((p) => ({ ...p, current: p.href === current })),
    aside: html`<span>${isvName} · ${s.person?.email}</span> <form method="post" action="/sign-out">${sessionCsrfField(s)}<button type="submit" class="link">Sign out</button></form>`,
  });
}

export function isvConsoleRouter(deps: IsvConsoleDeps): Router {
  const router = express.Router();
  router.use('/app', pageHeaders());

  /** The session bound to an ISV, or an answer already sent (sign-in page, or the chooser). */
  const signed = async (req: Request, res: Response): Promise<{ session: PersonSession; org: Organisation; name: string } | null> => {
    const session = await deps.sessions.current(req);
    if (!session) {
      sendSignInPage(req, res, deps.sessions, { area: 'app', status: 401 });
      return null;
    }
    if (!session.organisation || CONSOLE_OF[session.organisation.kind] !== 'app' || !session.personId) {
      res.redirect(303, '/sign-in/choose');
      return null;
    }
    return { session, org: session.organisation, name: (await deps.isvName(session.organisation.id)) ?? '' };
  };

  router.get('/app', async (req, res) => {
    const who = await signed(req, res);
    if (!who) return;
    res.type('html').send(appPage(who.session, who.name, '/app', 'Overview', html`<h1>${who.name}</h1>
<p class="lead">Signed in as ${who.session.person?.email}, ${who.session.role}.</p>
<div class="cards"><section class="card"><h2>Members</h2><p>Who in your team can sign in here, and with which role.</p><p><a href="/app/members">Open members</a></p></section>
<section class="card"><h2>Coming next</h2><p>Keys, MSPs and their connections, webhooks and the request log will appear here. Until then your programs use the API with your ISV key.</p></section></div>`));
  });

  router.get('/app/members', async (req, res) => {
    const who = await signed(req, res);
    if (!who) return;
    res.type('html').send(appPage(who.session, who.name, '/app/members', 'Members', await membersView(deps.people, who.org, who.session, '/app/members')));
  });

  router.post('/app/members/:action', formBody, async (req, res) => {
    const who = await signed(req, res);
    if (!who) return;
    if (!deps.sessions.csrfAccepted(who.session, field(req.body, 'csrf'))) return refusedPage(res, 'app');
    const action = String(req.params.action) as MembersAction;
    if (!MEMBERS_ACTIONS.includes(action)) return res.status(404).type('html').send(appPage(who.session, who.name, '/app/members', 'Not found', html`<h1>Not found</h1>`));
    try {
      const done = await applyMembersForm(deps.people, action, req.body, who.org, who.session, async () => undefined);
      if (done.left) return res.redirect(303, '/sign-in/choose');
      res.type('html').send(appPage(who.session, who.name, '/app/members', 'Members', await membersView(deps.people, who.org, who.session, '/app/members', done.message)));
    } catch (err) {
      const r = refusal(err);
      if (!r || !(err instanceof ServiceError)) throw err;
      res.status(r.status).type('html').send(appPage(who.session, who.name, '/app/members', 'Members', await membersView(deps.people, who.org, who.session, '/app/members', notice('bad', r.message))));
    }
  });
  return router;
}
