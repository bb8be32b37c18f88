/**
 * The request log in the ISV's console (docs/architecture.md, Request log): every request made with the
 * ISV's keys, newest first, filtered by status, route and tenant, found by its request id; one request
 * shows its headers and bodies as the log keeps them (secrets redacted). The machine twins are
 * `GET /requests` and `GET /requests/{request_id}` (src/requests).
 */
import { ServiceError } from '../errors/service-error';
import { html, type SafeHtml } from '../pages/html';
import { ago } from '../console/ui';
import { REQUESTS_CURSOR } from '../requests/requests.store';
import type { RequestLogDetailView } from '../requests/requests.service';
import type { IsvConsolePage } from './shell';

const STATUSES: [string, string][] = [['', 'Any'], ['2xx', 'Succeeded (2xx)'], ['4xx', 'Refused (4xx)'], ['5xx', 'Failed (5xx)'], ['401', '401'], ['403', '403'], ['404', '404'], ['422', '422'], ['429', '429']];
const PAGE = 50;

const one = (v: unknown, max: number): string => (typeof v === 'string' ? v.trim().slice(0, max) : '');

function statusBadge(status: number): SafeHtml {
  const cls = status < 400 ? 'ok' : status < 500 ? 'warn' : 'bad';
  return html`<span class="badge ${cls}">${status}</span>`;
}

/** A body as the log keeps it: pretty JSON where it is whole JSON, else the text as kept. */
function bodyView(label: string, id: string, text: string | null, truncated: boolean): SafeHtml {
  if (text == null) return html`<h3 id="${id}">${label}</h3><p class="muted">No body.</p>`;
  let shown = text;
  try { shown = JSON.stringify(JSON.parse(text), null, 2); } catch { /* cut or not JSON: as kept */ }
  return html`<h3 id="${id}">${label}</h3>${truncated ? html`<p class="hint">Cut at 64 KiB.</p>` : ''}
<pre class="request" tabindex="0" aria-labelledby="${id}">${shown}</pre>`;
}

function headersView(caption: string, headers: { name: string; value: string }[]): SafeHtml {
  return html`<div class="table-wrap" tabindex="0"><table><caption>${caption}</caption>
<thead><tr><th scope="col">Header</th><th scope="col">Value</th></tr></thead>
<tbody>${headers.map((h) => html`<tr><td><code>${h.name}</code></td><td><code>${h.value}</code></td></tr>`)}</tbody></table></div>`;
}

function detailView(r: RequestLogDetailView): SafeHtml {
  return html`<p><a href="/app/requests">All requests</a></p>
<h1>${r.method} ${r.path}</h1>
<dl class="facts">
<dt>Request id</dt><dd><code>${r.id}</code></dd>
<dt>Status</dt><dd>${statusBadge(r.status)}${r.error_code ? html` <code>${r.error_code}</code>` : ''}</dd>
<dt>When</dt><dd><time datetime="${r.at}">${r.at}</time> (${ago(r.at)})</dd>
<dt>Took</dt><dd>${r.duration_ms} ms</dd>
<dt>Route</dt><dd>${r.route ? html`<code>${r.route}</code>` : 'no operation'}</dd>
<dt>Surface</dt><dd>${r.surface === 'rest' ? 'REST' : r.surface === 'mcp' ? 'MCP' : 'GraphQL'}</dd>
<dt>Tenant</dt><dd>${r.tenant_id ? html`<code>${r.tenant_id}</code>` : 'none'}</dd>
<dt>Key</dt><dd>${r.key_prefix ? html`<code>${r.key_prefix}…</code>` : ''}</dd>
${r.query ? html`<dt>Query</dt><dd><code>${r.query}</code></dd>` : ''}
</dl>
<p class="hint">Secrets are redacted here as everywhere in the log: keys, tokens, vendor credentials, webhook secrets and one-time links read <code>[redacted]</code>.</p>
<h2>Request</h2>
${headersView('Request headers', r.request_headers)}
${bodyView('Request body', 'request-body', r.request_body, r.request_body_truncated)}
<h2>Answer</h2>
${headersView('Answer headers', r.response_headers)}
${bodyView('Answer body', 'response-body', r.response_body, r.response_body_truncated)}`;
}

export const requestsPage: IsvConsolePage = {
  nav: { href: '/app/requests', label: 'Requests' },
  register(router, shell) {
    const log = shell.services.requestLog;

    router.get('/app/requests', async (req, res) => {
      const who = await shell.signed(req, res);
      if (!who) return;
      const id = one(req.query.id, 200);
      if (id) return res.redirect(303, `/app/requests/${encodeURIComponent(id)}`);
      const status = STATUSES.some(([v]) => v === req.query.status) ? String(req.query.status) : '';
      const route = one(req.query.route, 300);
      const tenant = one(req.query.tenant_id, 100);
      const given = one(req.query.cursor, 500);
      const cursor = given && REQUESTS_CURSOR.decode(given) ? given : null;
      const page = await log.list(who.org.id, { status: status || null, route: route || null, tenantId: tenant || null }, { limit: PAGE, cursor });
      const next = page.next_cursor ? `/app/requests?${new URLSearchParams({ status, route, tenant_id: tenant, cursor: page.next_cursor }).toString()}` : null;
      res.type('html').send(shell.page(who, '/app/requests', 'Requests', html`<h1>Requests</h1>
<p class="lead">Every request made with your API keys (REST, MCP and GraphQL), newest first. Kept ${shell.services.config.requestLog.days} days.</p>
<form method="get" action="/app/requests" class="card row" role="search" aria-label="Find a request by id">
<div><label for="find-id">Request id</label><p class="hint" id="find-id-hint">The <code>request_id</code> of an error answer, or its <code>X-Request-Id</code> header.</p>
<input type="search" id="find-id" name="id" aria-describedby="find-id-hint" autocomplete="off"></div>
<button type="submit">Find</button></form>
<form method="get" action="/app/requests" class="card filters"><div class="row">
<div><label for="status">Status</label><select id="status" name="status">${STATUSES.map(([v, l]) => html`<option value="${v}"${v === status ? html` selected` : ''}>${l}</option>`)}</select></div>
<div><label for="route">Route</label><input type="text" id="route" name="route" value="${route}" placeholder="/tenants/{tenant_id}/tickets"></div>
<div><label for="tenant_id">Tenant id</label><input type="text" id="tenant_id" name="tenant_id" value="${tenant}"></div>
<button type="submit">Filter</button></div></form>
<div class="table-wrap" tabindex="0"><table><caption class="visually-hidden">Requests</caption>
<thead><tr><th scope="col">When</th><th scope="col">Request</th><th scope="col">Status</th><th scope="col">Route</th><th scope="col" class="num">ms</th><th scope="col">Key</th></tr></thead>
<tbody>${page.items.map((r) => html`<tr><td><time datetime="${r.at}" title="${r.at}">${ago(r.at)}</time></td>
<td><a href="/app/requests/${encodeURIComponent(r.id)}">${r.method} ${r.path}</a><br><small class="muted">${r.surface === 'rest' ? '' : `${r.surface.toUpperCase()} · `}${r.id}</small></td>
<td>${statusBadge(r.status)}${r.error_code ? html` <code>${r.error_code}</code>` : ''}</td><td>${r.route ? html`<code>${r.route}</code>` : ''}</td>
<td class="num">${r.duration_ms}</td><td>${r.key_prefix ? html`<code>${r.key_prefix}…</code>` : ''}</td></tr>`)}</tbody>
</table></div>
${page.items.length ? '' : html`<p>No requests match.</p>`}
${next ? html`<p><a href="${next}">Older requests</a></p>` : ''}`));
    });

    router.get('/app/requests/:id', async (req, res) => {
      const who = await shell.signed(req, res);
      if (!who) return;
      try {
        const r = await log.get(who.org.id, String(req.params.id));
        res.type('html').send(shell.page(who, '/app/requests', `Request ${r.id}`, detailView(r)));
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code !== 'not_found') throw err;
        res.status(404).type('html').send(shell.page(who, '/app/requests', 'Request not found', html`<h1>Request not found</h1>
<p>No request of your keys has that id. An entry appears about a second after its answer, and is kept ${shell.services.config.requestLog.days} days.</p>
<p><a href="/app/requests">All requests</a></p>`));
      }
    });
  },
};
