/**
 * The reconciliation of a period per company and product, as `billing_reconciliation` answers it:
 * sortable and filterable (links and a GET form, no script needed), the period's totals, the partner
 * minimums with their shortfall, the unresolved rows, and the CSV download (the operation's own CSV).
 * What fixes a row is an action on a page (docs/architecture.md, Connect sessions and console), never an API path: a quantity that
 * differs opens its charge, an unmatched customer opens the identity match for that customer; what only
 * the ISV or the PSA can change is said in those words.
 */
import { html, type SafeHtml } from '../../pages/html';
import { reconciliationCsv } from '../../billing/reconciliation-csv';
import { monthPeriod } from '../../billing/sandbox-billing';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { money, qty } from '../ui';

interface Row {
  company: { name: string | null; source_id: string | null }; product: { name: string | null; source_id: string | null; isv_product_refs: string[] };
  agreement_source_id: string | null; line_source_ids: string[]; isv_billable_quantity: number | null; agreement_quantity: number | null; unit_price: number | null;
  subscription_quantity: number | null; isv_cost: number; distributor_cost: number; msp_cost: number; revenue: number; margin: number; differences: string[];
}
interface Report {
  reconciliation: Row[]; period_start: string; period_end: string; currencies: string[];
  partner_minimums: { product_name: string | null; product_source_id: string; minimum_amount: number; reported_cost: number; shortfall: number; currency: string }[];
  unresolved: Unresolved[];
  totals: Record<string, number>;
}

interface Unresolved { isv_id: string; external_customer_ref: string; product_source_id: string; billable_quantity: number; msp_cost_extended: number; reason: string }
interface ChargeRef { id: string; agreement_source_id: string; line_source_id: string; status: string }

const COLUMNS: { key: string; label: string; num?: boolean; value(r: Row): string | number | null }[] = [
  { key: 'company', label: 'Company', value: (r) => r.company.name },
  { key: 'product', label: 'Product', value: (r) => r.product.name ?? r.product.source_id },
  { key: 'isv', label: 'ISV quantity', num: true, value: (r) => r.isv_billable_quantity },
  { key: 'agreement', label: 'Agreement line', num: true, value: (r) => r.agreement_quantity },
  { key: 'subscription', label: 'Distributor subscription', num: true, value: (r) => r.subscription_quantity },
  { key: 'cost', label: 'Cost', num: true, value: (r) => r.msp_cost },
  { key: 'revenue', label: 'Revenue', num: true, value: (r) => r.revenue },
  { key: 'margin', label: 'Margin', num: true, value: (r) => r.margin },
];

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function periodOf(ctx: PageContext): { start: string; end: string } {
  const q = ctx.req.query;
  const month = monthPeriod(0);
  return { start: DAY.test(String(q.period_start)) ? String(q.period_start) : month.start, end: DAY.test(String(q.period_end)) ? String(q.period_end) : month.end };
}

async function reportOf(ctx: PageContext, format?: 'csv'): Promise<Report> {
  const p = periodOf(ctx);
  return ctx.run<Report>('billing_reconciliation', { query: { period_start: p.start, period_end: p.end, limit: 500, ...(format ? { format } : {}) } });
}

function cellOf(c: (typeof COLUMNS)[number], r: Row): SafeHtml {
  const v = c.value(r);
  if (!c.num) return html`<td data-label="${c.label}">${v ?? '—'}</td>`;
  const text = c.key === 'cost' || c.key === 'revenue' || c.key === 'margin' ? money(v as number) : qty(v as number | null);
  return html`<td data-label="${c.label}" class="num${c.key === 'margin' && (v as number) < 0 ? ' neg' : ''}">${text}</td>`;
}

/** What fixes a row with differences: its charge, or who changes what. */
function rowFix(r: Row, charges: ChargeRef[]): SafeHtml {
  const charge = r.differences.includes('isv_vs_agreement')
    ? charges.find((c) => c.agreement_source_id === r.agreement_source_id && r.line_source_ids.includes(c.line_source_id) && (c.status === 'pending' || c.status === 'approving'))
      ?? charges.find((c) => c.agreement_source_id === r.agreement_source_id && r.line_source_ids.includes(c.line_source_id))
    : undefined;
  const say: SafeHtml[] = [];
  if (charge) say.push(html`<a href="/console/charges#ch-${charge.id}">Open the charge${charge.status === 'dismissed' ? ' (dismissed)' : charge.status === 'approved' ? ' (approved)' : ''}</a>`);
  else if (r.differences.includes('isv_vs_agreement')) say.push(html`<span class="hint">No charge for it: the line is billed as reported in a later period, or another ISV's figures share the line.</span>`);
  if (r.differences.includes('subscription_vs_agreement')) say.push(html`<span class="hint">Change the subscription at the distributor or the agreement line in your PSA.</span>`);
  if (r.differences.includes('not_billed')) say.push(html`<span class="hint">No agreement line bills it: add a line to the company's agreement in your PSA.</span>`);
  return html`${say.map((x) => html` ${x}`)}`;
}

/** What fixes an unresolved cost row, as an action on a page or in words: never an API path. */
function unresolvedFix(u: Unresolved, isvName: string): SafeHtml {
  if (u.reason === 'customer_unmatched') {
    const find = `/console/identity/find?${new URLSearchParams({ isv: u.isv_id, side: 'isv_customer', id: u.external_customer_ref })}`;
    return html`We do not know which of your PSA companies this customer is. <a href="${find}">Match customer ${u.external_customer_ref}…</a>`;
  }
  if (u.reason === 'product_unmapped') {
    return html`${isvName} has not paired product ${u.product_source_id} with a line of this customer's agreements. ${isvName} pairs it; check on the <a href="/console/identity?isv=${encodeURIComponent(u.isv_id)}">identity page</a> that the customer is matched with the right company.`;
  }
  if (u.reason === 'agreement_inactive') {
    return html`The agreement line it is paired with is not active, or has ended. Renew the agreement or the line in your PSA, or ask ${isvName} to pair the product with a running line.`;
  }
  return html`${u.reason.replace(/_/g, ' ')}`;
}

export function registerReconciliation(routes: ConsoleRoutes): void {
  routes.get('/console/reconciliation', async (ctx) => {
    const report = await reportOf(ctx);
    const charges = report.reconciliation.some((r) => r.differences.includes('isv_vs_agreement'))
      ? (await ctx.run<{ charges: ChargeRef[] }>('list_charges', { query: { limit: 500 } })).charges : [];
    const isvNames = report.unresolved.length
      ? new Map((await ctx.run<{ grants: { isv_id: string; isv_name: string }[] }>('list_grants', { query: { limit: 500 } })).grants.map((g) => [g.isv_id, g.isv_name]))
      : new Map<string, string>();
    const q = ctx.req.query;
    const filter = String(q.q ?? '').trim().toLowerCase().slice(0, 100);
    const onlyDiff = q.only === 'differences';
    const sortKey = COLUMNS.some((c) => c.key === q.sort) ? String(q.sort) : 'company';
    const desc = q.dir === 'desc';
    const col = COLUMNS.find((c) => c.key === sortKey)!;
    const rows = report.reconciliation
      .filter((r) => !filter || `${r.company.name ?? ''} ${r.product.name ?? ''} ${r.product.source_id ?? ''}`.toLowerCase().includes(filter))
      .filter((r) => !onlyDiff || r.differences.length > 0)
      .sort((a, b) => {
        const x = col.value(a); const y = col.value(b);
        const cmp = typeof x === 'number' || typeof y === 'number' ? (Number(x ?? -Infinity) - Number(y ?? -Infinity)) : String(x ?? '').localeCompare(String(y ?? ''));
        return desc ? -cmp : cmp;
      });
    const p = { period_start: report.period_start, period_end: report.period_end };
    const link = (extra: Record<string, string>) => `/console/reconciliation?${new URLSearchParams({ ...p, ...(filter ? { q: filter } : {}), ...(onlyDiff ? { only: 'differences' } : {}), sort: sortKey, dir: desc ? 'desc' : 'asc', ...extra })}`;
    const t = report.totals;
    ctx.send('/console/reconciliation', 'Reconciliation', html`<h1>Reconciliation</h1>
<p class="lead">Per company and product for ${report.period_start} to ${report.period_end}: what your vendors report, what your agreements bill, what the distributor subscribes, and the margin.</p>
<form method="get" action="/console/reconciliation" class="card filters">
<div class="row">
<div><label for="period_start">From</label><input type="text" inputmode="numeric" id="period_start" name="period_start" value="${report.period_start}" pattern="\\d{4}-\\d{2}-\\d{2}"></div>
<div><label for="period_end">To</label><input type="text" inputmode="numeric" id="period_end" name="period_end" value="${report.period_end}" pattern="\\d{4}-\\d{2}-\\d{2}"></div>
<div><label for="q">Company or product</label><input type="search" id="q" name="q" value="${filter}"></div>
</div>
<label class="check" for="only"><input type="checkbox" id="only" name="only" value="differences"${onlyDiff ? html` checked` : ''}> Only rows where the figures differ</label>
<input type="hidden" name="sort" value="${sortKey}"><input type="hidden" name="dir" value="${desc ? 'desc' : 'asc'}">
<div class="row"><button type="submit">Show</button> <a class="button secondary" href="/console/reconciliation.csv?${new URLSearchParams(p).toString()}" download>Download CSV</a></div>
</form>
<section aria-labelledby="totals"><h2 id="totals">Totals of the period</h2>
<dl class="facts totals">
<dt>Cost</dt><dd data-total="msp_cost">${money(t.msp_cost)}</dd><dt>Revenue</dt><dd data-total="revenue">${money(t.revenue)}</dd>
<dt>Margin</dt><dd data-total="margin">${money(t.margin)}</dd><dt>Partner-minimum shortfall</dt><dd data-total="partner_minimum_shortfall">${money(t.partner_minimum_shortfall)}</dd>
<dt>Margin after minimums</dt><dd data-total="margin_after_minimums">${money(t.margin_after_minimums)}</dd><dt>Unresolved cost</dt><dd data-total="unresolved_isv_cost">${money(t.unresolved_isv_cost)}</dd>
</dl>${report.currencies.length ? html`<p class="muted">Currencies: ${report.currencies.join(', ')} (not converted).</p>` : ''}</section>
<h2>Per company and product (${rows.length} of ${report.reconciliation.length})</h2>
<div class="table-wrap" tabindex="0"><table class="recon phone-cards"><caption class="visually-hidden">Reconciliation rows, sorted by ${col.label}${desc ? ', descending' : ''}</caption>
<thead><tr>${COLUMNS.map((c) => html`<th scope="col"${c.num ? html` class="num"` : ''}${c.key === sortKey ? html` aria-sort="${desc ? 'descending' : 'ascending'}"` : ''}><a href="${link({ sort: c.key, dir: c.key === sortKey && !desc ? 'desc' : 'asc' })}">${c.label}</a></th>`)}<th scope="col">Differences</th></tr></thead>
<tbody>${rows.map((r) => html`<tr>${COLUMNS.map((c) => cellOf(c, r))}<td data-label="Differences">${r.differences.map((d) => html`<span class="badge warn">${d.replace(/_/g, ' ')}</span> `)}${r.differences.length ? rowFix(r, charges) : ''}</td></tr>`)}</tbody>
</table></div>
<h2>Partner minimums</h2>
${report.partner_minimums.length ? html`<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Product</th><th scope="col" class="num">Minimum</th><th scope="col" class="num">Reported cost</th><th scope="col" class="num">Shortfall</th></tr></thead>
<tbody>${report.partner_minimums.map((m) => html`<tr><td>${m.product_name ?? m.product_source_id}</td><td class="num">${money(m.minimum_amount)} ${m.currency}</td><td class="num">${money(m.reported_cost)}</td><td class="num">${m.shortfall > 0 ? html`<span class="badge bad">${money(m.shortfall)}</span>` : money(0)}</td></tr>`)}</tbody></table></div>` : html`<p class="muted">None in this period.</p>`}
<h2>Unresolved rows (${report.unresolved.length})</h2>
${report.unresolved.length ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Unresolved rows"><table class="unresolved phone-cards"><caption class="visually-hidden">Cost rows that land on no agreement line, with what fixes each</caption><thead><tr><th scope="col">Customer</th><th scope="col">Product</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Cost</th><th scope="col">Why, and what fixes it</th></tr></thead>
<tbody>${report.unresolved.map((u) => html`<tr data-reason="${u.reason}"><td data-label="Customer">${u.external_customer_ref}${isvNames.size > 1 ? html`<br><span class="muted">${isvNames.get(u.isv_id) ?? ''}</span>` : ''}</td><td data-label="Product">${u.product_source_id}</td><td data-label="Quantity" class="num">${qty(u.billable_quantity)}</td><td data-label="Cost" class="num">${money(u.msp_cost_extended)}</td><td data-label="Why, and what fixes it"><span class="badge warn">${u.reason.replace(/_/g, ' ')}</span> ${unresolvedFix(u, isvNames.get(u.isv_id) ?? 'The ISV')}</td></tr>`)}</tbody></table></div>` : html`<p class="muted">Every row landed.</p>`}`);
  });

  routes.get('/console/reconciliation.csv', async (ctx) => {
    const report = await reportOf(ctx, 'csv');
    ctx.res.setHeader('Content-Disposition', `attachment; filename="reconciliation-${report.period_start}-${report.period_end}.csv"`);
    ctx.res.type('text/csv; charset=utf-8').send(reconciliationCsv(report as never));
  });
}
