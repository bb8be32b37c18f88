/**
 * The connect page's markup (docs/architecture.md, Pages): built with the page kit's escaping template
 * only, from the session, the connectors' declarations and what the tests found. Nothing here decides a
 * rule: which grants are offered, ticked or ruled out comes from src/access and the service.
 */
import type { ConnectSession, ConnectionKind } from '../../entities';
import { grantKeysFor } from '../access/access.service';
import type { GrantKey } from '../access/caller';
import { capabilitiesOf, connectorTitle } from '../connectors/registry';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import { blockedGrants, type DraftInfo } from './connect-sessions.service';
import { GRANT_WORDS, ON_BY_DEFAULT } from '../access/grant-words';

const KIND_WORDS: Record<string, { title: string; what: string }> = {
  psa: { title: 'Your PSA', what: 'tickets, companies, agreements and projects' },
  rmm: { title: 'Your RMM', what: 'devices, software and alerts' },
  distributor: { title: 'Your distributor', what: 'companies, products and subscriptions' },
};

export interface ConnectPageModel {
  session: ConnectSession;
  token: string;
  isvName: string;
  tenantName: string | null;
  connectors: Record<string, string[]>;
  info: Record<string, DraftInfo>;
  /** A notice at the top (the last step's result). */
  notice?: { tone: 'ok' | 'warn' | 'bad'; text: string } | null;
  /** The form to show again after a refused Test: its address and the vendor's answer, never a credential. */
  retry?: { kind: string; connector: string; baseUrl: string; error: string } | null;
  /** The sandbox's development values (public), when this server runs the simulators. */
  sandbox?: { origin: string } | null;
  /** Fill a connector's form with the sandbox's development values. */
  fill?: string | null;
  /** The callback URL per OAuth connector. */
  callbackUrl: (connector: string) => string;
}

const base = (token: string) => `/connect/${token}`;

function permissionLine(kind: ConnectionKind, p: DraftInfo['permissions'][number]): SafeHtml {
  const affected = [...blockedGrants(kind, { permissions: [p] } as DraftInfo).keys()].map((k) => GRANT_WORDS[k].title);
  if (p.ok === true) return html`<li><span class="badge ok">Has it</span> ${p.vendorTerms}</li>`;
  if (p.ok === null) return html`<li><span class="badge info">Not checked</span> ${p.vendorTerms}<span class="hint"> ${p.detail ?? ''}</span></li>`;
  return html`<li class="missing-permission"><span class="badge bad">Missing</span> <strong>${p.vendorTerms}</strong>
<div class="hint">${p.detail ? html`${p.detail}. ` : ''}Without it: ${affected.length ? affected.join('; ') : p.capability} will not work.</div></li>`;
}

function testedCard(m: ConnectPageModel, kind: ConnectionKind, info: DraftInfo): SafeHtml {
  const decl = capabilitiesOf(info.connector).connect;
  const oauth = decl.oauth;
  return html`<div class="card tested" id="tested-${kind}">
<p class="row"><span class="badge ok">Tested</span> <strong>${decl.title}</strong> <span class="muted">${info.base_url}</span></p>
<h3>Permissions</h3>
<ul class="permissions">${info.permissions.map((p) => permissionLine(kind, p))}</ul>
${oauth ? (info.authorised
    ? html`<p><span class="badge ok">Authorised</span> A ${decl.title} user signed in and approved.</p>`
    : html`<div class="notice warn"><p>${oauth.help.replace('{callback}', m.callbackUrl(info.connector))}</p>
<p><a class="button" id="oauth-${kind}" href="${base(m.token)}/oauth/${kind}/start">${oauth.label}</a></p></div>`) : ''}
</div>`;
}

function connectorForm(m: ConnectPageModel, kind: ConnectionKind, connector: string, open: boolean): SafeHtml {
  const decl = capabilitiesOf(connector).connect;
  const retry = m.retry?.kind === kind && m.retry.connector === connector ? m.retry : null;
  const fill = m.sandbox && m.fill === connector ? decl.sandbox : null;
  const value = (name: string) => (fill ? fill.credentials[name] ?? '' : '');
  const baseUrl = fill && m.sandbox ? `${m.sandbox.origin}${decl.sandbox.path}` : retry?.baseUrl ?? '';
  const id = (f: string) => `${kind}-${connector}-${f}`;
  const listId = id('regions');
  return html`<details class="card connector" id="${id('card')}"${open || retry || fill ? html` open` : ''}>
<summary><strong>${decl.title}</strong></summary>
${retry ? html`<div class="notice bad" role="alert" id="${id('error')}">${retry.error}</div>` : ''}
<form class="stack" method="post" action="${base(m.token)}/test">
<input type="hidden" name="kind" value="${kind}"><input type="hidden" name="connector" value="${connector}">
<div><label for="${id('base_url')}">${decl.baseUrl.label}</label>
<p class="hint" id="${id('base_url-hint')}">${decl.baseUrl.help}</p>
<input type="url" id="${id('base_url')}" name="base_url" required value="${baseUrl}" placeholder="${decl.baseUrl.placeholder ?? ''}" aria-describedby="${id('base_url-hint')}" autocomplete="url"${decl.baseUrl.regions ? html` list="${listId}"` : ''}>
${decl.baseUrl.regions ? html`<datalist id="${listId}">${decl.baseUrl.regions.map((r) => html`<option value="${r.url}">${r.label}</option>`)}</datalist>` : ''}</div>
${decl.fields.map((f) => html`<div><label for="${id(f.name)}">${f.label}</label>
<p class="hint" id="${id(f.name)}-hint">${f.help}</p>
<input type="${f.secret ? 'password' : 'text'}" id="${id(f.name)}" name="cred_${f.name}" required value="${value(f.name)}" aria-describedby="${id(f.name)}-hint" autocomplete="off" spellcheck="false"></div>`)}
<button type="submit">Test ${decl.title}</button>
</form>
${m.sandbox ? html`<p class="hint">Sandbox: <a href="${base(m.token)}?fill=${connector}#${id('card')}">fill in the development credentials</a>.${decl.sandbox.note ? ` ${decl.sandbox.note}` : ''}</p>` : ''}
</details>`;
}

function kindSection(m: ConnectPageModel, kind: ConnectionKind): SafeHtml {
  const words = KIND_WORDS[kind];
  const info = m.info[kind];
  const names = m.connectors[kind] ?? [];
  const forms = names.map((c) => connectorForm(m, kind, c, names.length === 1));
  return html`<section class="kind" aria-labelledby="kind-${kind}">
<h2 id="kind-${kind}">${words.title}</h2>
<p class="muted">For ${words.what}. Pick the system you use and enter the keys it asks for; Test checks them with the vendor before anything is saved.</p>
${info ? testedCard(m, kind, info) : ''}
${info ? html`<details class="change"><summary>Use a different ${kind === 'psa' ? 'PSA' : kind === 'rmm' ? 'RMM' : 'distributor'} or enter new keys</summary>${forms}</details>` : forms}
</section>`;
}

function grantsForm(m: ConnectPageModel): SafeHtml {
  const s = m.session;
  const tested = s.kinds.filter((k) => m.info[k]) as ConnectionKind[];
  const fieldsets = tested.map((kind) => {
    const info = m.info[kind];
    const blocked = blockedGrants(kind, info);
    const keys = grantKeysFor(kind).filter((k) => s.requestedGrants.includes(k));
    const title = capabilitiesOf(info.connector).connect.title;
    return html`<fieldset><legend>${title}</legend>
${keys.length ? keys.map((k: GrantKey) => {
    const why = blocked.get(k);
    const id = `grant-${kind}-${k.replace(/\./g, '-')}`;
    return html`<div class="check"><input type="checkbox" id="${id}" name="grant_${kind}" value="${k}"${ON_BY_DEFAULT.has(k) && !why ? html` checked` : ''}${why ? html` disabled aria-describedby="${id}-why"` : ''}>
<label for="${id}"><span>${GRANT_WORDS[k].title} <code class="key">${k}</code></span>${why ? html`<span class="hint" id="${id}-why">Off: needs ${why.map((w) => w.vendorTerms).join(' and ')}.</span>` : ''}</label></div>`;
  }) : html`<p class="muted">Nothing requested here.</p>`}
</fieldset>`;
  });
  return html`<section aria-labelledby="grants"><h2 id="grants">What ${m.isvName} may do</h2>
<form method="post" action="${base(m.token)}/complete" class="connect-form">
${tested.length ? fieldsets : html`<p class="muted">Test at least one system above first.</p>`}
<p class="hint">Company create, device write and the other extras start unticked: tick them only if you want them. You can change every grant later with your MSP key.</p>
<button type="submit" id="connect"${tested.length ? '' : html` disabled`}>Connect</button>
</form></section>`;
}

export function connectPage(m: ConnectPageModel): string {
  const s = m.session;
  const who = m.tenantName ? html` for <strong>${m.tenantName}</strong>` : '';
  return renderPage({
    title: `Connect to ${m.isvName}`, area: 'Connect',
    main: html`<h1>Connect your systems to ${m.isvName}</h1>
<p class="lead"><strong>${m.isvName}</strong> asks to connect${who}. Nothing is shared until you press Connect; your keys are sent to the vendor to test them, stored encrypted, and never shown again.</p>
${m.notice ? html`<div class="notice ${m.notice.tone}" role="status">${m.notice.text}</div>` : ''}
<section aria-labelledby="asks"><h2 id="asks">${m.isvName} asks to</h2>
<ul>${s.requestedGrants.map((k) => html`<li>${GRANT_WORDS[k as GrantKey]?.title ?? k} <code class="key">${k}</code></li>`)}</ul>
<p class="muted">It can also read what it needs of these systems. This link works until ${s.expiresAt.toUTCString()}.</p></section>
${(s.kinds as ConnectionKind[]).map((k) => kindSection(m, k))}
${grantsForm(m)}`,
  });
}

export function refusalPage(title: string, message: string): string {
  return renderPage({ title, area: 'Connect', main: html`<h1>${title}</h1><p class="lead">${message}</p>` });
}

export interface ProgressModel {
  isvName: string;
  done: boolean;
  connections: { id: string; kind: string; connector: string; resources: { resource: string; records: number; status: string }[] }[];
  progressUrl: string;
  redirect: string | null;
  mspKey: string | null;
  tenantName: string | null;
  missing: { permission: string; grants: string[] }[];
  /** A one-time console sign-in link, on the page answering Connect only. */
  consoleLink: string | null;
}

const STATUS_WORDS: Record<string, string> = { waiting: 'Waiting', running: 'Reading…', done: 'Done', failed: 'Failed' };

export function progressTable(p: Pick<ProgressModel, 'connections'>): SafeHtml {
  return html`${p.connections.map((c) => html`<h3>${connectorTitle(c.connector)}</h3>
<div class="table-wrap"><table class="progress"><thead><tr><th scope="col">What</th><th scope="col" class="num">Records</th><th scope="col">Status</th></tr></thead>
<tbody>${c.resources.map((r) => html`<tr data-connection="${c.id}" data-resource="${r.resource}"><td>${r.resource.replace(/_/g, ' ')}</td><td class="num records">${r.records}</td><td class="status">${STATUS_WORDS[r.status] ?? r.status}</td></tr>`)}</tbody></table></div>`)}`;
}

/**
 * The MSP console's sign-in: right after Connect, a one-time link (15 minutes, single use) issued for
 * this tenant; on a later look at the progress page, where to sign in instead (docs/architecture.md,
 * Connect sessions and console).
 */
function consoleSignIn(link: string | null): SafeHtml {
  return html`<section id="console-sign-in" aria-labelledby="console-heading" class="card"><h2 id="console-heading">Your console</h2>
${link
    ? html`<p>Grants, customer matching, charges and health are in your console. This link signs you in once, within 15 minutes:</p>
<p><a class="button secondary" id="console-link" href="${link}">Open your console</a></p>`
    : html`<p>Grants, customer matching, charges and health are in your console: <a href="/console">sign in</a> with your MSP key.</p>`}
</section>`;
}

export function completionPage(p: ProgressModel, script: string | null): string {
  return renderPage({
    title: 'Connected', area: 'Connect', scripts: script ? [script] : [],
    main: html`<h1>Connected to ${p.isvName}</h1>
<p class="lead">${p.tenantName ? html`<strong>${p.tenantName}</strong> is connected. ` : ''}${p.isvName} can use your data once the first sync below has read it.</p>
${p.mspKey ? html`<section aria-labelledby="msp-key" class="card"><h2 id="msp-key">Your MSP key</h2>
<p>Keep it somewhere safe: it is shown only on this page. With it you read your own data and turn grants on and off.</p>
<code class="secret" id="msp-key-value">${p.mspKey}</code></section>` : ''}
${p.missing.length ? html`<div class="notice warn"><p>Some vendor permissions are missing; the grants that need them are off:</p><ul>${p.missing.map((m) => html`<li>${m.permission}${m.grants.length ? html` (${m.grants.join(', ')})` : ''}</li>`)}</ul></div>` : ''}
<section aria-labelledby="first-sync" id="progress" data-progress-url="${p.progressUrl}.json" data-redirect="${p.redirect ?? ''}" data-auto-redirect="${p.mspKey ? 'false' : 'true'}">
<h2 id="first-sync">First sync</h2>
<p id="sync-state" role="status" aria-live="polite">${p.done ? 'The first sync has finished.' : 'Reading your systems…'}</p>
${progressTable(p)}
<p><a href="${p.progressUrl}" id="refresh-progress"${p.done ? html` hidden` : ''}>Refresh progress</a></p>
</section>
<p id="continue"${p.done ? '' : html` hidden`}>${p.redirect ? html`<a class="button" id="continue-link" href="${p.redirect}">Continue to ${p.isvName}</a>` : html`You can close this page.`}</p>
${consoleSignIn(p.consoleLink)}`,
  });
}
