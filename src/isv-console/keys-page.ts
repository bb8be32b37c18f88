/**
 * API keys (design: the ISV's console and its API twins, "Keys"; docs/architecture.md, People): the ISV's
 * keys (name, prefix, who minted them, when, last use, state: active, expiring at a time, revoked); for an
 * owner, create (the key shown once with a Copy button), rotate with overlap (a new key now; the old one
 * works for the chosen window, at most 7 days, then is revoked) and revoke now. Everyone of the ISV sees the
 * list; the rules are IsvKeys' (src/tenants/isv-keys.service.ts), which audits every change with the
 * person as actor. A create or rotate form runs once per session and form (src/pages/once-per-form.ts):
 * a reload or a second press shows the key the first press minted and never mints another.
 */
import { randomUUID } from 'node:crypto';
import type { Request, Response, Router } from 'express';
import { actorLabel, type AuditActor } from '../access/caller';
import { refusal } from '../console/ui';
import { notice } from '../pages/notice';
import { ServiceError } from '../errors/service-error';
import { COPY_SCRIPT, copyButton } from '../pages/copy-button';
import { field, formBody } from '../pages/forms';
import { html, type SafeHtml } from '../pages/html';
import { OncePerForm } from '../pages/once-per-form';
import { managesKeys, OVERLAP_WINDOWS, type IsvKeyView, type KeyDecider, type MintedKey } from '../tenants/isv-keys.service';
import type { IsvConsolePage, IsvConsoleShell, SignedIsv } from './shell';

const PATH = '/app/keys';
const TITLE = 'API keys';

/** A time as people read it here: UTC, to the minute, with the exact value in `datetime`. */
function at(d: Date): SafeHtml {
  return html`<time datetime="${d.toISOString()}">${d.toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`;
}

function stateCell(k: IsvKeyView): SafeHtml {
  if (k.status.state === 'active') return html`<span class="badge ok">active</span>`;
  if (k.status.state === 'expiring') return html`<span class="badge warn">expiring</span> at ${at(k.status.at)}`;
  return html`<span class="badge bad">revoked</span> ${at(k.status.at)}`;
}

const creatorOf = (k: IsvKeyView): string => (k.createdBy?.kind === 'person' ? k.createdBy.email : 'operator');

const HISTORY_WORDS: Record<string, string> = { 'api_key.create': 'created', 'api_key.rotate': 'created', 'api_key.revoke': 'revoked' };
const OVERLAP_WORDS: Record<string, string> = Object.fromEntries(OVERLAP_WINDOWS.map((w) => [w.value, w.value === 'none' ? 'no overlap' : `an overlap of ${w.label}`]));

function actorWords(detail: Record<string, unknown>): string {
  return actorLabel(detail.actor as Partial<AuditActor> | undefined);
}

function decider(shell: IsvConsoleShell, who: SignedIsv): KeyDecider {
  const p = who.session.person;
  return { isvId: who.org.id, role: who.session.role, person: p ? { id: p.id, email: p.email } : null, audit: shell.services.peopleSessions.detailOf(who.session) };
}

async function listView(shell: IsvConsoleShell, who: SignedIsv, message?: SafeHtml): Promise<SafeHtml> {
  const keys = shell.services.isvKeys;
  const [rows, history] = await Promise.all([keys.list(who.org.id), keys.history(who.org.id, 10)]);
  const owner = managesKeys(who.session.role);
  return html`<h1>${TITLE}</h1>${message ?? ''}
<p class="lead">Your programs call the API with these keys, in the <code>X-API-Key</code> header. A key is shown once, when it is made; only its first characters are kept in sight.</p>
${owner ? html`<section class="card" aria-labelledby="create-heading"><h2 id="create-heading">Create a key</h2>
<form method="post" action="${PATH}/create" class="stack">${shell.csrfField(who)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<div><label for="key_name">Name</label><p class="hint" id="key_name_hint">What uses it: production, staging, a script.</p>
<input id="key_name" name="name" type="text" required maxlength="200" autocomplete="off" aria-describedby="key_name_hint"></div>
<button type="submit">Create the key</button></form></section>`
    : html`<p>You are ${who.session.role ?? 'signed in without a role'} here: an owner creates, rotates and revokes keys.</p>`}
<h2>Keys</h2>
${rows.length === 0 ? html`<p>No keys yet.</p>` : html`<div class="table-wrap" tabindex="0" role="region" aria-label="API keys"><table><caption class="visually-hidden">API keys of ${who.name}</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Created by</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th>${owner ? html`<th scope="col">Actions</th>` : ''}</tr></thead><tbody>
${rows.map((k, i) => html`<tr><td>${k.name || html`<span class="muted">unnamed</span>`}</td><td><code id="prefix-${i}">${k.prefix}…</code></td><td>${creatorOf(k)}</td><td>${at(k.createdAt)}</td>
<td>${k.lastUsedAt ? at(k.lastUsedAt) : 'never'}</td><td>${stateCell(k)}</td>
${owner ? html`<td>${k.status.state === 'active' ? html`<a href="${PATH}/${k.id}/rotate" id="rotate-${i}" aria-labelledby="rotate-${i} prefix-${i}">Rotate</a> ` : ''}${k.status.state !== 'revoked' ? html`<a href="${PATH}/${k.id}/revoke" id="revoke-${i}" aria-labelledby="revoke-${i} prefix-${i}">Revoke</a>` : ''}</td>` : ''}</tr>`)}
</tbody></table></div>`}
${history.length ? html`<h2>Recent changes</h2><ul>${history.map((h) => html`<li>${at(h.at)}: <code>${h.subject ?? ''}…</code> ${HISTORY_WORDS[h.action] ?? h.action} by ${actorWords(h.detail)}${h.action === 'api_key.rotate' && typeof h.detail.replaced === 'string' ? html` to replace <code>${h.detail.replaced}…</code>, with ${OVERLAP_WORDS[String(h.detail.overlap)] ?? 'an overlap'}` : ''}</li>`)}</ul>` : ''}`;
}

/** The page of a key just minted: the key once, with its Copy button. */
function mintedView(m: MintedKey, repeated: boolean, extra: SafeHtml): SafeHtml {
  return html`<h1>Your new key</h1>
${repeated ? notice('info', 'Already done: this form was sent before, and this is the key it made then. No other key was made.') : notice('ok', html`Key <code>${m.view.prefix}…</code> (${m.view.name}) is ready.`)}
${extra}
<p>Copy it now: it is not shown again once you leave this page.</p><p><code class="secret" id="new-key">${m.key}</code></p>
<p>${copyButton('new-key', 'Copy the key')}</p>
<p><a href="${PATH}">Back to the keys</a></p>`;
}

export const keysPage: IsvConsolePage = {
  nav: { href: PATH, label: TITLE },
  register(router, shell) {
    const kit = keysPageKit(shell);
    mountKeyList(router, kit);
    mountKeyRotation(router, kit);
    mountKeyRevocation(router, kit);
  },
};

type KeysPageKit = ReturnType<typeof keysPageKit>;

/** What the page's routes share: how a page is sent, a refusal told, and a form post admitted. */
function keysPageKit(shell: IsvConsoleShell) {
  const keys = shell.services.isvKeys;
  const send = (res: Response, who: SignedIsv, main: SafeHtml, status = 200, scripts: string[] = []) =>
    res.status(status).type('html').send(shell.page(who, PATH, TITLE, main, scripts));

  /** A refusal of the rules, told on the list page (or on its own for a page that has no list). */
  const refused = async (res: Response, who: SignedIsv, err: unknown) => {
    const r = refusal(err);
    if (!r || !(err instanceof ServiceError)) throw err;
    send(res, who, await listView(shell, who, notice('bad', r.message)), r.status);
  };

  /** The signed-in owner of a form post whose CSRF token is this session's; null with the answer sent. */
  const signedPost = async (req: Request, res: Response): Promise<SignedIsv | null> => {
    const who = await shell.signedForm(req, res);
    if (!who) return null;
    return who;
  };

  const outOfDate = (res: Response, who: SignedIsv) =>
    send(res, who, html`<h1>${TITLE}</h1>${notice('warn', 'Nothing changed: this form is out of date. Open the keys page again.')}<p><a href="${PATH}">Back to the keys</a></p>`, 422);

  return { shell, keys, send, refused, signedPost, outOfDate };
}

/** The list of keys, and creating one (the key shown once). */
function mountKeyList(router: Router, { shell, keys, send, refused, signedPost, outOfDate }: KeysPageKit): void {
  const created = new OncePerForm<MintedKey>();
  router.get(PATH, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    send(res, who, await listView(shell, who));
  });

  router.post(`${PATH}/create`, formBody, async (req, res) => {
    const who = await signedPost(req, res);
    if (!who) return;
    const formKey = field(req.body, 'idempotency_key');
    if (!formKey) return outOfDate(res, who);
    try {
      const name = field(req.body, 'name');
      const { value, repeated } = await created.run(who.session.id, formKey, () => keys.create(decider(shell, who), name));
      send(res, who, mintedView(value, repeated, html``), 200, [COPY_SCRIPT]);
    } catch (err) {
      await refused(res, who, err);
    }
  });
}

/** Rotating a key: the new key shown once, the old one working for the overlap chosen. */
function mountKeyRotation(router: Router, { shell, keys, send, refused, signedPost, outOfDate }: KeysPageKit): void {
  const rotated = new OncePerForm<MintedKey & { old: IsvKeyView }>();
  router.get(`${PATH}/:id/rotate`, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    const key = (await keys.list(who.org.id)).find((k) => k.id === req.params.id);
    if (!managesKeys(who.session.role)) return refused(res, who, new ServiceError('role_required', 'Only an owner of the ISV creates, rotates and revokes its keys.', { details: { role: 'owner' } }));
    if (!key || key.status.state !== 'active') return refused(res, who, key ? new ServiceError('request_invalid', `Key ${key.prefix}… is not active: only an active key is rotated.`) : ServiceError.notFound('Key'));
    send(res, who, html`<h1>Rotate ${key.name || 'a key'} (<code>${key.prefix}…</code>)</h1>
<p class="lead">Rotating makes a new key, shown to you once. The old key keeps working for the overlap you choose, so that every program can move to the new one, then is revoked. Choose no overlap when the old key may have leaked.</p>
<form method="post" action="${PATH}/${key.id}/rotate" class="card stack">${shell.csrfField(who)}<input type="hidden" name="idempotency_key" value="${randomUUID()}">
<div><label for="overlap">Keep the old key working for</label>
<select id="overlap" name="overlap">${OVERLAP_WINDOWS.map((w) => html`<option value="${w.value}"${w.value === '24h' ? html` selected` : ''}>${w.label}</option>`)}</select></div>
<button type="submit">Rotate the key</button></form>
<p><a href="${PATH}">Back to the keys</a></p>`);
  });

  router.post(`${PATH}/:id/rotate`, formBody, async (req, res) => {
    const who = await signedPost(req, res);
    if (!who) return;
    const formKey = field(req.body, 'idempotency_key');
    if (!formKey) return outOfDate(res, who);
    try {
      const keyId = String(req.params.id);
      const overlap = field(req.body, 'overlap');
      const { value, repeated } = await rotated.run(who.session.id, `${keyId}\u0000${formKey}`, () => keys.rotate(decider(shell, who), keyId, overlap));
      const old = value.old;
      const oldWords = old.status.state === 'expiring'
        ? html`The old key <code>${old.prefix}…</code> keeps working until ${at(old.status.at)}, then is revoked. Revoke it sooner from the keys page once every program uses the new one.`
        : html`The old key <code>${old.prefix}…</code> stopped working now.`;
      send(res, who, mintedView(value, repeated, html`<p>${oldWords}</p>`), 200, [COPY_SCRIPT]);
    } catch (err) {
      await refused(res, who, err);
    }
  });
}

/** Revoking a key: it stops working now. */
function mountKeyRevocation(router: Router, { shell, keys, send, refused, signedPost }: KeysPageKit): void {
  router.get(`${PATH}/:id/revoke`, async (req, res) => {
    const who = await shell.signed(req, res);
    if (!who) return;
    const key = (await keys.list(who.org.id)).find((k) => k.id === req.params.id);
    if (!managesKeys(who.session.role)) return refused(res, who, new ServiceError('role_required', 'Only an owner of the ISV creates, rotates and revokes its keys.', { details: { role: 'owner' } }));
    if (!key || key.status.state === 'revoked') return refused(res, who, key ? new ServiceError('request_invalid', `Key ${key.prefix}… is revoked already.`) : ServiceError.notFound('Key'));
    send(res, who, html`<h1>Revoke ${key.name || 'a key'} (<code>${key.prefix}…</code>)</h1>
<p class="lead">Every program that uses this key gets <code>401 unauthenticated</code> from now on. This cannot be undone.</p>
<form method="post" action="${PATH}/${key.id}/revoke" class="card stack">${shell.csrfField(who)}
<button type="submit" class="danger">Revoke now</button></form>
<p><a href="${PATH}">Back to the keys</a></p>`);
  });

  router.post(`${PATH}/:id/revoke`, formBody, async (req, res) => {
    const who = await signedPost(req, res);
    if (!who) return;
    try {
      const key = await keys.revoke(decider(shell, who), String(req.params.id));
      send(res, who, await listView(shell, who, notice('ok', html`Key <code>${key.prefix}…</code> (${key.name}) is revoked: it stopped working now.`)));
    } catch (err) {
      await refused(res, who, err);
    }
  });
}
