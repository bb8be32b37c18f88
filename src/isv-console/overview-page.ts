/** The console's landing page, its members page (src/people/members-page.ts) and the link to single sign-on. */
import { ServiceError } from '../errors/service-error';
import { formBody } from '../pages/forms';
import { html } from '../pages/html';
import { refusal } from '../console/ui';
import { applyMembersForm, MEMBERS_ACTIONS, membersView, type MembersAction } from '../people/members-page';
import { notice } from '../pages/notice';
import type { IsvConsolePage } from './shell';

/** What each page is for, on the landing page. */
const OVERVIEW_CARDS = [
  { title: 'MSPs', href: '/app/msps', text: 'Every MSP that granted you access, how each connected system is doing, and what you may do there.' },
  { title: 'Connect links', href: '/app/connect-links', text: 'Ask an MSP to connect: make a link, copy or mail it, see whether it was used.' },
  { title: 'API keys', href: '/app/keys', text: 'Create, roll (with an overlap) and revoke the keys your programs use.' },
  { title: 'Webhooks', href: '/app/webhooks', text: 'Endpoints for every tenant or one, their deliveries, retries, test events and secret rotation.' },
  { title: 'Requests', href: '/app/requests', text: 'Every request your keys made, with what was sent and answered (secrets removed).' },
  { title: 'Members', href: '/app/members', text: 'Who in your team can sign in here, and with which role.' },
];

export const overviewPage: IsvConsolePage = {
  nav: { href: '/app', label: 'Overview' },
  register(router, shell) {
    router.get('/app', async (req, res) => {
      const who = await shell.signed(req, res);
      if (!who) return;
      res.type('html').send(shell.page(who, '/app', 'Overview', html`<h1>${who.name}</h1>
<p class="lead">Signed in as ${who.session.person?.email}, ${who.session.role}.</p>
<div class="cards">${OVERVIEW_CARDS.map((c) => html`<section class="card"><h2>${c.title}</h2><p>${c.text}</p><p><a href="${c.href}">Open ${c.title.toLowerCase()}</a></p></section>`)}</div>`));
    });
  },
};

export const membersPage: IsvConsolePage = {
  nav: { href: '/app/members', label: 'Members' },
  register(router, shell) {
    const people = shell.services.people;
    router.get('/app/members', async (req, res) => {
      const who = await shell.signed(req, res);
      if (!who) return;
      res.type('html').send(shell.page(who, '/app/members', 'Members', await membersView(people, who.org, who.session, '/app/members')));
    });

    router.post('/app/members/:action', formBody, async (req, res) => {
      const who = await shell.signedForm(req, res);
      if (!who) return;
      const action = String(req.params.action) as MembersAction;
      if (!MEMBERS_ACTIONS.includes(action)) return res.status(404).type('html').send(shell.page(who, '/app/members', 'Not found', html`<h1>Not found</h1>`));
      try {
        const done = await applyMembersForm(people, action, req.body, who.org, who.session, async () => undefined);
        if (done.left) return res.redirect(303, '/sign-in/choose');
        res.type('html').send(shell.page(who, '/app/members', 'Members', await membersView(people, who.org, who.session, '/app/members', done.message)));
      } catch (err) {
        const r = refusal(err);
        if (!r || !(err instanceof ServiceError)) throw err;
        res.status(r.status).type('html').send(shell.page(who, '/app/members', 'Members', await membersView(people, who.org, who.session, '/app/members', notice('bad', r.message))));
      }
    });
  },
};

/** Single sign-on's pages live with SSO (src/people/sso); the console only links to them. */
export const ssoNavPage: IsvConsolePage = { nav: { href: '/app/settings/sso', label: 'Single sign-on' }, register() {} };
