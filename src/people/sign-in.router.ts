/**
 * People's sign-in routes, shared by both consoles (docs/architecture.md, People):
 * - `POST /sign-in/email` mails a magic link; the answer is the same whether or not the address has an
 *   account; limited per client address and per email;
 * - `GET /sign-in/link/<token>` shows a Continue button that posts (a mail scanner does not spend it);
 * - `GET|POST /sign-in/choose`: the organisation chooser of a person who belongs to several;
 * - `GET|POST /invitations/...`: accepting an invitation (the person is signed in to its organisation);
 * - `POST /sign-out`, `POST /sign-out/everywhere`;
 * - `GET /dev/outbox`: the local outbox, only with the sandbox on.
 * Every form shown before sign-in carries the pre-session CSRF token; without it nothing is done.
 */
import express, { type Request, type Response, type Router } from 'express';
import { field, formBody } from '../pages/forms';
import { html } from '../pages/html';
import { pageHeaders } from '../pages/page-headers';
import { returnPath, type PeopleService } from './people.service';
import { plainPage, refusedPage, sendSignInPage, sessionCsrfField, signInCsrfField, type ConsoleArea } from './people-ui';
import { notice } from '../pages/notice';
import type { OutboxStore } from './outbox.store';
import { CONSOLE_OF, isOrgKind, ORG_WORD } from './people.types';
import type { PeopleSessions } from './sessions';

export interface SignInDeps {
  people: PeopleService;
  sessions: PeopleSessions;
  outbox: OutboxStore | null;
}

const areaOf = (v: string): ConsoleArea => (v === 'app' ? 'app' : 'console');
const addressOf = (req: Request) => req.socket.remoteAddress ?? 'unknown';

export function signInRouter(deps: SignInDeps): Router {
  const router = express.Router();
  router.use(['/sign-in', '/sign-out', '/invitations', '/dev/outbox'], pageHeaders());
  mountMagicLinkRoutes(router, deps);
  mountOrganisationChooser(router, deps);
  mountSignOut(router, deps);
  mountInvitationRoutes(router, deps);
  if (deps.outbox) mountOutbox(router, deps.outbox);
  return router;
}

/** The sign-in page, the magic link mailed, and the link redeemed. */
function mountMagicLinkRoutes(router: Router, { people, sessions }: SignInDeps): void {
  router.get('/sign-in', (req, res) => sendSignInPage(req, res, sessions, { area: areaOf(String(req.query.area ?? '')) }));

  router.post('/sign-in/email', formBody, async (req, res) => {
    const area = areaOf(field(req.body, 'area'));
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) return refusedPage(res, area);
    const answer = await people.requestMagicLink(field(req.body, 'email'), addressOf(req), returnPath(field(req.body, 'next')));
    if ('retryAfterSeconds' in answer) {
      res.setHeader('Retry-After', String(answer.retryAfterSeconds));
      return sendSignInPage(req, res, sessions, { area, status: 429, message: notice('bad', `Too many sign-in requests. Wait ${answer.retryAfterSeconds} seconds and try again.`) });
    }
    if ('refused' in answer) return sendSignInPage(req, res, sessions, { area, status: 403, message: notice('warn', answer.refused) });
    res.type('html').send(plainPage('Check your mail', html`<h1>Check your mail</h1>
${notice('ok', 'If that address belongs to a member, a sign-in link is on its way. It works once, within 15 minutes.')}
<p><a href="/sign-in?area=${area}">Back to sign-in</a></p>`, area));
  });

  router.get('/sign-in/link/:token', (req, res) => {
    const token = sessions.signInFormToken(req, res);
    res.type('html').send(plainPage('Sign in', html`<h1>Sign in</h1>
<p class="lead">This link signs you in once, within 15 minutes of being mailed.</p>
<form method="post" action="/sign-in/link" class="stack">${signInCsrfField(token)}<input type="hidden" name="token" value="${String(req.params.token)}">${returnPath(String(req.query.next ?? '')) ? html`<input type="hidden" name="next" value="${returnPath(String(req.query.next ?? ''))}">` : ''}<button type="submit">Continue</button></form>`));
  });

  router.post('/sign-in/link', formBody, async (req, res) => {
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) return refusedPage(res);
    const personId = await people.redeemMagicLink(field(req.body, 'token'));
    if (!personId) {
      return sendSignInPage(req, res, sessions, { area: 'console', status: 401, message: notice('bad', 'This sign-in link has been used, has expired, or is not one we mailed. Ask for a new one below.') });
    }
    const landing = await sessions.signInPerson(req, res, { personId, method: 'magic_link' });
    // Back to the page that asked for the sign-in (a connect link), else the console.
    res.redirect(303, returnPath(field(req.body, 'next')) ?? landing);
  });

}

/** The organisation chooser of a person who belongs to several. */
function mountOrganisationChooser(router: Router, { sessions }: SignInDeps): void {
  router.get('/sign-in/choose', async (req, res) => {
    const session = await sessions.current(req);
    if (!session?.personId) return sendSignInPage(req, res, sessions, { area: 'console', status: 401 });
    const memberships = await sessions.membershipsOf(session.personId);
    res.type('html').send(plainPage('Choose an organisation', html`<h1>Choose an organisation</h1>
<p class="lead">Signed in as ${session.person?.email}. A session opens one organisation at a time; you can switch here later.</p>
${memberships.length === 0 ? notice('warn', 'You are not a member of any organisation any more. Ask an owner to invite you.') : ''}
<ul class="stack" aria-label="Your organisations">${memberships.map((m) => html`<li><form method="post" action="/sign-in/choose" class="row">${sessionCsrfField(session)}
<input type="hidden" name="org_kind" value="${m.organisation.kind}"><input type="hidden" name="org_id" value="${m.organisation.id}">
<button type="submit">Open ${m.name}</button> <span class="muted">${ORG_WORD[m.organisation.kind]} · ${m.role}</span></form></li>`)}</ul>
<form method="post" action="/sign-out">${sessionCsrfField(session)}<button type="submit" class="link">Sign out</button></form>`));
  });

  router.post('/sign-in/choose', formBody, async (req, res) => {
    const session = await sessions.current(req);
    if (!session?.personId) return sendSignInPage(req, res, sessions, { area: 'console', status: 401 });
    if (!sessions.csrfAccepted(session, field(req.body, 'csrf'))) return refusedPage(res);
    const kind = field(req.body, 'org_kind');
    const next = isOrgKind(kind) ? await sessions.choose(req, res, session, { kind, id: field(req.body, 'org_id') }) : null;
    if (!next) return res.status(404).type('html').send(plainPage('Not found', html`<h1>Not a member</h1>${notice('bad', 'You are not a member of that organisation.')}<p><a href="/sign-in/choose">Choose again</a></p>`));
    res.redirect(303, next);
  });

}

/** Signing out of this browser, or of every browser. */
function mountSignOut(router: Router, { sessions }: SignInDeps): void {
  const signOut = (everywhere: boolean) => async (req: Request, res: Response) => {
    const session = await sessions.current(req);
    if (session && !sessions.csrfAccepted(session, field(req.body, 'csrf'))) return refusedPage(res);
    const area: ConsoleArea = session?.organisation ? CONSOLE_OF[session.organisation.kind] : 'console';
    if (session) await (everywhere ? sessions.signOutEverywhere(res, session) : sessions.signOut(res, session));
    res.redirect(303, area === 'app' ? '/app' : '/console');
  };
  router.post('/sign-out', formBody, signOut(false));
  router.post('/sign-out/everywhere', formBody, signOut(true));

}

/** Accepting an invitation: the person is signed in to its organisation. */
function mountInvitationRoutes(router: Router, { people, sessions }: SignInDeps): void {
  router.get('/invitations/:token', async (req, res) => {
    const inv = await people.openInvitation(String(req.params.token));
    if (!inv) return res.status(404).type('html').send(plainPage('Invitation', html`<h1>Invitation</h1>${notice('bad', 'This invitation has been used, has expired (after 7 days), or is not one we sent. Ask the owner who invited you for a new one.')}`));
    const area: ConsoleArea = CONSOLE_OF[inv.org.kind];
    const token = sessions.signInFormToken(req, res);
    res.type('html').send(plainPage('Invitation', html`<h1>Join ${inv.orgName}</h1>
<p class="lead">You are invited as <strong>${inv.role}</strong>, as ${inv.email}.</p>
<form method="post" action="/invitations/accept" class="stack card">${signInCsrfField(token)}<input type="hidden" name="token" value="${String(req.params.token)}">
<div><label for="name">Your name</label><input id="name" name="name" autocomplete="name" maxlength="200"></div>
<button type="submit">Accept and sign in</button></form>`, area));
  });

  router.post('/invitations/accept', formBody, async (req, res) => {
    if (!sessions.signInFormAccepted(req, field(req.body, 'csrf'))) return refusedPage(res);
    const accepted = await people.acceptInvitation(field(req.body, 'token'), field(req.body, 'name'));
    if (!accepted) return res.status(404).type('html').send(plainPage('Invitation', html`<h1>Invitation</h1>${notice('bad', 'This invitation has been used, has expired, or is not one we sent.')}`));
    res.redirect(303, await sessions.signInPerson(req, res, { personId: accepted.person.id, organisation: accepted.org, method: 'invitation' }));
  });

}

/** The local outbox, only with the sandbox on. */
function mountOutbox(router: Router, outbox: OutboxStore): void {
  router.get('/dev/outbox', async (_req, res) => {
    const mails = await outbox.latest(50);
    res.type('html').send(plainPage('Outbox', html`<h1>Local outbox</h1>
<p class="lead">The sandbox keeps mail here because SMTP_URL is unset: sign-in links and invitations, newest first.</p>
${mails.length === 0 ? notice('info', 'No mail yet. Ask for a sign-in link on /console or /app.') : ''}
${mails.map((m) => html`<article class="card"><h2>${m.subject}</h2><p class="muted">To ${m.to} · ${m.createdAt.toISOString()}</p><pre>${m.text}</pre>
${[...m.text.matchAll(/https?:\/\/\S+/g)].map((u) => html`<p><a href="${u[0]}">Open: ${m.subject} (${m.to})</a></p>`)}</article>`)}`));
  });
}
