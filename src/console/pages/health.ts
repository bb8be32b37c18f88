/**
 * Connections and health: per connection the last successful sync, the lag, the vendor API budget used
 * this hour, the records per resource, and what failed with what to do about it: the current failures
 * of `GET /tenants/{t}/status` and the failed syncs of the last day from the audit log.
 */
import { html, type SafeHtml } from '../../pages/html';
import { connectorTitle } from '../../connectors/registry';
import type { ConsoleRoutes } from '../page-context';
import { ago, csrfField, duration, notice } from '../ui';

interface Resource { resource: string; last_status: string; last_synced_at: string | null; last_error: string | null; records: number; lag_seconds: number | null }
interface ConnectionStatus {
  id: string; kind: string; connector: string; last_synced_at: string | null; sync_status: string; resources: Resource[];
  sync: { running: boolean; next_at: string | null };
  budget?: { requests_per_hour: number; used_last_hour: number; in_flight: number };
}
interface AuditRow { action: string; outcome: string; connection_id: string | null; detail: Record<string, unknown>; created_at: string }

/** What a person can do about a sync error, from the words the vendor call failed with. */
export function whatToDo(error: string): string {
  if (/\b(401|403)\b|unauthori[sz]ed|forbidden|credential|token/i.test(error)) {
    return 'The vendor refused our credentials. Check that the API user still exists and has its permissions, then press Reconnect on this system to enter new credentials.';
  }
  if (/\b429\b|throttl|rate/i.test(error)) return 'The vendor is throttling requests. Nothing to do: the next sync waits for the budget and catches up.';
  if (/\b5\d\d\b|unavailable|timeout|timed out|ECONN|network/i.test(error)) {
    return 'The vendor did not answer properly. It is usually temporary: the next sync retries; if it keeps failing, check the vendor\'s status page.';
  }
  if (/\b4\d\d\b/.test(error)) return 'The vendor refused one request. If it happens again, check that the API user may read this resource; the next sync tries again.';
  return 'Run a sync now; if it fails again, the message above is what the vendor said.';
}

function lagOf(c: ConnectionStatus): number | null {
  const lags = c.resources.map((r) => r.lag_seconds).filter((x): x is number => x != null);
  return lags.length ? Math.max(...lags) : null;
}

function failureBlock(where: string, error: string, when: string | null, current = true): SafeHtml {
  return html`<div class="notice ${current ? 'bad' : 'warn'}"><p><strong>What failed:</strong> ${where}${when ? html` (<time datetime="${when}">${ago(when)}</time>)` : ''}: ${error}</p>
<p><strong>What to do:</strong> ${whatToDo(error)}</p></div>`;
}

export function registerHealth(routes: ConsoleRoutes): void {
  routes.get('/console/health', async (ctx) => {
    const status = await ctx.run<{ name: string; healthy: boolean; connections: ConnectionStatus[] }>('tenant_status', {});
    const since = new Date(Date.now() - 24 * 3600_000).toISOString();
    const failed = (await ctx.run<{ audit: AuditRow[] }>('list_audit', { query: { action: 'sync.failed', updated_since: since, limit: 50 } })).audit;
    const synced = ctx.req.query.done === 'synced';
    const cards = status.connections.map((c) => {
      const current = c.resources.filter((r) => r.last_status === 'failed');
      const recent = failed.filter((f) => f.connection_id === c.id);
      const lag = lagOf(c);
      const used = c.budget ? Math.round((c.budget.used_last_hour / Math.max(1, c.budget.requests_per_hour)) * 100) : null;
      const state = current.length ? html`<span class="badge bad">failing</span>` : recent.length ? html`<span class="badge warn">recovered</span>` : html`<span class="badge ok">healthy</span>`;
      return html`<section class="card" aria-labelledby="c-${c.id}">
<h2 id="c-${c.id}">${connectorTitle(c.connector)} <span class="muted">(${c.kind})</span> ${state}</h2>
<dl class="facts">
<dt>Last successful sync</dt><dd>${c.last_synced_at ? html`<time datetime="${c.last_synced_at}">${ago(c.last_synced_at)}</time>` : 'never'}${c.sync.running ? ' · a sync is running now' : ''}</dd>
<dt>Lag</dt><dd>${duration(lag)} at most behind the vendor</dd>
<dt>API budget this hour</dt><dd>${c.budget ? html`${c.budget.used_last_hour} of ${c.budget.requests_per_hour} requests (${used}%) · shared by every integration on this account` : 'not reported'}</dd>
</dl>
${current.map((r) => failureBlock(`the sync of ${r.resource}`, r.last_error ?? 'failed', r.last_synced_at))}
${recent.length && !current.length ? html`<p class="muted">It failed ${recent.length === 1 ? 'once' : `${recent.length} times`} in the last day and has synced since:</p>` : ''}
${recent.slice(0, 3).map((f) => failureBlock(`the sync of ${String(f.detail.resource ?? 'a resource')}`, String(f.detail.error ?? 'failed'), f.created_at, current.length > 0))}
<details><summary>Records per resource</summary>
<div class="table-wrap" tabindex="0"><table><caption class="visually-hidden">Records of ${connectorTitle(c.connector)} per resource</caption>
<thead><tr><th scope="col">Resource</th><th scope="col" class="num">Records</th><th scope="col">Last sync</th><th scope="col">Status</th></tr></thead>
<tbody>${c.resources.map((r) => html`<tr><th scope="row">${r.resource}</th><td class="num">${r.records}</td><td>${r.last_synced_at ? ago(r.last_synced_at) : 'never'}</td><td>${r.last_status === 'ok' ? html`<span class="badge ok">ok</span>` : html`<span class="badge bad">${r.last_status}</span>`}</td></tr>`)}</tbody>
</table></div></details>
<form method="post" action="/console/health/reconnect" class="row">${csrfField(ctx.session)}<input type="hidden" name="connection_id" value="${c.id}">
<button type="submit" class="secondary" id="reconnect-${c.id}" aria-describedby="reconnect-hint-${c.id}">Reconnect ${connectorTitle(c.connector)}</button>
<span class="hint" id="reconnect-hint-${c.id}">Enter new keys on the connect page; its records and every grant on it stay.</span></form>
</section>`;
    });
    ctx.send('/console/health', 'Health', html`<h1>Connections and health</h1>
${synced ? notice('ok', 'A sync ran; the figures below are after it.') : ''}
<p class="lead">${status.healthy ? 'Every connection synced on its last run.' : 'Some connection failed on its last run: see below what failed and what to do.'}</p>
${cards}
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
