/**
 * The ISV's MSPs (docs/architecture.md, Connect sessions and console): every tenant the ISV sees (the
 * tenants it holds a grant on, `list_tenants`), each connection's health, the grants the ISV holds there
 * in words (src/access/grant-words.ts) and the last successful sync (`tenant_status`); a tenant's own
 * page adds the resources, what failed, and the connect links the ISV opened for it.
 *
 * Health is the one classification of src/events/connection-state.ts (`connectionHealth`: the stored
 * state the connection events tell, then lag), over what `tenant_status` answers. The pages run the same
 * operations as the ISV's key does over REST (`runAsIsv`: the runner, with the ISV's caller naming the
 * signed-in person), so nothing is decided in a template.
 */
import type { Request, Response } from 'express';
import { GRANT_WORDS } from '../access/grant-words';
import { isGrantKey, type Caller } from '../access/caller';
import { withAuditDetail } from '../operations/audit-context';
import { connectFeature } from '../connect/feature';
import { connectorTitle } from '../connectors/registry';
import { ago, duration, refusal } from '../console/ui';
import { notice } from '../pages/notice';
import type { Operation } from '../operations/operation';
import { runOperation, type RawInput } from '../operations/runner';
import { html, type SafeHtml } from '../pages/html';
import { tenantsFeature } from '../tenants/feature';
import { connectionHealth, type ConnectionHealth } from '../events/connection-state';
import type { ConnectionStates } from '../events/connection-states.store';
import type { IsvConsolePage, IsvConsoleShell, SignedIsv } from './shell';

// ---- running an operation as the signed-in ISV ------------------------------------------------------

const OPERATIONS = new Map<string, Operation>([...(tenantsFeature.operations ?? []), ...(connectFeature.operations ?? [])].map((op) => [op.name, op as Operation]));

/**
 * The ISV's caller a console session acts as: the session's ISV, with the person named (the audit log's
 * actor). It came with no API key: `apiKeyId` names the console session, which no per-key limit or key
 * lookup ever sees (those run in the authenticator, before a page).
 */
export function isvConsoleCaller(who: SignedIsv): Caller {
  const person = who.session.person!;
  return { kind: 'isv', isvId: who.org.id, apiKeyId: `console-session:${who.session.id}`, person: { id: person.id, email: person.email } };
}

/** Runs one of the tenants' or connect sessions' operations by name as the signed-in ISV, audited as made in this console session. */
export function runAsIsv<R>(shell: IsvConsoleShell, who: SignedIsv, name: string, raw: RawInput): Promise<R> {
  const op = OPERATIONS.get(name);
  if (!op) throw new Error(`no operation ${name}`);
  return withAuditDetail(shell.services.peopleSessions.detailOf(who.session), () => runOperation(op, raw, isvConsoleCaller(who), shell.services)) as Promise<R>;
}

/** Who may change things at an ISV (create and cancel connect links): its owners and developers; a viewer reads. */
export function mayChange(who: SignedIsv): boolean {
  return who.session.role === 'owner' || who.session.role === 'developer';
}

// ---- connection health ------------------------------------------------------------------------------

interface Resource {
  resource: string; last_status: string; last_synced_at: string | null; last_error: string | null;
  records: number; lag_seconds: number | null; interval_seconds: number | null;
}
/** A connection as `tenant_status` answers it (the fields these pages read). */
export interface StatusConnection {
  id: string; kind: string; connector: string; last_synced_at: string | null; sync_status: string; grants: string[];
  resources: Resource[]; sync: { running: boolean; next_at: string | null };
}
interface TenantStatus { tenant_id: string; name: string; sandbox: boolean; healthy: boolean; last_synced_at: string | null; connections: StatusConnection[] }
interface TenantItem { id: string; name: string; slug: string; sandbox: boolean }

export const HEALTH_WORDS: Record<ConnectionHealth, { label: string; badge: 'ok' | 'warn' | 'bad'; words: string }> = {
  ok: { label: 'OK', badge: 'ok', words: 'Synced on its last run and up to date.' },
  lagging: { label: 'Lagging', badge: 'warn', words: 'Its stored copy is further behind the vendor than its schedule allows (or it has not synced yet); the next sync catches up.' },
  credentials_failing: { label: 'Credentials failing', badge: 'bad', words: 'The vendor refuses the stored credentials. The MSP has to enter new ones: send them a connect link for this MSP, or ask them to press Reconnect in their console.' },
  permission_missing: { label: 'Permission missing', badge: 'bad', words: 'The vendor refused a read for lack of a permission. The MSP has to give their API user that permission at the vendor.' },
  sync_failing: { label: 'Sync failing', badge: 'bad', words: 'Its last sync failed; the schedule tries again. Until then you read the copy of its last successful sync.' },
};

/** Each connection's stored health state (src/events/connection-state.ts), for `connectionHealth`. */
type StoredStates = Awaited<ReturnType<ConnectionStates['stored']>>;

async function storedStates(shell: IsvConsoleShell, status: TenantStatus): Promise<StoredStates> {
  return shell.services.connectionStates.stored(status.connections.map((c) => c.id));
}

export function healthBadge(h: ConnectionHealth): SafeHtml {
  return html`<span class="badge ${HEALTH_WORDS[h].badge}">${HEALTH_WORDS[h].label}</span>`;
}

/** The grants held on a connection, each in the words the MSP saw when it gave them. */
export function grantsInWords(keys: readonly string[], full = false): SafeHtml {
  if (keys.length === 0) return html`<span class="muted">none</span>`;
  return html`<ul>${keys.map((k) => {
    const words = isGrantKey(k) ? GRANT_WORDS[k] : null;
    return html`<li>${words ? words.title : k} <code>${k}</code>${full && words ? html`<br><span class="hint">${words.words}</span>` : ''}</li>`;
  })}</ul>`;
}

/** A time as a person reads it: `2026-12-03 01:38:13 UTC`. */
export function utc(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC');
}

function when(iso: string | null): SafeHtml {
  return iso ? html`<time datetime="${iso}">${ago(iso)}</time>` : html`never`;
}

// ---- the pages --------------------------------------------------------------------------------------

function tenantCard(t: TenantItem, status: TenantStatus, stored: StoredStates): SafeHtml {
  const healths = status.connections.map((c) => connectionHealth(c, stored.get(c.id)));
  const rows = status.connections.map((c, i) => {
    const h = healths[i]!;
    return html`<tr><th scope="row">${connectorTitle(c.connector)} <span class="muted">(${c.kind})</span></th><td>${healthBadge(h)}</td><td>${when(c.last_synced_at)}</td><td>${grantsInWords(c.grants)}</td></tr>`;
  });
  const worst = healths.find((h) => HEALTH_WORDS[h].badge === 'bad') ?? healths.find((h) => h !== 'ok');
  return html`<section class="card" aria-labelledby="t-${t.id}">
<h2 id="t-${t.id}"><a href="/app/msps/${t.id}">${t.name}</a>${t.sandbox ? html` <span class="badge info">sandbox</span>` : ''} ${worst ? healthBadge(worst) : healthBadge('ok')}</h2>
<dl class="facts"><dt>Last successful sync</dt><dd>${when(status.last_synced_at)}</dd><dt>Systems</dt><dd>${status.connections.length}</dd></dl>
<div class="table-wrap" tabindex="0" role="region" aria-label="Systems of ${t.name}"><table><caption class="visually-hidden">Systems of ${t.name}, their health and your grants</caption>
<thead><tr><th scope="col">System</th><th scope="col">Health</th><th scope="col">Last successful sync</th><th scope="col">Your grants</th></tr></thead>
<tbody>${rows}</tbody></table></div>
<p><a href="/app/msps/${t.id}">Details of ${t.name}</a></p>
</section>`;
}

function refusedView(err: unknown): { status: number; main: SafeHtml } {
  const r = refusal(err);
  if (!r) throw err;
  return { status: r.status, main: html`<h1>MSPs</h1>${notice('bad', r.message)}<p><a href="/app/msps">Back to MSPs</a></p>` };
}

async function listView(shell: IsvConsoleShell, who: SignedIsv, cursor: string | null): Promise<SafeHtml> {
  const list = await runAsIsv<{ tenants: TenantItem[]; next_cursor: string | null }>(shell, who, 'list_tenants', { query: { limit: '25', ...(cursor ? { cursor } : {}) } });
  const cards: SafeHtml[] = [];
  for (const t of list.tenants) {
    const status = await runAsIsv<TenantStatus>(shell, who, 'tenant_status', { path: { tenant_id: t.id }, query: {} });
    cards.push(tenantCard(t, status, await storedStates(shell, status)));
  }
  return html`<h1>MSPs</h1>
<p class="lead">Every MSP that has given you a grant, each connected system's health, and what you may do there.</p>
<p><a href="/app/connect-links">Ask an MSP to connect with a connect link</a></p>
${cards.length ? cards : notice('info', html`No MSP has given you a grant yet. <a href="/app/connect-links">Create a connect link</a> and send it to one.`)}
${list.next_cursor ? html`<p><a href="/app/msps?cursor=${encodeURIComponent(list.next_cursor)}">More MSPs</a></p>` : ''}
<h2>What the health says</h2>
<dl class="facts">${(Object.keys(HEALTH_WORDS) as ConnectionHealth[]).map((h) => html`<dt>${healthBadge(h)}</dt><dd>${HEALTH_WORDS[h].words}</dd>`)}</dl>`;
}

interface SessionItem { id: string; state: string; tenant_id: string | null; kinds: string[]; requested_grants: string[]; created_at: string; expires_at: string; completed_at: string | null }

function connectionCard(c: StatusConnection, h: ConnectionHealth, stored: StoredStates, repair: SafeHtml): SafeHtml {
  const state = stored.get(c.id);
  const failing = c.resources.filter((r) => r.last_status === 'failed');
  const lags = c.resources.map((r) => r.lag_seconds).filter((x): x is number => x != null);
  return html`<section class="card" aria-labelledby="c-${c.id}">
<h2 id="c-${c.id}">${connectorTitle(c.connector)} <span class="muted">(${c.kind})</span> ${healthBadge(h)}</h2>
<p>${HEALTH_WORDS[h].words}</p>
${state && state.state !== 'ok' && state.since ? html`<p class="muted">Since <time datetime="${state.since.toISOString()}">${ago(state.since.toISOString())}</time>${state.reason && failing.length === 0 ? html`: ${state.reason}` : ''}.</p>` : ''}
${h === 'credentials_failing' ? repair : ''}
<dl class="facts">
<dt>Last successful sync</dt><dd>${when(c.last_synced_at)}${c.sync.running ? ' · a sync is running now' : ''}</dd>
<dt>Behind the vendor</dt><dd>${duration(lags.length ? Math.max(...lags) : null)}</dd>
<dt>Next check</dt><dd>${c.sync.next_at ? html`<time datetime="${c.sync.next_at}">${utc(c.sync.next_at)}</time>` : 'not scheduled'}</dd>
</dl>
${failing.map((r) => notice('bad', html`<strong>${r.resource}</strong>: ${r.last_error ?? 'failed'}`))}
<h3>Your grants</h3>
${grantsInWords(c.grants, true)}
<details><summary>Records per resource</summary>
<div class="table-wrap" tabindex="0" role="region" aria-label="Records of ${connectorTitle(c.connector)} per resource"><table><caption class="visually-hidden">Records of ${connectorTitle(c.connector)} per resource</caption>
<thead><tr><th scope="col">Resource</th><th scope="col" class="num">Records</th><th scope="col">Last successful sync</th><th scope="col">Status</th></tr></thead>
<tbody>${c.resources.map((r) => html`<tr><th scope="row">${r.resource}</th><td class="num">${r.records}</td><td>${when(r.last_synced_at)}</td><td>${r.last_status === 'failed' ? html`<span class="badge bad">failed</span>` : html`<span class="badge ok">${r.last_status}</span>`}</td></tr>`)}</tbody>
</table></div></details>
</section>`;
}

async function detailView(shell: IsvConsoleShell, who: SignedIsv, tenantId: string): Promise<{ title: string; main: SafeHtml }> {
  const status = await runAsIsv<TenantStatus>(shell, who, 'tenant_status', { path: { tenant_id: tenantId }, query: {} });
  const stored = await storedStates(shell, status);
  const repair = mayChange(who) ? html`<p><a href="/app/connect-links?tenant_id=${status.tenant_id}">Send ${status.name} a connect link to enter new credentials</a></p>` : html``;
  const sessions = (await allSessions(shell, who)).filter((s) => s.tenant_id === status.tenant_id).reverse();
  return {
    title: status.name,
    main: html`<p><a href="/app/msps">All MSPs</a></p>
<h1>${status.name}${status.sandbox ? html` <span class="badge info">sandbox</span>` : ''}</h1>
<p class="lead">${status.healthy ? 'Every system synced on its last run.' : 'A system failed on its last run: see below what failed.'} Last successful sync of all its systems: ${when(status.last_synced_at)}.</p>
${status.connections.map((c) => connectionCard(c, connectionHealth(c, stored.get(c.id)), stored, repair))}
<section class="card" aria-labelledby="links-heading"><h2 id="links-heading">Connect links for ${status.name}</h2>
${sessions.length
    ? html`<ul>${sessions.map((s) => html`<li>${s.state === 'pending' ? 'open' : s.state}: ${s.kinds.join(', ')}, created ${when(s.created_at)}</li>`)}</ul>`
    : html`<p class="muted">None.</p>`}
${mayChange(who) ? html`<p><a href="/app/connect-links?tenant_id=${status.tenant_id}">Ask ${status.name} for more systems or grants</a></p>` : ''}
</section>`,
  };
}

/** Every connect session of the ISV, oldest first (the list's pages followed; a few hundred at most in practice). */
export async function allSessions<T = SessionItem>(shell: IsvConsoleShell, who: SignedIsv): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 20; i++) {
    const page: { connect_sessions: T[]; next_cursor: string | null } = await runAsIsv(shell, who, 'list_connect_sessions', { query: { limit: '500', ...(cursor ? { cursor } : {}) } });
    out.push(...page.connect_sessions);
    cursor = page.next_cursor;
    if (!cursor) break;
  }
  return out;
}

async function answer(shell: IsvConsoleShell, req: Request, res: Response, view: (who: SignedIsv) => Promise<{ title: string; main: SafeHtml }>): Promise<void> {
  const who = await shell.signed(req, res);
  if (!who) return;
  try {
    const { title, main } = await view(who);
    res.type('html').send(shell.page(who, '/app/msps', title, main));
  } catch (err) {
    const r = refusedView(err);
    res.status(r.status).type('html').send(shell.page(who, '/app/msps', 'MSPs', r.main));
  }
}

export const mspsPage: IsvConsolePage = {
  nav: { href: '/app/msps', label: 'MSPs' },
  register(router, shell) {
    router.get('/app/msps', (req, res) => answer(shell, req, res, async (who) => ({
      title: 'MSPs', main: await listView(shell, who, typeof req.query.cursor === 'string' ? req.query.cursor : null),
    })));
    router.get('/app/msps/:tenantId', (req, res) => answer(shell, req, res, (who) => detailView(shell, who, String(req.params.tenantId))));
  },
};
