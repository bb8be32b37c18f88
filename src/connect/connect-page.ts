/**
 * The connect page's markup (docs/architecture.md, Pages): built with the page kit's escaping template
 * only, from the session, the connectors' declarations and what the tests found. Nothing here decides a
 * rule: which grants are offered, ticked or ruled out comes from src/access and the service.
 */
import type { ConnectSession, ConnectionKind } from '../../entities';
import { grantKeysFor } from '../access/access.service';
import { isGrantKey, type GrantKey } from '../access/caller';
import { capabilitiesOf, connectorTitle } from '../connectors/registry';
import { html, type SafeHtml } from '../pages/html';
import { renderPage } from '../pages/layout';
import { COPY_SCRIPT, copyButton } from '../pages/copy-button';
import { blockedGrants, SHOWN_AGAIN_MS, type DraftInfo } from './connect-sessions.service';
import { GRANT_WORDS, offBecause, ON_BY_DEFAULT } from '../access/grant-words';

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
  /** The tenant's current connections (an existing tenant's page), so a new system is placed beside or instead of one. */
  current?: CurrentConnection[];
  /** The signed-in decider's CSRF token (an existing tenant's page), carried by every form. */
  csrf?: string | null;
}

export interface CurrentConnection { id: string; kind: string; connector: string; baseUrl: string }

/** The grants a session asks for, in words; none is said so (the ISV then only reads). */
function asksList(keys: string[]): SafeHtml {
  if (!keys.length) return html`<p>Nothing beyond reading what it needs of these systems.</p>`;
  return html`<ul>${keys.map((k) => html`<li>${GRANT_WORDS[k as GrantKey]?.title ?? k} <code class="key">${k}</code></li>`)}</ul>`;
}

const csrfField = (csrf: string | null | undefined): SafeHtml => (csrf ? html`<input type="hidden" name="csrf" value="${csrf}">` : html``);

function currentList(current: CurrentConnection[]): SafeHtml {
  if (!current.length) return html`<p class="muted">No systems are connected yet.</p>`;
  return html`<ul>${current.map((c) => html`<li>${c.kind.toUpperCase()}: <strong>${connectorTitle(c.connector)}</strong> <span class="muted">${c.baseUrl}</span></li>`)}</ul>`;
}

/** Where a tested system goes when the tenant already has one of its kind: the person chooses, nothing is replaced silently. */
function placementFieldset(kind: ConnectionKind, tested: string, current: CurrentConnection[]): SafeHtml {
  const same = current.filter((c) => c.kind === kind);
  if (!same.length) return html``;
  const name = `place_${kind}`;
  return html`<fieldset class="placement"><legend>Where does ${connectorTitle(tested)} go?</legend>
<div class="check"><input type="radio" id="${name}-new" name="${name}" value="new" required><label for="${name}-new">Add it beside ${same.map((c) => connectorTitle(c.connector)).join(' and ')} (both stay connected)</label></div>
${same.map((c) => html`<div class="check"><input type="radio" id="${name}-${c.id}" name="${name}" value="${c.id}"><label for="${name}-${c.id}">Replace ${connectorTitle(c.connector)} <span class="muted">${c.baseUrl}</span>${c.connector === tested ? ' (new keys for the same system: its records and grants stay)' : ' (it is removed with its records)'}</label></div>`)}
</fieldset>`;
}

/** A new tenant's first owner names themselves: they are signed in to its console at the end. */
function ownerFieldset(): SafeHtml {
  return html`<fieldset class="owner"><legend>You</legend>
<p class="hint" id="owner-hint">You become the first owner of this MSP in its console: you invite your colleagues there.</p>
<div><label for="owner_name">Your name</label><input id="owner_name" name="owner_name" required maxlength="200" autocomplete="name" aria-describedby="owner-hint"></div>
<div><label for="owner_email">Your work email</label><input id="owner_email" name="owner_email" type="email" required maxlength="254" autocomplete="email"></div>
</fieldset>`;
}

const base = (token: string) => `/connect/${token}`;

function permissionLine(kind: ConnectionKind, p: DraftInfo['permissions'][number]): SafeHtml {
  const blocked = [...blockedGrants(kind, { permissions: [p] } as DraftInfo).entries()];
  const affected = blocked.filter(([, b]) => !b.through).map(([k]) => GRANT_WORDS[k].title);
  const following = blocked.filter(([, b]) => b.through).map(([k]) => GRANT_WORDS[k].title);
  if (p.ok === true) return html`<li><span class="badge ok">Has it</span> ${p.vendorTerms}</li>`;
  if (p.ok === null) return html`<li><span class="badge info">Not checked</span> ${p.vendorTerms}<span class="hint"> ${p.detail ?? ''}</span></li>`;
  return html`<li class="missing-permission"><span class="badge bad">Missing</span> <strong>${p.vendorTerms}</strong>
<div class="hint">${p.detail ? html`${p.detail}. ` : ''}Without it: ${affected.length ? affected.join('; ') : p.capability} will not work${following.length ? `, nor what rests on it: ${following.join('; ')}` : ''}.</div></li>`;
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
<form class="stack" method="post" action="${base(m.token)}/test">${csrfField(m.csrf)}
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

/** Which of the asked grants start unticked, named as the form names them. */
function extrasHint(requested: string[]): SafeHtml {
  const extras = requested.filter((k): k is GrantKey => isGrantKey(k) && !ON_BY_DEFAULT.has(k)).map((k) => `“${GRANT_WORDS[k].title}”`);
  const later = 'You can change every grant later in your console.';
  if (!extras.length) return html`<p class="hint">${later}</p>`;
  return html`<p class="hint">${extras.join(', ')} ${extras.length === 1 ? 'starts' : 'start'} unticked: tick ${extras.length === 1 ? 'it' : 'them'} only if you want ${extras.length === 1 ? 'it' : 'them'}. ${later}</p>`;
}

function grantsForm(m: ConnectPageModel): SafeHtml {
  const s = m.session;
  const tested = s.kinds.filter((k) => m.info[k]) as ConnectionKind[];
  const fieldsets = tested.map((kind) => {
    const info = m.info[kind];
    const blocked = blockedGrants(kind, info);
    const keys = grantKeysFor(kind).filter((k) => s.requestedGrants.includes(k));
    const title = capabilitiesOf(info.connector).connect.title;
    return html`${placementFieldset(kind, info.connector, m.current ?? [])}<fieldset><legend>${title}</legend>
${keys.length ? keys.map((k: GrantKey) => {
    const why = blocked.get(k);
    const id = `grant-${kind}-${k.replace(/\./g, '-')}`;
    return html`<div class="check"><input type="checkbox" id="${id}" name="grant_${kind}" value="${k}"${ON_BY_DEFAULT.has(k) && !why ? html` checked` : ''}${why ? html` disabled aria-describedby="${id}-why"` : ''}>
<label for="${id}"><span><strong>${GRANT_WORDS[k].title}</strong> <code class="key">${k}</code></span><span class="hint" id="${id}-words">${GRANT_WORDS[k].words}</span>${why ? html`<span class="hint off-reason" id="${id}-why">${offBecause(why, title)}</span>` : ''}</label></div>`;
  }) : html`<p class="muted">Nothing requested here.</p>`}
</fieldset>`;
  });
  if (!s.isvId) {
    // A repair session (the console's Reconnect): no ISV asks anything; Connect renews the keys in place.
    return html`<section aria-labelledby="grants"><h2 id="grants">Renew the keys</h2>
<form method="post" action="${base(m.token)}/complete" class="connect-form">${csrfField(m.csrf)}
<p class="hint">Connect saves the keys you tested in place of the old ones. The records and every ISV's grants on this system stay as they are.</p>
<button type="submit" id="connect"${tested.length ? '' : html` disabled`}>Connect</button>
</form></section>`;
  }
  return html`<section aria-labelledby="grants"><h2 id="grants">What ${m.isvName} may do</h2>
<form method="post" action="${base(m.token)}/complete" class="connect-form">${csrfField(m.csrf)}
${tested.length ? fieldsets : html`<p class="muted">Test at least one system above first.</p>`}
${tested.length && !s.tenantId ? ownerFieldset() : ''}
${extrasHint(s.requestedGrants)}
<button type="submit" id="connect"${tested.length ? '' : html` disabled`}>Connect</button>
</form></section>`;
}

export function connectPage(m: ConnectPageModel): string {
  const s = m.session;
  const who = m.tenantName ? html` for <strong>${m.tenantName}</strong>` : '';
  if (!s.isvId) {
    return renderPage({
      title: 'Reconnect', area: 'Connect',
      main: html`<h1>Reconnect a system of ${m.tenantName ?? 'your MSP'}</h1>
<p class="lead">Enter the system's new keys and Test them. Nothing changes until you press Connect; the keys are stored encrypted and never shown again.</p>
${m.notice ? html`<div class="notice ${m.notice.tone}" role="status">${m.notice.text}</div>` : ''}
${(s.kinds as ConnectionKind[]).map((k) => kindSection(m, k))}
${grantsForm(m)}`,
    });
  }
  return renderPage({
    title: `Connect to ${m.isvName}`, area: 'Connect',
    main: html`<h1>Connect your systems to ${m.isvName}</h1>
<p class="lead"><strong>${m.isvName}</strong> asks to connect${who}. Nothing is shared until you press Connect; your keys are sent to the vendor to test them, stored encrypted, and never shown again.</p>
${m.notice ? html`<div class="notice ${m.notice.tone}" role="status">${m.notice.text}</div>` : ''}
<section aria-labelledby="asks"><h2 id="asks">${m.isvName} asks to</h2>
${asksList(s.requestedGrants)}
<p class="muted">It can also read what it needs of these systems. This link works until ${s.expiresAt.toUTCString()}.</p></section>
${s.tenantId ? html`<section aria-labelledby="current"><h2 id="current">Connected now</h2>${currentList(m.current ?? [])}</section>` : ''}
${(s.kinds as ConnectionKind[]).map((k) => kindSection(m, k))}
${grantsForm(m)}`,
  });
}

export interface SignInGateModel {
  token: string;
  isvName: string;
  tenantName: string | null;
  session: ConnectSession;
  current: CurrentConnection[];
  /** The pre-session CSRF token of the sign-in form. */
  formToken: string;
  /** A person signed in in this browser whose session is not an owner or admin of the tenant here. */
  signedIn: { email: string; csrf: string; memberRole: string | null } | null;
}

/**
 * An existing tenant's page for anyone not signed in as its owner or admin (the ISV that opens its own
 * link among them): what is asked and what is connected, and how to sign in. Nothing here saves anything.
 */
export function signInGatePage(m: SignInGateModel): string {
  const who = m.tenantName ?? 'this MSP';
  const deciding = m.signedIn?.memberRole === 'owner' || m.signedIn?.memberRole === 'admin';
  return renderPage({
    title: `Connect to ${m.isvName}`, area: 'Connect',
    main: html`<h1>Connect your systems to ${m.isvName}</h1>
<p class="lead"><strong>${m.isvName}</strong> asks to connect systems of <strong>${who}</strong>. Only an owner or admin of ${who}, signed in, can connect or repair them; nothing is saved before that.</p>
<section aria-labelledby="asks"><h2 id="asks">${m.isvName} asks to</h2>
${asksList(m.session.requestedGrants)}</section>
<section aria-labelledby="current"><h2 id="current">Connected now</h2>${currentList(m.current)}</section>
${deciding
    ? html`<section class="card" aria-labelledby="continue-as"><h2 id="continue-as">Continue as ${m.signedIn!.email}</h2>
<p>You are ${m.signedIn!.memberRole} of ${who}. Your console session opens ${who} for this page.</p>
<form method="post" action="${base(m.token)}/as-member"><input type="hidden" name="csrf" value="${m.signedIn!.csrf}"><button type="submit" id="continue-as-member">Continue</button></form></section>`
    : html`${m.signedIn ? html`<div class="notice warn" role="status">You are signed in as ${m.signedIn.email}, who is not an owner or admin of ${who}.</div>` : ''}
<section class="card stack" aria-labelledby="sign-in"><h2 id="sign-in">Sign in as an owner or admin of ${who}</h2>
<form class="stack" method="post" action="/sign-in/email"><input type="hidden" name="csrf" value="${m.formToken}"><input type="hidden" name="area" value="console"><input type="hidden" name="next" value="${base(m.token)}">
<div><label for="gate-email">Work email</label><p class="hint" id="gate-email-hint">We mail you a link that signs you in once and brings you back to this page.</p>
<input id="gate-email" name="email" type="email" autocomplete="email" required maxlength="254" aria-describedby="gate-email-hint"></div>
<button type="submit">Mail me a sign-in link</button></form>
<p class="hint">Signed in already in this browser? <a href="${base(m.token)}">Show this page again</a>.</p></section>`}`,
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
  /** Whether this session issued an MSP key (shown once): without `mspKey` the page says it was shown and how to rotate it. */
  keyShown?: boolean;
  tenantName: string | null;
  missing: { permission: string; grants: string[] }[];
  /**
   * The console, on the page answering Connect only: `signed_in` (a new tenant's first owner, signed in
   * now), `invited` (their address had an account: an invitation was mailed), `member` (an owner or admin
   * who was signed in already); null on a later look at the progress page.
   */
  owner: 'signed_in' | 'invited' | 'member' | null;
}

const STATUS_WORDS: Record<string, string> = { waiting: 'Waiting', running: 'Reading…', done: 'Done', failed: 'Failed' };

export function progressTable(p: Pick<ProgressModel, 'connections'>): SafeHtml {
  return html`${p.connections.map((c) => html`<h3>${connectorTitle(c.connector)}</h3>
<div class="table-wrap"><table class="progress"><thead><tr><th scope="col">What</th><th scope="col" class="num">Records</th><th scope="col">Status</th></tr></thead>
<tbody>${c.resources.map((r) => html`<tr data-connection="${c.id}" data-resource="${r.resource}"><td>${r.resource.replace(/_/g, ' ')}</td><td class="num records">${r.records}</td><td class="status">${STATUS_WORDS[r.status] ?? r.status}</td></tr>`)}</tbody></table></div>`)}`;
}

/**
 * Where the console is (docs/architecture.md, Connect sessions and console). No link on this page ever
 * signs anyone in: the new tenant's first owner is signed in by the answer to Connect itself, in this
 * browser; everyone else signs in with their own mail or single sign-on.
 */
function consoleSignIn(owner: ProgressModel['owner']): SafeHtml {
  const words = owner === 'signed_in' || owner === 'member'
    ? html`<p>Grants, customer matching, charges and health are in your console; you are signed in to it in this browser.</p>
<p><a class="button secondary" id="console-link" href="/console">Open your console</a></p>`
    : owner === 'invited'
      ? html`<p>Your address already has an account with us, so we mailed you an invitation: accept it to open this MSP's console.</p>`
      : html`<p>Grants, customer matching, charges and health are in your console: <a href="/console">sign in</a> with your work email.</p>`;
  return html`<section id="console-sign-in" aria-labelledby="console-heading" class="card"><h2 id="console-heading">Your console</h2>${words}</section>`;
}

export function completionPage(p: ProgressModel, script: string | null): string {
  return renderPage({
    title: 'Connected', area: 'Connect', scripts: [...(script ? [script] : []), ...(p.mspKey ? [COPY_SCRIPT] : [])],
    main: html`<h1>Connected to ${p.isvName}</h1>
<p class="lead">${p.tenantName ? html`<strong>${p.tenantName}</strong> is connected. ` : ''}${p.isvName} can use your data once the first sync below has read it.</p>
${p.mspKey ? html`<section aria-labelledby="msp-key" class="card"><h2 id="msp-key">Your MSP key</h2>
<p>Keep it somewhere safe: it is shown only on this page, in this browser, for ${SHOWN_AGAIN_MS / 60_000} minutes after you connected (a reload shows it again until then). With it you read your own data and turn grants on and off.</p>
<p><code class="secret" id="msp-key-value">${p.mspKey}</code></p><p>${copyButton('msp-key-value', 'Copy the key')}</p></section>`
    : p.keyShown ? html`<section aria-labelledby="msp-key" class="card" id="msp-key-shown"><h2 id="msp-key">Your MSP key</h2>
<p>Your MSP key was shown on this page once, to the person who connected, in their browser. It is not shown again.</p>
<p>If nobody kept it, rotate it: in your console open <a href="/console/key">MSP key</a> and press <strong>Rotate the MSP key</strong>. The new key is shown to you once and the old one stops working.</p></section>` : ''}
${p.missing.length ? html`<div class="notice warn"><p>Some vendor permissions are missing; the grants that need them are off:</p><ul>${p.missing.map((m) => html`<li>${m.permission}${m.grants.length ? html` (off: ${m.grants.map((k) => (isGrantKey(k) ? GRANT_WORDS[k].title : k)).join('; ')})` : ''}</li>`)}</ul></div>` : ''}
<section aria-labelledby="first-sync" id="progress" data-progress-url="${p.progressUrl}.json" data-redirect="${p.redirect ?? ''}" data-auto-redirect="${p.mspKey || p.keyShown ? 'false' : 'true'}">
<h2 id="first-sync">First sync</h2>
<p id="sync-state" role="status" aria-live="polite">${p.done ? 'The first sync has finished.' : 'Reading your systems…'}</p>
${progressTable(p)}
<p><a href="${p.progressUrl}" id="refresh-progress"${p.done ? html` hidden` : ''}>Refresh progress</a></p>
</section>
<p id="continue"${p.done ? '' : html` hidden`}>${p.redirect ? html`<a class="button" id="continue-link" href="${p.redirect}">Continue to ${p.isvName}</a>` : html`You can close this page.`}</p>
${consoleSignIn(p.owner)}`,
  });
}
