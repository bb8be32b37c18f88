/**
 * Charges as cards: the agreement and line, the current and proposed quantity, the price, the cost rows
 * behind it. Approve, dismiss and restore each run their operation twice: first as a preview (the exact
 * PSA request of an approval; the status change of a dismissal or restore), then, when the person
 * confirms, as a commit under the idempotency key the preview page carried (a double submit is a replay).
 */
import { randomUUID } from 'node:crypto';
import { connectorTitle } from '../../connectors/registry';
import { field } from '../../pages/forms';
import { html, type SafeHtml } from '../../pages/html';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { csrfField, money, qty } from '../ui';
import { notice } from '../../pages/notice';

interface Charge {
  id: string; agreement_source_id: string; line_source_id: string; connector: string;
  company: { name: string | null }; product: { name: string | null; source_id: string | null };
  current_quantity: number | null; proposed_quantity: number; unit_price: number | null;
  period: { start: string; end: string }; cost_rows: string[]; status: string; decided_at: string | null;
}
interface CostRow { id: string; external_customer_ref: string; product_source_id: string; product_name: string | null; billable_quantity: number; msp_cost_extended: number; currency: string; isv_id: string }
interface VendorRequest { method: string; path: string; body?: unknown }

const DECISIONS = {
  approve: { op: 'approve_charge', verb: 'Approve', past: 'approved', says: 'The agreement line at your PSA gets the proposed quantity.' },
  dismiss: { op: 'dismiss_charge', verb: 'Dismiss', past: 'dismissed', says: 'The charge is set aside. Nothing is sent to your PSA; you can restore it later.' },
  restore: { op: 'restore_charge', verb: 'Restore', past: 'restored', says: 'The charge is pending again, to approve or dismiss. Nothing is sent to your PSA.' },
} as const;
type Decision = keyof typeof DECISIONS;

function decisionForm(ctx: PageContext, c: Charge, d: Decision, label: string, commitKey?: string): SafeHtml {
  return html`<form method="post" action="/console/charges/${c.id}/${d}">${csrfField(ctx.session)}${commitKey ? html`<input type="hidden" name="commit" value="1"><input type="hidden" name="idempotency_key" value="${commitKey}">` : ''}<button type="submit"${d === 'dismiss' && !commitKey ? html` class="secondary"` : ''}>${label}</button></form>`;
}

function card(ctx: PageContext, c: Charge, rows: Map<string, CostRow>): SafeHtml {
  const change = c.current_quantity == null ? null : c.proposed_quantity - c.current_quantity;
  const statusBadge = c.status === 'dismissed' ? html`<span class="badge warn">dismissed</span>` : c.status === 'approved' ? html`<span class="badge ok">approved</span>` : html`<span class="badge info">pending</span>`;
  return html`<article class="card charge" aria-labelledby="ch-${c.id}">
<h3 id="ch-${c.id}">${c.company.name ?? 'Unknown company'}: ${c.product.name ?? c.product.source_id ?? 'product'} ${statusBadge}</h3>
<dl class="facts">
<dt>Agreement / line</dt><dd>${c.agreement_source_id} / ${c.line_source_id} <span class="muted">(${connectorTitle(c.connector)})</span></dd>
<dt>Quantity</dt><dd><span data-field="current">${qty(c.current_quantity)}</span> → <strong data-field="proposed">${qty(c.proposed_quantity)}</strong>${change == null ? '' : html` <span class="muted">(${change > 0 ? '+' : ''}${qty(change)})</span>`}</dd>
<dt>Unit price</dt><dd>${c.unit_price == null ? '—' : money(c.unit_price)}</dd>
<dt>Period</dt><dd>${c.period.start} to ${c.period.end}</dd>
</dl>
<details><summary>${c.cost_rows.length} cost ${c.cost_rows.length === 1 ? 'row' : 'rows'} behind it</summary><ul>
${c.cost_rows.map((id) => { const r = rows.get(id); return r ? html`<li>${r.external_customer_ref}: ${qty(r.billable_quantity)} × ${r.product_name ?? r.product_source_id}, cost ${money(r.msp_cost_extended)} ${r.currency}</li>` : html`<li><code>${id}</code></li>`; })}
</ul></details>
<div class="row">${c.status === 'pending' || c.status === 'approving'
    ? html`${decisionForm(ctx, c, 'approve', 'Preview approval')}${decisionForm(ctx, c, 'dismiss', 'Dismiss…')}`
    : c.status === 'dismissed' ? decisionForm(ctx, c, 'restore', 'Restore…') : ''}</div>
</article>`;
}

function requestsOf(preview: { preview?: { targets: { connector: string; requests: VendorRequest[] }[] } }): SafeHtml {
  const targets = preview.preview?.targets ?? [];
  return html`${targets.map((t) => t.requests.map((r) => html`<h3>The request to ${connectorTitle(t.connector)}</h3><p><code>${r.method} ${r.path}</code></p>
<pre class="request" tabindex="0" aria-label="Request body">${JSON.stringify(r.body ?? null, null, 2)}</pre>`))}`;
}

export function registerCharges(routes: ConsoleRoutes): void {
  routes.get('/console/charges', async (ctx) => {
    const list = await ctx.run<{ charges: Charge[] }>('list_charges', { query: { limit: 500 } });
    const costs = await ctx.run<{ costs: CostRow[] }>('list_isv_costs', { query: { limit: 500 } });
    const rows = new Map(costs.costs.map((r) => [r.id, r]));
    const done = String(ctx.req.query.done ?? '');
    const pending = list.charges.filter((c) => c.status === 'pending' || c.status === 'approving');
    const dismissed = list.charges.filter((c) => c.status === 'dismissed');
    const approved = list.charges.filter((c) => c.status === 'approved');
    const past = Object.values(DECISIONS).find((d) => d.past === done);
    ctx.send('/console/charges', 'Charges', html`<h1>Charges</h1>
${past ? notice('ok', `The charge was ${past.past}.`) : ''}
<p class="lead">Where what your vendors report differs from what your agreements bill. Approve to bill the reported quantity, or dismiss to leave the agreement as it is.</p>
<h2>Pending (${pending.length})</h2>${pending.length ? html`<div class="cards">${pending.map((c) => card(ctx, c, rows))}</div>` : html`<p>Nothing waits for a decision.</p>`}
<h2>Dismissed (${dismissed.length})</h2>${dismissed.length ? html`<div class="cards">${dismissed.map((c) => card(ctx, c, rows))}</div>` : html`<p class="muted">None.</p>`}
<h2>Approved (${approved.length})</h2>${approved.length ? html`<div class="cards">${approved.map((c) => card(ctx, c, rows))}</div>` : html`<p class="muted">None.</p>`}`);
  });

  routes.post('/console/charges/:id/:decision', async (ctx) => {
    const decision = String(ctx.req.params.decision) as Decision;
    const d = DECISIONS[decision];
    if (!d) return ctx.send('/console/charges', 'Not found', html`<h1>Not found</h1>`, 404);
    const id = String(ctx.req.params.id);
    const commit = field(ctx.form, 'commit') === '1';
    if (commit) {
      await ctx.run(d.op, { path: { charge_id: id }, body: { dry_run: false, idempotency_key: field(ctx.form, 'idempotency_key') } });
      return ctx.res.redirect(303, `/console/charges?done=${d.past}`);
    }
    const preview = await ctx.run<{ charge: Charge; changed?: boolean; change?: { status: { from: string; to: string } } | null; preview?: { targets: { connector: string; requests: VendorRequest[] }[] } }>(
      d.op, { path: { charge_id: id }, body: { dry_run: true } });
    const c = preview.charge;
    ctx.send('/console/charges', `${d.verb} charge`, html`<h1>${d.verb}: preview</h1>
${notice('info', 'Nothing has been changed yet.')}
<p class="lead">${d.says}</p>
<dl class="facts"><dt>Charge</dt><dd>${c.company.name}: ${c.product.name ?? c.product.source_id}</dd>
<dt>Quantity</dt><dd>${qty(c.current_quantity)} → ${qty(c.proposed_quantity)}</dd>
${preview.change ? html`<dt>Status</dt><dd>${preview.change.status.from} → ${preview.change.status.to}</dd>` : ''}</dl>
${decision === 'approve' ? requestsOf(preview) : ''}
${preview.changed === false ? notice('warn', `This charge is already ${d.past}.`) : html`<div class="row">${decisionForm(ctx, c, decision, `${d.verb} now`, randomUUID())}<a href="/console/charges">Cancel</a></div>`}`);
  });
}
