/**
 * Connections and health: per connection its freshest successful check (the resource checked last) and
 * each resource's own age, the vendor API budget used this hour, and what is failing grouped by what
 * fixes it, each group once with its one action: Reconnect (the vendor refuses the stored credentials),
 * the permission to add in the vendor's own words (a 403), or nothing but waiting (the vendor throttles,
 * or did not answer). The classification is the one of src/events/connection-state.ts
 * (`classifyRecordedError`). Failures that are no longer current (the failed syncs of the last day, from
 * the audit log) are told once per group, as recovered.
 */
import { html, type SafeHtml } from '../../pages/html';
import { connectorTitle } from '../../connectors/registry';
import { classifyRecordedError } from '../../events/connection-state';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { ago, csrfField, duration } from '../ui';
import { notice } from '../../pages/notice';

interface Resource { resource: string; last_status: string; last_synced_at: string | null; last_attempt_at: string | null; last_error: string | null; records: number; lag_seconds: number | null; interval_seconds: number | null }
interface ConnectionStatus {
  id: string; kind: string; connector: string; last_synced_at: string | null; sync_status: string; resources: Resource[];
  sync: { running: boolean; next_at: string | null };
  budget?: { requests_per_hour: number; used_last_hour: number; in_flight: number };
}
interface AuditRow { action: string; outcome: string; connection_id: string | null; detail: Record<string, unknown>; created_at: string }
interface GrantRow { connection_id: string; unavailable?: { vendor_permissions: string[] }[] }

/** What fixes a failure: the groups a card shows, each with its one action. */
export type FixKind = 'reconnect' | 'permission' | 'wait' | 'retry';

/** Which group a recorded sync error falls in (the connection-state classification, then throttling and outages). */
export function fixOf(error: string): FixKind {
  const state = classifyRecordedError(error);
  if (state === 'credentials_failing') return 'reconnect';
  if (state === 'permission_missing') return 'permission';
  if (/\b429\b|throttl|rate limit|\b5\d\d\b|unavailable|timeout|timed out|ECONN|network/i.test(error)) return 'wait';
  return 'retry';
}

interface Failure { resource: string; error: string; at: string | null }

/** One group of failures of a connection: what failed (each resource once), why, and the one action. */
function failureGroup(ctx: PageContext, c: ConnectionStatus, fix: FixKind, failures: Failure[], missing: string[], current: boolean): SafeHtml {
  const title = connectorTitle(c.connector);
  const resources = [...new Set(failures.map((f) => f.resource))];
  const errors = [...new Set(failures.map((f) => f.error))];
  const latest = failures.map((f) => f.at).filter((x): x is string => !!x).sort().at(-1) ?? null;
  const what: Record<FixKind, string> = {
    reconnect: `${title} refuses the stored credentials`,
    permission: `${title} refuses a permission the API user lacks`,
    wait: `${title} is throttling requests or did not answer`,
    retry: `${title} refused a request`,
  };
  const action: Record<FixKind, SafeHtml> = {
    reconnect: html`<form method="post" action="/console/health/reconnect" class="row">${csrfField(ctx.session)}<input type="hidden" name="connection_id" value="${c.id}">
<button type="submit" id="reconnect-${c.id}" aria-describedby="reconnect-hint-${c.id}">Reconnect ${title}</button>
<span class="hint" id="reconnect-hint-${c.id}">Enter new keys on the connect page; its records and every grant on it stay.</span></form>`,
    permission: missing.length
      ? html`<p>In ${title}, give the API user ${missing.length === 1 ? 'this permission' : 'these permissions'}: ${missing.map((m, i) => html`${i ? ', ' : ''}<strong>${m}</strong>`)}. Then press Reconnect ${title} below to check again.</p>`
      : html`<p>In ${title}, give the API user permission to read ${resources.join(', ')}. Then press Reconnect ${title} below to check again.</p>`,
    wait: html`<p>Nothing to do: the next sync waits for the API budget and the vendor, then catches up.</p>`,
    retry: html`<form method="post" action="/console/health/sync" class="row">${csrfField(ctx.session)}<button type="submit" class="secondary">Sync now</button>
<span class="hint">If it fails again, the message above is what ${title} said.</span></form>`,
  };
  return html`<div class="notice ${current ? 'bad' : 'warn'} failure" data-fix="${fix}"><p><strong>${current ? 'Failing' : 'Failed earlier'}:</strong> ${what[fix]}${latest ? html` (<time datetime="${latest}">${ago(latest)}</time>)` : ''}, for ${resources.join(', ')}${current ? '' : ` (${failures.length === 1 ? 'once' : `${failures.length} times`} in the last day; it has synced since)`}.</p>
<p class="muted">${title} said: ${errors.slice(0, 2).join(' · ')}${errors.length > 2 ? ` (and ${errors.length - 2} more)` : ''}</p>
${current ? html`<div><strong>What to do:</strong> ${action[fix]}</div>` : ''}</div>`;
}

const ORDER: FixKind[] = ['reconnect', 'permission', 'wait', 'retry'];

function groups(failures: Failure[]): [FixKind, Failure[]][] {
  return ORDER.map((k) => [k, failures.filter((f) => fixOf(f.error) === k)] as [FixKind, Failure[]]).filter(([, fs]) => fs.length > 0);
}

/** "12 s", the age of a resource's stored copy. */
function age(r: Resource): string {
  return r.lag_seconds == null ? 'never synced' : duration(r.lag_seconds);
}

/** The resource checked most recently (its stored copy is the freshest), or null when none has synced. */
function freshest(c: ConnectionStatus): Resource | null {
  const synced = c.resources.filter((r) => r.lag_seconds != null);
  return synced.length ? synced.reduce((a, b) => (b.lag_seconds! < a.lag_seconds! ? b : a)) : null;
}

function connectionCard(ctx: PageContext, c: ConnectionStatus, failedEarlier: AuditRow[], missing: string[]): SafeHtml {
  const title = connectorTitle(c.connector);
  const current: Failure[] = c.resources.filter((r) => r.last_status === 'failed').map((r) => ({ resource: r.resource, error: r.last_error ?? 'failed', at: r.last_attempt_at ?? r.last_synced_at }));
  // The failed syncs of the last day, told only when nothing fails now (a current failure is the same one, told above).
  const earlier: Failure[] = current.length ? [] : failedEarlier.map((f) => ({ resource: String(f.detail.resource ?? 'a resource'), error: String(f.detail.error ?? 'failed'), at: f.created_at }));
  const fresh = freshest(c);
  const used = c.budget ? Math.round((c.budget.used_last_hour / Math.max(1, c.budget.requests_per_hour)) * 100) : null;
  const state = current.length ? html`<span class="badge bad">failing</span>` : earlier.length ? html`<span class="badge warn">recovered</span>` : html`<span class="badge ok">healthy</span>`;
  const currentGroups = groups(current);
  const reconnectInGroup = currentGroups.some(([k]) => k === 'reconnect');
  return html`<section class="card" aria-labelledby="c-${c.id}">
<h2 id="c-${c.id}">${title} <span class="muted">(${c.kind})</span> ${state}</h2>
<dl class="facts">
<dt>Freshest check</dt><dd>${fresh ? html`${fresh.resource}, <time datetime="${new Date(Date.now() - fresh.lag_seconds! * 1000).toISOString()}">${ago(new Date(Date.now() - fresh.lag_seconds! * 1000).toISOString())}</time>` : 'never'}${c.sync.running ? ' · a sync is running now' : ''}</dd>
<dt>API budget this hour</dt><dd>${c.budget ? html`${c.budget.used_last_hour} of ${c.budget.requests_per_hour} requests (${used}%) · shared by every integration on this account` : 'not reported'}</dd>
</dl>
${currentGroups.map(([k, fs]) => failureGroup(ctx, c, k, fs, missing, true))}
${groups(earlier).map(([k, fs]) => failureGroup(ctx, c, k, fs, missing, false))}
<div class="table-wrap" tabindex="0"><table><caption>Each resource of ${title}: how old its stored copy is</caption>
<thead><tr><th scope="col">Resource</th><th scope="col">Age of the copy</th><th scope="col">Checked every</th><th scope="col" class="num">Records</th><th scope="col">Status</th></tr></thead>
<tbody>${c.resources.map((r) => html`<tr><th scope="row">${r.resource}</th><td>${age(r)}</td><td>${r.interval_seconds == null ? 'not planned yet' : duration(r.interval_seconds)}</td><td class="num">${r.records}</td><td>${r.last_status === 'ok' ? html`<span class="badge ok">ok</span>` : html`<span class="badge ${r.last_status === 'failed' ? 'bad' : 'warn'}">${r.last_status}</span>`}</td></tr>`)}</tbody>
</table></div>
${reconnectInGroup ? '' : html`<form method="post" action="/console/health/reconnect" class="row">${csrfField(ctx.session)}<input type="hidden" name="connection_id" value="${c.id}">
<button type="submit" class="secondary" id="reconnect-${c.id}" aria-describedby="reconnect-hint-${c.id}">Reconnect ${title}</button>
<span class="hint" id="reconnect-hint-${c.id}">Enter new keys, or check permissions again, on the connect page; its records and every grant on it stay.</span></form>`}
</section>`;
}

export function registerHealth(routes: ConsoleRoutes): void {
  routes.get('/console/health', async (ctx) => {
    const status = await ctx.run<{ name: string; healthy: boolean; connections: ConnectionStatus[] }>('tenant_status', {});
    const since = new Date(Date.now() - 24 * 3600_000).toISOString();
    const failed = (await ctx.run<{ audit: AuditRow[] }>('list_audit', { query: { action: 'sync.failed', updated_since: since, limit: 50 } })).audit;
    // The vendor permissions each connection was found to lack (in the vendor's words), from the grants' read.
    const missing = new Map<string, string[]>();
    if (status.connections.some((c) => c.resources.some((r) => r.last_status === 'failed' && fixOf(r.last_error ?? '') === 'permission'))) {
      const rows = (await ctx.run<{ grants: GrantRow[] }>('list_grants', { query: { limit: 500 } }).catch(() => ({ grants: [] as GrantRow[] }))).grants;
      for (const r of rows) missing.set(r.connection_id, [...new Set([...(missing.get(r.connection_id) ?? []), ...(r.unavailable ?? []).flatMap((u) => u.vendor_permissions)])]);
    }
    const synced = ctx.req.query.done === 'synced';
    ctx.send('/console/health', 'Health', html`<h1>Connections and health</h1>
${synced ? notice('ok', 'A sync ran; the figures below are after it.') : ''}
<p class="lead">${status.healthy ? 'Every connection synced on its last run.' : 'Some connection failed on its last run: see below what failed and the one thing that fixes it.'}</p>
${status.connections.map((c) => connectionCard(ctx, c, failed.filter((f) => f.connection_id === c.id), missing.get(c.id) ?? []))}
<form method="post" action="/console/health/sync">${csrfField(ctx.session)}<button type="submit">Sync now</button></form>`);
  });

  // Reconnect: a repair session of the tenant's own (no ISV), then the connect page for it.
  routes.post('/console/health/reconnect', async (ctx) => {
    const repair = await ctx.run<{ connect_url: string }>('reconnect_connection', { path: { connection_id: String(ctx.form.connection_id ?? '') } });
    ctx.res.redirect(303, new URL(repair.connect_url).pathname);
  });

  routes.post('/console/health/sync', async (ctx) => {
    await ctx.run('sync_tenant', { body: {} });
    ctx.res.redirect(303, '/console/health?done=synced');
  });
}
