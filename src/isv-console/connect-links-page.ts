/**
 * Connect links (docs/architecture.md, Connect sessions and console): create one for an MSP through the
 * operation `POST /connect-sessions` runs (`create_connect_session`), see its link once with a Copy
 * button, mail it to the MSP contact the person typed in the same form, list the ISV's links with their
 * state, cancel an open one (`cancel_connect_session`, the REST `DELETE /connect-sessions/{id}`).
 *
 * The link's token is kept only as a hash, so the link exists only in the creation's answer: this page
 * holds it in memory for the console session that created it, for as long as the creation's form is
 * remembered (src/pages/once-per-form.ts), so that a reload shows it again and "Mail it" can send it.
 * A mail goes only to the address typed in the creating form, only from that session, once.
 * Owners and developers create, mail and cancel; a viewer reads the list.
 */
import { randomUUID } from 'node:crypto';
import type { Response, Router } from 'express';
import { CONNECTION_KINDS, type ConnectionKind } from '../../entities';
import { grantKeysFor } from '../access/access.service';
import { GRANT_WORDS, ON_BY_DEFAULT } from '../access/grant-words';
import { isGrantKey } from '../access/caller';
import { ago, refusal } from '../console/ui';
import { notice } from '../pages/notice';
import { COPY_SCRIPT, copyButton } from '../pages/copy-button';
import { field, fieldList, formBody, type FormFields } from '../pages/forms';
import { html, type SafeHtml } from '../pages/html';
import { OncePerForm } from '../pages/once-per-form';
import { normalEmail, plausibleEmail } from '../people/people.types';
import { allSessions, mayChange, runAsIsv, utc } from './msps-page';
import type { IsvConsolePage, IsvConsoleShell, SignedIsv } from './shell';

const PATH = '/app/connect-links';
const TITLE = 'Connect links';

const KIND_WORDS: Record<ConnectionKind, string> = { psa: 'PSA', rmm: 'RMM', distributor: 'distributor' };
const EXPIRY_CHOICES = [{ minutes: 1440, label: '1 day' }, { minutes: 4320, label: '3 days' }, { minutes: 10_080, label: '7 days' }] as const;
const STATE_WORDS: Record<string, { label: string; badge: string }> = {
  pending: { label: 'open', badge: 'info' }, completed: { label: 'completed', badge: 'ok' },
  expired: { label: 'expired', badge: 'warn' }, cancelled: { label: 'cancelled', badge: 'warn' },
};

interface SessionItem {
  id: string; state: string; tenant_id: string | null; msp_name: string | null; kinds: string[]; requested_grants: string[];
  created_at: string; expires_at: string; completed_at: string | null;
}
interface TenantItem { id: string; name: string }

/** A link just created, as this page holds it for the session that created it. */
interface Created {
  id: string; connectUrl: string; expiresAt: string;
  mspName: string; contactEmail: string | null; kinds: string[]; grants: string[];
}

/** What the person typed, to show the form again after a refusal. */
interface FormValues {
  tenantId: string; mspName: string; contactEmail: string; kinds: string[]; grants: Record<string, string[]>; redirectUrl: string; expires: number;
}

const FRESH: FormValues = { tenantId: '', mspName: '', contactEmail: '', kinds: ['psa'], grants: {}, redirectUrl: '', expires: 1440 };

/** Renders the grants a link asks for, by kind, ticked as given (the interface's defaults on a fresh form). */
function grantBoxes(kind: ConnectionKind, v: FormValues): SafeHtml {
  const given = v.grants[kind];
  return html`${grantKeysFor(kind).map((key) => {
    const id = `grant-${kind}-${key.replace(/\./g, '-')}`;
    const on = given ? given.includes(key) : ON_BY_DEFAULT.has(key);
    return html`<label class="check" for="${id}"><input type="checkbox" id="${id}" name="grant_${kind}" value="${key}"${on ? html` checked` : ''}>
<span><strong>${GRANT_WORDS[key].title}</strong><span class="hint">${GRANT_WORDS[key].words}</span><code class="key">${key}</code></span></label>`;
  })}`;
}

function createForm(who: SignedIsv, shell: IsvConsoleShell, v: FormValues, tenant: TenantItem | null): SafeHtml {
  return html`<form method="post" action="${PATH}" class="card stack" aria-labelledby="create-heading">
<h2 id="create-heading">${tenant ? html`Ask ${tenant.name} for more` : 'Create a connect link'}</h2>
${shell.csrfField(who)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
${tenant
    ? html`<input type="hidden" name="tenant_id" value="${tenant.id}"><p>The link adds or repairs systems of <strong>${tenant.name}</strong>; an owner or admin of it signs in on the link to decide. <a href="${PATH}">A link for a new MSP instead</a></p>`
    : html`<div><label for="msp_name">MSP name</label><p class="hint" id="msp_name_hint">The MSP's company name; connecting creates it as a new MSP of yours.</p>
<input type="text" id="msp_name" name="msp_name" maxlength="200" required value="${v.mspName}" aria-describedby="msp_name_hint"></div>`}
<div><label for="contact_email">MSP contact email</label><p class="hint" id="contact_email_hint">Optional: the person at the MSP you may mail the link to from the next page.</p>
<input type="email" id="contact_email" name="contact_email" maxlength="254" autocomplete="off" value="${v.contactEmail}" aria-describedby="contact_email_hint"></div>
${CONNECTION_KINDS.map((kind) => html`<fieldset><legend>${KIND_WORDS[kind].charAt(0).toUpperCase() + KIND_WORDS[kind].slice(1)}</legend>
<label class="check" for="kind-${kind}"><input type="checkbox" id="kind-${kind}" name="kind" value="${kind}"${v.kinds.includes(kind) ? html` checked` : ''}>
<span><strong>Ask them to connect their ${KIND_WORDS[kind]}</strong></span></label>
<p class="hint">The grants you ask for on it (the MSP sees each in these words and may untick any):</p>
${grantBoxes(kind, v)}</fieldset>`)}
<div><label for="redirect_url">Redirect URL</label><p class="hint" id="redirect_url_hint">Optional, https: where the page sends the MSP when done, with <code>connect_session_id</code> and <code>state=completed</code> added.</p>
<input type="url" id="redirect_url" name="redirect_url" maxlength="2048" value="${v.redirectUrl}" aria-describedby="redirect_url_hint"></div>
<div><label for="expires">The link works for</label>
<select id="expires" name="expires">${EXPIRY_CHOICES.map((c) => html`<option value="${c.minutes}"${c.minutes === v.expires ? html` selected` : ''}>${c.label}</option>`)}</select></div>
<button type="submit">Create the link</button></form>`;
}

function stateCell(s: SessionItem, tenants: Map<string, string>): SafeHtml {
  const w = STATE_WORDS[s.state] ?? { label: s.state, badge: 'info' };
  const badge = html`<span class="badge ${w.badge}">${w.label}</span>`;
  if (s.state !== 'completed' || !s.tenant_id) return badge;
  const name = tenants.get(s.tenant_id);
  return html`${badge} ${name ? html`<a href="/app/msps/${s.tenant_id}">${name}</a>` : html`<span class="muted">(no grant given: tenant ${s.tenant_id})</span>`}`;
}

function listTable(who: SignedIsv, shell: IsvConsoleShell, sessions: SessionItem[], tenants: Map<string, string>): SafeHtml {
  if (sessions.length === 0) return html`<p class="muted">No connect links yet.</p>`;
  const canChange = mayChange(who);
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="Your connect links"><table><caption class="visually-hidden">Your connect links, newest first</caption>
<thead><tr><th scope="col">MSP</th><th scope="col">Systems</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Expires</th>${canChange ? html`<th scope="col">Action</th>` : ''}</tr></thead>
<tbody>${sessions.map((s) => {
    const name = s.msp_name ?? (s.tenant_id ? tenants.get(s.tenant_id) ?? 'an MSP of yours' : 'an MSP');
    return html`<tr id="link-${s.id}"><th scope="row">${name}</th><td>${s.kinds.map((k) => KIND_WORDS[k as ConnectionKind] ?? k).join(', ')}</td><td>${stateCell(s, tenants)}</td>
<td><time datetime="${s.created_at}">${ago(s.created_at)}</time></td><td><time datetime="${s.expires_at}">${utc(s.expires_at)}</time></td>
${canChange ? html`<td>${s.state === 'pending'
      ? html`<form method="post" action="${PATH}/${s.id}/cancel">${shell.csrfField(who)}<button type="submit" class="danger" aria-label="Cancel the link for ${name}">Cancel</button></form>`
      : ''}</td>` : ''}</tr>`;
  })}</tbody></table></div>`;
}

async function visibleTenants(shell: IsvConsoleShell, who: SignedIsv): Promise<Map<string, string>> {
  const list = await runAsIsv<{ tenants: TenantItem[] }>(shell, who, 'list_tenants', { query: { limit: '500' } });
  return new Map(list.tenants.map((t) => [t.id, t.name]));
}

/** The mail to the MSP contact: who asks, for what, the link and until when. */
function mailOf(who: SignedIsv, c: Created): { subject: string; text: string } {
  const person = who.session.person!;
  const asker = person.name ? `${person.name} (${person.email})` : person.email;
  const systems = c.kinds.map((k) => KIND_WORDS[k as ConnectionKind] ?? k).join(', ');
  const grants = c.grants.filter(isGrantKey).map((k) => `- ${GRANT_WORDS[k].title}: ${GRANT_WORDS[k].words}`);
  return {
    subject: `${who.name} asks ${c.mspName} to connect its systems`,
    text: [
      'Hello,',
      '',
      `${asker} of ${who.name} asks ${c.mspName} to connect its ${systems} to ${who.name}.`,
      '',
      ...(grants.length ? [`${who.name} asks for:`, ...grants, ''] : [`${who.name} asks for no grant yet: you choose on the page.`, '']),
      `Open this link to see what is asked, choose what you allow and connect. It works once, until ${utc(c.expiresAt)}:`,
      c.connectUrl,
      '',
      'Nothing is connected until you press Connect on that page, and you may untick any of the grants above.',
      'If you did not expect this mail, ignore it.',
    ].join('\n'),
  };
}

function createdView(who: SignedIsv, shell: IsvConsoleShell, c: Created, message: SafeHtml): SafeHtml {
  return html`<p><a href="${PATH}">All connect links</a></p>
<h1>Your connect link</h1>
${message}
<p>Send this link to ${c.mspName}. It works once, until <time datetime="${c.expiresAt}">${utc(c.expiresAt)}</time>. It is shown only here, now: copy it or mail it before you leave this page.</p>
<p><code class="secret" id="connect-url">${c.connectUrl}</code></p>
<p>${copyButton('connect-url', 'Copy the link')}</p>
${c.contactEmail
    ? html`<form method="post" action="${PATH}/${c.id}/mail" class="card stack">${shell.csrfField(who)}
<p>We mail ${c.contactEmail} the link, saying that ${who.session.person!.email} of ${who.name} asks ${c.mspName} to connect its ${c.kinds.map((k) => KIND_WORDS[k as ConnectionKind] ?? k).join(', ')}, and which grants you ask for.</p>
<button type="submit">Mail it to ${c.contactEmail}</button></form>`
    : html`<p class="muted">No MSP contact email was given, so there is no one to mail it to from here.</p>`}`;
}

export const connectLinksPage: IsvConsolePage = {
  nav: { href: PATH, label: TITLE },
  register(router, shell) {
    const kit = connectLinksPageKit(shell);
    const held = heldLinks();
    mountLinkList(router, kit);
    mountLinkCreation(router, kit, held);
    mountLinkMailing(router, kit, held);
    mountLinkCancelling(router, kit);
  },
};

/** The links this process created, by console session and session id, while their form is remembered. */
function heldLinks() {
  const held = new Map<string, { created: Created; expires: number }>();
  const HOLD_MS = 10 * 60_000;
  const hold = (sessionId: string, c: Created) => {
    const now = Date.now();
    for (const [k, e] of held) if (e.expires <= now) held.delete(k);
    if (held.size >= 1000) held.delete(held.keys().next().value!);
    held.set(`${sessionId}\u0000${c.id}`, { created: c, expires: now + HOLD_MS });
  };
  const heldFor = (sessionId: string, id: string): Created | null => {
    const e = held.get(`${sessionId}\u0000${id}`);
    return e && e.expires > Date.now() ? e.created : null;
  };
  return { hold, heldFor };
}

type ConnectLinksPageKit = ReturnType<typeof connectLinksPageKit>;

/** What the page's routes share: how a page is sent, and the list page with its create form. */
function connectLinksPageKit(shell: IsvConsoleShell) {
  const send = (res: Response, who: SignedIsv, title: string, main: SafeHtml, status = 200, scripts: string[] = []) =>
    res.status(status).type('html').send(shell.page(who, PATH, title, main, scripts));

  async function listPage(who: SignedIsv, values: FormValues, message: SafeHtml | string = ''): Promise<SafeHtml> {
    const [sessions, tenants] = await Promise.all([allSessions<SessionItem>(shell, who), visibleTenants(shell, who)]);
    const tenant = values.tenantId && tenants.has(values.tenantId) ? { id: values.tenantId, name: tenants.get(values.tenantId)! } : null;
    return html`<h1>${TITLE}</h1>
<p class="lead">A connect link lets an MSP connect its systems and give you grants, on a page of ours: they paste their vendor keys there, never to you.</p>
${message}
${mayChange(who) ? createForm(who, shell, values, tenant) : notice('info', `You are a ${who.session.role ?? 'member'} here: owners and developers create and cancel connect links.`)}
<h2>Your links</h2>
${listTable(who, shell, [...sessions].reverse(), tenants)}`;
  }

  return { shell, send, listPage };
}

/** The list of links, with the create form. */
function mountLinkList(router: Router, { shell, send, listPage }: ConnectLinksPageKit): void {
  router.get(PATH, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    const tenantId = typeof req.query.tenant_id === 'string' ? req.query.tenant_id : '';
    const done = req.query.done === 'cancelled' ? notice('ok', 'Cancelled: that link no longer works.') : '';
    send(res, who, TITLE, await listPage(who, { ...FRESH, tenantId }, done));
  });
}

/** Creating a link (once per form: a reload shows the link the first press made). */
function mountLinkCreation(router: Router, { shell, send, listPage }: ConnectLinksPageKit, { hold }: ReturnType<typeof heldLinks>): void {
  const creations = new OncePerForm<Created>();
  router.post(PATH, formBody, async (req, res) => {
    const who = await shell.signedForm(req, res);
    if (!who) return;
    if (!mayChange(who)) return send(res, who, TITLE, html`<h1>${TITLE}</h1>${notice('bad', 'Only owners and developers create connect links. Nothing was created.')}`, 403);
    const form = req.body as FormFields;
    const values: FormValues = {
      tenantId: field(form, 'tenant_id'), mspName: field(form, 'msp_name'), contactEmail: field(form, 'contact_email'),
      kinds: fieldList(form, 'kind').filter((k) => (CONNECTION_KINDS as readonly string[]).includes(k)),
      grants: Object.fromEntries(CONNECTION_KINDS.map((k) => [k, fieldList(form, `grant_${k}`)])),
      redirectUrl: field(form, 'redirect_url'),
      expires: EXPIRY_CHOICES.find((c) => String(c.minutes) === field(form, 'expires'))?.minutes ?? 1440,
    };
    const again = async (message: SafeHtml | string, status = 422) => send(res, who, TITLE, await listPage(who, values, notice('bad', message)), status);
    const contactEmail = values.contactEmail ? normalEmail(values.contactEmail) : null;
    if (contactEmail && !plausibleEmail(contactEmail)) return again('Nothing was created: the MSP contact email is not an email address.');
    if (values.kinds.length === 0) return again('Nothing was created: tick at least one system to connect.');
    const idempotencyKey = field(form, 'idempotency_key');
    if (!idempotencyKey) return again('Nothing was created: this form is out of date. Open the page again.');
    // Only the grants of the systems asked for (each kind's grants sit under it on the form).
    const grants = [...new Set(values.kinds.flatMap((k) => values.grants[k] ?? []))];
    try {
      const { value: c, repeated } = await creations.run(who.session.id, idempotencyKey, async () => {
        const made = await runAsIsv<{ id: string; connect_url: string; expires_at: string }>(shell, who, 'create_connect_session', {
          body: {
            ...(values.tenantId ? { tenant_id: values.tenantId } : { msp_name: values.mspName }),
            kinds: values.kinds, requested_grants: grants, expires_in_minutes: values.expires,
            ...(values.redirectUrl ? { redirect_url: values.redirectUrl } : {}),
          },
        });
        const tenants = values.tenantId ? await visibleTenants(shell, who) : null;
        return {
          id: made.id, connectUrl: made.connect_url, expiresAt: made.expires_at,
          mspName: values.tenantId ? tenants?.get(values.tenantId) ?? 'the MSP' : values.mspName,
          contactEmail, kinds: values.kinds, grants,
        };
      });
      hold(who.session.id, c);
      send(res, who, 'Your connect link', createdView(who, shell, c, repeated
        ? notice('info', 'Already created: this form was sent before, and this is the link it made then. No second link was made.')
        : notice('ok', 'Created. The link is open until the MSP connects, it expires, or you cancel it.')), 200, [COPY_SCRIPT]);
    } catch (err) {
      const r = refusal(err);
      if (!r) throw err;
      await again(html`Nothing was created. ${r.message}`, r.status);
    }
  });
}

/** Mailing a link just created to the MSP's contact (once). */
function mountLinkMailing(router: Router, { shell, send }: ConnectLinksPageKit, { heldFor }: ReturnType<typeof heldLinks>): void {
  const mails = new OncePerForm<void>();
  router.post(`${PATH}/:id/mail`, formBody, async (req, res) => {
    const who = await shell.signedForm(req, res);
    if (!who) return;
    if (!mayChange(who)) return send(res, who, TITLE, html`<h1>${TITLE}</h1>${notice('bad', 'Only owners and developers mail connect links. Nothing was sent.')}`, 403);
    const c = heldFor(who.session.id, String(req.params.id));
    if (!c || !c.contactEmail) {
      return send(res, who, TITLE, html`<h1>${TITLE}</h1>${notice('warn', 'Nothing was sent: a link is shown, and can be mailed, only for a few minutes after it is created, in the browser that created it. Cancel it and create a new one if it was not sent.')}<p><a href="${PATH}">All connect links</a></p>`, 410);
    }
    let repeated: boolean;
    try {
      ({ repeated } = await mails.run(who.session.id, c.id, () => shell.services.mailer.send({ to: c.contactEmail!, ...mailOf(who, c) })));
    } catch (err) {
      shell.services.logger.warn({ err: (err as Error).message, mail_to: c.contactEmail }, 'a connect link could not be mailed');
      return send(res, who, 'Your connect link', createdView(who, shell, c, notice('bad', 'The mail could not be sent; nothing was mailed. Copy the link instead, or try again.')), 502, [COPY_SCRIPT]);
    }
    send(res, who, 'Your connect link', createdView(who, shell, c, repeated
      ? notice('info', html`Already mailed to ${c.contactEmail}: it was not sent again.`)
      : notice('ok', html`Mailed to ${c.contactEmail}.`)), 200, [COPY_SCRIPT]);
  });
}

/** Cancelling a link: it no longer works. */
function mountLinkCancelling(router: Router, { shell, send, listPage }: ConnectLinksPageKit): void {
  router.post(`${PATH}/:id/cancel`, formBody, async (req, res) => {
    const who = await shell.signedForm(req, res);
    if (!who) return;
    if (!mayChange(who)) return send(res, who, TITLE, html`<h1>${TITLE}</h1>${notice('bad', 'Only owners and developers cancel connect links. Nothing changed.')}`, 403);
    try {
      await runAsIsv(shell, who, 'cancel_connect_session', { path: { session_id: String(req.params.id) } });
      res.redirect(303, `${PATH}?done=cancelled`);
    } catch (err) {
      const r = refusal(err);
      if (!r) throw err;
      send(res, who, TITLE, await listPage(who, FRESH, notice('bad', html`Nothing changed. ${r.message}`)), r.status);
    }
  });
}
