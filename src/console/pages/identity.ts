/**
 * Identity per ISV: the matched pairs, and each leftover with its candidates and the actions the
 * operation says it really has now (`identity_unmapped`: match, import only with an import endpoint,
 * skip, unset). Singly or in bulk, every decision is previewed before anything is written: the plan
 * (and for an import the operation's own preview of the requests), then a confirm form that runs
 * `identity_match`, `identity_skip`, `identity_unset` or `identity_import` per item.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ServiceError } from '../../errors/service-error';
import { field, fieldList } from '../../pages/forms';
import { html, type SafeHtml } from '../../pages/html';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { csrfField, notice } from '../ui';

type Side = 'psa_company' | 'isv_customer';
type Action = 'match' | 'import' | 'skip' | 'unset';
interface Candidate { side: Side; id: string; connection_id: string | null; name: string }
interface Leftover extends Candidate { state: 'needs_match' | 'skipped'; candidates: Candidate[]; actions: Action[] }
interface Mapping { customer_ref: string; customer_name: string | null; company_source_id: string; company_name: string | null; how: string; decided_by: string; decided_at: string }

/** One planned decision: the action, the row and (for a match) the candidate. */
interface Item { action: Action; row: Candidate; with?: Candidate }

const ACTION_WORDS: Record<Action, string> = {
  match: 'Match', import: 'Import into the ISV', skip: 'Skip', unset: 'Back to Needs match',
};
const keyOf = (c: Candidate) => JSON.stringify([c.side, c.connection_id, c.id]);
const sideWords = (s: Side) => (s === 'psa_company' ? 'PSA company' : 'ISV customer');

async function isvsOf(ctx: PageContext): Promise<[string, string][]> {
  const rows = (await ctx.run<{ grants: { isv_id: string; isv_name: string }[] }>('list_grants', { query: { limit: 500 } })).grants;
  return [...new Map(rows.map((r) => [r.isv_id, r.isv_name])).entries()];
}

async function leftovers(ctx: PageContext, isvId: string): Promise<Leftover[]> {
  return (await ctx.run<{ unmapped: Leftover[] }>('identity_unmapped', { query: { isv_id: isvId, limit: 500 } })).unmapped;
}

/** The subject of skip and unset: the customer's ref, or the company's id on its connection. */
function subject(row: Candidate) {
  return row.side === 'isv_customer' ? { customer_ref: row.id } : { company_source_id: row.id, connection_id: row.connection_id };
}

function matchBody(item: Item) {
  const [customer, company] = item.row.side === 'isv_customer' ? [item.row, item.with!] : [item.with!, item.row];
  return { customer_ref: customer.id, company_source_id: company.id, connection_id: company.connection_id };
}

function describe(item: Item): SafeHtml {
  if (item.action === 'match') return html`Match ${sideWords(item.row.side)} <strong>${item.row.name}</strong> with ${sideWords(item.with!.side)} <strong>${item.with!.name}</strong> <span class="muted">(${item.with!.id})</span>`;
  return html`${ACTION_WORDS[item.action]}: ${sideWords(item.row.side)} <strong>${item.row.name}</strong> <span class="muted">(${item.row.id})</span>`;
}

/** The items a submitted form asks for, checked against what each leftover offers now. */
function planOf(ctx: PageContext, rows: Leftover[]): { items: Item[]; problems: string[] } {
  const byKey = new Map(rows.map((r) => [keyOf(r), r]));
  const single = field(ctx.form, 'single');
  const [action, keys] = single
    ? [single.slice(0, single.indexOf(' ')) as Action, [single.slice(single.indexOf(' ') + 1)]]
    : [field(ctx.form, 'action') as Action, fieldList(ctx.form, 'row')];
  const items: Item[] = [];
  const problems: string[] = [];
  if (!keys.length) problems.push('Tick at least one row, or use the buttons of one row.');
  for (const k of keys) {
    const row = byKey.get(k);
    if (!row) { problems.push('A row you chose is no longer a leftover (someone decided it meanwhile).'); continue; }
    if (!row.actions.includes(action)) { problems.push(`${row.name}: ${ACTION_WORDS[action] ?? action} is not available for this row (it offers ${row.actions.map((a) => ACTION_WORDS[a]).join(', ')}).`); continue; }
    if (action === 'match') {
      const chosen = field(ctx.form, `with:${k}`);
      const cand = row.candidates.find((c) => keyOf(c) === chosen);
      if (!cand) { problems.push(`${row.name}: choose whom to match it with.`); continue; }
      items.push({ action, row, with: cand });
    } else items.push({ action, row });
  }
  return { items, problems };
}

function leftoverRow(r: Leftover): SafeHtml {
  const k = keyOf(r);
  const id = `r-${createHash('sha256').update(k).digest('hex').slice(0, 16)}`;
  return html`<tr>
<td><input type="checkbox" name="row" value="${k}" id="${id}" aria-label="Select ${r.name}"></td>
<th scope="row"><label for="${id}">${r.name}</label><br><span class="muted">${sideWords(r.side)} · ${r.id}</span></th>
<td>${r.state === 'skipped' ? html`<span class="badge warn">skipped</span>` : html`<span class="badge info">needs match</span>`}</td>
<td>${r.candidates.length ? html`<label class="visually-hidden" for="w-${id}">Match ${r.name} with</label><select id="w-${id}" name="with:${k}">${r.candidates.map((c) => html`<option value="${keyOf(c)}">${c.name} (${c.id})</option>`)}</select>` : html`<span class="muted">no candidate of the same name</span>`}</td>
<td><div class="row">${r.actions.filter((a) => a !== 'match' || r.candidates.length).map((a) => html`<button type="submit" name="single" value="${a} ${k}" class="secondary">${ACTION_WORDS[a]}…</button>`)}</div></td>
</tr>`;
}

export function registerIdentity(routes: ConsoleRoutes): void {
  routes.get('/console/identity', async (ctx) => {
    const isvs = await isvsOf(ctx);
    const isvId = isvs.some(([id]) => id === ctx.req.query.isv) ? String(ctx.req.query.isv) : isvs[0]?.[0];
    if (!isvId) return ctx.send('/console/identity', 'Identity', html`<h1>Identity</h1><p>No ISV has access to this tenant yet.</p>`);
    const rows = await leftovers(ctx, isvId);
    const matched = (await ctx.run<{ mappings: Mapping[] }>('identity_mappings', { query: { isv_id: isvId, limit: 500 } })).mappings;
    const done = Number(ctx.req.query.done);
    const needs = rows.filter((r) => r.state === 'needs_match');
    const skipped = rows.filter((r) => r.state === 'skipped');
    const actions = [...new Set(rows.flatMap((r) => r.actions))];
    const table = (list: Leftover[], caption: string) => html`<div class="table-wrap" tabindex="0"><table class="phone-cards"><caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Candidates</th><th scope="col">Actions</th></tr></thead>
<tbody>${list.map((r) => leftoverRow(r))}</tbody></table></div>`;
    ctx.send('/console/identity', 'Identity', html`<h1>Identity</h1>
${done > 0 ? notice('ok', `${done} ${done === 1 ? 'decision was' : 'decisions were'} recorded.`) : ''}
<p class="lead">Which of the ISV's customers is which of your PSA companies. Same names were matched automatically; the rest wait for you. Every decision is shown to you before it is written.</p>
${isvs.length > 1 ? html`<form method="get" action="/console/identity" class="row"><label for="isv">ISV</label><select id="isv" name="isv">${isvs.map(([id, name]) => html`<option value="${id}"${id === isvId ? html` selected` : ''}>${name}</option>`)}</select><button type="submit">Show</button></form>` : html`<p>ISV: <strong>${isvs[0]![1]}</strong></p>`}
<form method="post" action="/console/identity/preview">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}">
<h2>Needs match (${needs.length})</h2>${needs.length ? table(needs, 'Leftovers that need a match') : html`<p>Nothing waits for a match.</p>`}
${skipped.length ? html`<h2>Skipped (${skipped.length})</h2>${table(skipped, 'Skipped leftovers')}` : ''}
<fieldset><legend>With the ticked rows</legend><div class="row">${actions.map((a) => html`<button type="submit" name="action" value="${a}">${ACTION_WORDS[a]}…</button>`)}</div>
<p class="hint">A match uses the candidate chosen on each row. Import is offered only when the ISV has an import endpoint.</p></fieldset>
</form>
<h2>Matched (${matched.length})</h2>
<div class="table-wrap" tabindex="0"><table><caption class="visually-hidden">Matched pairs</caption><thead><tr><th scope="col">ISV customer</th><th scope="col">PSA company</th><th scope="col">How</th><th scope="col">Decided by</th></tr></thead>
<tbody>${matched.map((m) => html`<tr><td>${m.customer_name ?? m.customer_ref}</td><td>${m.company_name ?? m.company_source_id}</td><td>${m.how.replace(/_/g, ' ')}</td><td>${m.decided_by}</td></tr>`)}</tbody></table></div>`);
  });

  routes.post('/console/identity/preview', async (ctx) => {
    const isvId = field(ctx.form, 'isv_id');
    const { items, problems } = planOf(ctx, await leftovers(ctx, isvId));
    const imports = items.filter((i) => i.action === 'import');
    const importPreview = imports.length
      ? await ctx.run<{ preview: { targets: { requests: { method: string; path: string; body?: unknown }[] }[] } }>('identity_import', { body: { isv_id: isvId, company_source_ids: imports.map((i) => i.row.id), dry_run: true } })
      : null;
    ctx.send('/console/identity', 'Identity: preview', html`<h1>Preview</h1>
${notice('info', 'Nothing has been written yet.')}
${problems.length ? notice('warn', html`<ul>${problems.map((p) => html`<li>${p}</li>`)}</ul>`) : ''}
${items.length ? html`<p class="lead">Confirm to record ${items.length === 1 ? 'this decision' : `these ${items.length} decisions`}:</p><ul class="plan">${items.map((i) => html`<li>${describe(i)}</li>`)}</ul>
${importPreview ? html`<h2>Sent to the ISV's import endpoint</h2>${importPreview.preview.targets.flatMap((t) => t.requests).map((r) => html`<p><code>${r.method} ${r.path}</code></p><pre class="request" tabindex="0" aria-label="Request body">${JSON.stringify(r.body ?? null, null, 2)}</pre>`)}` : ''}
<form method="post" action="/console/identity/apply" class="row">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}"><input type="hidden" name="idempotency_key" value="${randomUUID()}">
${items.map((i) => html`<input type="hidden" name="item" value="${JSON.stringify([i.action, i.row, i.with ?? null])}">`)}
<button type="submit">Confirm</button><a href="/console/identity?isv=${isvId}">Cancel</a></form>` : html`<p><a href="/console/identity?isv=${isvId}">Back to identity</a></p>`}`);
  });

  routes.post('/console/identity/apply', async (ctx) => {
    const isvId = field(ctx.form, 'isv_id');
    let items: Item[];
    try {
      items = fieldList(ctx.form, 'item').slice(0, 1000).map((v) => {
        const [action, row, withCand] = JSON.parse(v) as [Action, Candidate, Candidate | null];
        return { action, row, with: withCand ?? undefined };
      });
    } catch {
      throw new ServiceError('validation', 'The confirmed plan could not be read; preview the decisions again.');
    }
    const imports = items.filter((i) => i.action === 'import');
    for (const item of items) {
      if (item.action === 'match') await ctx.run('identity_match', { body: { ...matchBody(item), isv_id: isvId } });
      if (item.action === 'skip') await ctx.run('identity_skip', { body: { ...subject(item.row), isv_id: isvId } });
      if (item.action === 'unset') await ctx.run('identity_unset', { body: { ...subject(item.row), isv_id: isvId } });
    }
    if (imports.length) {
      await ctx.run('identity_import', { body: { isv_id: isvId, company_source_ids: imports.map((i) => i.row.id), dry_run: false, idempotency_key: field(ctx.form, 'idempotency_key') } });
    }
    ctx.res.redirect(303, `/console/identity?isv=${encodeURIComponent(isvId)}&done=${items.length}`);
  });
}
