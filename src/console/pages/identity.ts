/**
 * Identity per ISV (docs/architecture.md, Connect sessions and console): the leftovers with their ranked suggestions (`identity_unmapped`,
 * ranked by src/identity/candidates.ts), a search of every PSA company of the tenant for one leftover
 * (`identity_candidates`), and the matched pairs, each of which can be undone. Companies that share a name
 * show what tells them apart (PSA id, identifier, city, phone, web site). Singly or in bulk, every
 * decision is previewed before anything is written: the plan (a match between names that differ says
 * so; an import shows the operation's own preview of its requests), then a confirm form that runs
 * `identity_match`, `identity_skip`, `identity_unset` or `identity_import` per item. Nothing is decided
 * here: the operations rank, check and record.
 */
import { createHash, randomUUID } from 'node:crypto';
import { ServiceError } from '../../errors/service-error';
import { field, fieldList } from '../../pages/forms';
import { html, type SafeHtml } from '../../pages/html';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { csrfField } from '../ui';
import { notice } from '../../pages/notice';

type Side = 'psa_company' | 'isv_customer';
type Action = 'match' | 'import' | 'skip' | 'unset' | 'unmatch';
type Reason = 'external_id' | 'exact_name' | 'normalized_name' | 'domain' | 'phone' | 'similar_name';
interface Candidate { side: Side; id: string; connection_id: string | null; name: string }
interface Ranked extends Candidate {
  score: number; reasons: Reason[]; identifier: string | null; city: string | null; phone: string | null; domain: string | null;
  matched_with: { id: string; connection_id: string | null; name: string | null } | null;
}
interface Leftover extends Candidate { state: 'needs_match' | 'skipped'; candidates: Candidate[]; suggestions: Ranked[]; actions: Exclude<Action, 'unmatch'>[] }
interface Mapping { customer_ref: string; customer_name: string | null; connection_id: string; company_source_id: string; company_name: string | null; how: string; decided_by: string; decided_at: string }
interface Candidates { subject: Ranked | null; candidates: Ranked[] }

/** One planned decision: the action, the row and (for a match or an unmatch) the other side. */
interface Item { action: Action; row: Candidate; with?: Candidate; note?: string }

const ACTION_WORDS: Record<Action, string> = {
  match: 'Match', import: 'Import into the ISV', skip: 'Skip', unset: 'Back to Needs match', unmatch: 'Unmatch',
};
const REASON_WORDS: Record<Reason, string> = {
  external_id: 'the ISV\'s id', exact_name: 'same name', normalized_name: 'same name but for case, punctuation or legal suffix',
  domain: 'same web site', phone: 'same phone', similar_name: 'similar name',
};
/** The most leftovers one page shows (a form carries at most a few hundred fields); a filter narrows them. */
const PAGE_ROWS = 100;

const keyOf = (c: Pick<Candidate, 'side' | 'connection_id' | 'id'>) => JSON.stringify([c.side, c.connection_id, c.id]);
const sideWords = (s: Side) => (s === 'psa_company' ? 'PSA company' : 'ISV customer');
const domId = (prefix: string, k: string) => `${prefix}-${createHash('sha256').update(k).digest('hex').slice(0, 16)}`;
const sameName = (r: Pick<Ranked, 'reasons'>) => r.reasons.includes('exact_name') || r.reasons.includes('normalized_name');

function parseKey(k: string): Pick<Candidate, 'side' | 'connection_id' | 'id'> | null {
  try {
    const [side, connectionId, id] = JSON.parse(k) as [Side, string | null, string];
    if ((side !== 'psa_company' && side !== 'isv_customer') || typeof id !== 'string') return null;
    return { side, connection_id: typeof connectionId === 'string' ? connectionId : null, id };
  } catch {
    return null;
  }
}

/** "Evanston · (847) 555-0112 · lakeshorefamilydental.com": what the record says beside the name. */
function detailsOf(r: Ranked): string {
  return [r.identifier && r.identifier !== r.id ? r.identifier : null, r.city, r.phone, r.domain].filter(Boolean).join(' · ');
}

function why(r: Ranked): string {
  return `${Math.round(r.score * 100)}%: ${r.reasons.map((x) => REASON_WORDS[x]).join(', ')}`;
}

/** The option text of a suggestion: its name and id, why it is offered, and what tells it apart. */
function optionText(r: Ranked): string {
  const details = detailsOf(r);
  return `${r.name} (${r.id}) · ${why(r)}${details ? ` · ${details}` : ''}`;
}

async function isvsOf(ctx: PageContext): Promise<[string, string][]> {
  const rows = (await ctx.run<{ grants: { isv_id: string; isv_name: string }[] }>('list_grants', { query: { limit: 500 } })).grants;
  return [...new Map(rows.map((r) => [r.isv_id, r.isv_name])).entries()];
}

async function chosenIsv(ctx: PageContext, given: unknown): Promise<{ isvs: [string, string][]; isvId: string | undefined }> {
  const isvs = await isvsOf(ctx);
  return { isvs, isvId: isvs.some(([id]) => id === given) ? String(given) : isvs[0]?.[0] };
}

async function leftovers(ctx: PageContext, isvId: string): Promise<Leftover[]> {
  return (await ctx.run<{ unmapped: Leftover[] }>('identity_unmapped', { query: { isv_id: isvId, limit: 500 } })).unmapped;
}

async function mappingsOf(ctx: PageContext, isvId: string): Promise<Mapping[]> {
  return (await ctx.run<{ mappings: Mapping[] }>('identity_mappings', { query: { isv_id: isvId, limit: 500 } })).mappings;
}

/** The subject of skip and unset: the customer's ref, or the company's id on its connection. */
function subject(row: Candidate) {
  return row.side === 'isv_customer' ? { customer_ref: row.id } : { company_source_id: row.id, connection_id: row.connection_id };
}

function matchPair(item: Item): [Candidate, Candidate] {
  return item.row.side === 'isv_customer' ? [item.row, item.with!] : [item.with!, item.row];
}

function matchBody(item: Item) {
  const [customer, company] = matchPair(item);
  return { customer_ref: customer.id, company_source_id: company.id, connection_id: company.connection_id };
}

function describe(item: Item): SafeHtml {
  if (item.action === 'match' || item.action === 'unmatch') {
    const [customer, company] = matchPair(item);
    return html`${ACTION_WORDS[item.action]} ISV customer <strong>${customer.name}</strong> <span class="muted">(${customer.id})</span> ${item.action === 'match' ? 'with' : 'from'} PSA company <strong>${company.name}</strong> <span class="muted">(${company.id})</span>${item.note ? html`<br><span class="hint">${item.note}</span>` : ''}`;
  }
  return html`${ACTION_WORDS[item.action]}: ${sideWords(item.row.side)} <strong>${item.row.name}</strong> <span class="muted">(${item.row.id})</span>`;
}

/**
 * The other side of a match as identity_candidates scores it now: a suggestion of the row, or (found by
 * search) the pair scored by the operation. Answers the candidate and a note, or a problem.
 */
async function matchTarget(ctx: PageContext, isvId: string, row: Leftover, chosen: string): Promise<{ with: Ranked; note?: string } | string> {
  const key = parseKey(chosen);
  if (!key || key.side === row.side) return `${row.name}: choose whom to match it with.`;
  let found = row.suggestions.find((s) => keyOf(s) === chosen);
  if (!found) {
    // Found by search: the operation scores the pair, from the customer's side.
    const [customerRef, company] = row.side === 'isv_customer' ? [row.id, key] : [key.id, row];
    let pair: Candidates;
    try {
      pair = await ctx.run<Candidates>('identity_candidates', { query: { isv_id: isvId, customer_ref: customerRef, company_source_id: company.id, connection_id: company.connection_id } });
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return `${row.name}: the ${sideWords(key.side)} chosen no longer exists.`;
      throw err;
    }
    const scored = pair.candidates[0];
    found = row.side === 'isv_customer' ? scored : pair.subject && scored ? { ...pair.subject, score: scored.score, reasons: scored.reasons } : undefined;
  }
  if (!found) return `${row.name}: choose whom to match it with.`;
  if (found.matched_with) return `${found.name} is matched with ${found.matched_with.name ?? found.matched_with.id} already: unmatch that first (Matched, below).`;
  const note = sameName(found) ? undefined
    : found.reasons.length ? `The names differ (${why(found)}): check that this is the same company.`
      : 'Nothing but your choice ties these two: check that this is the same company.';
  return { with: found, note };
}

/** The items a submitted form asks for, checked against what each row offers now. */
async function planOf(ctx: PageContext, isvId: string): Promise<{ items: Item[]; problems: string[] }> {
  const single = field(ctx.form, 'single');
  const [action, keys] = single
    ? [single.slice(0, single.indexOf(' ')) as Action, [single.slice(single.indexOf(' ') + 1)]]
    : [field(ctx.form, 'action') as Action, fieldList(ctx.form, 'row').slice(0, PAGE_ROWS)];
  const items: Item[] = [];
  const problems: string[] = [];
  if (!keys.length) problems.push('Tick at least one row, or use the buttons of one row.');
  if (action === 'unmatch') {
    const matched = await mappingsOf(ctx, isvId);
    for (const ref of keys) {
      const m = matched.find((x) => x.customer_ref === ref);
      if (!m) { problems.push(`Customer ${ref} is not matched (anymore).`); continue; }
      items.push({
        action, row: { side: 'isv_customer', id: m.customer_ref, connection_id: null, name: m.customer_name ?? m.customer_ref },
        with: { side: 'psa_company', id: m.company_source_id, connection_id: m.connection_id, name: m.company_name ?? m.company_source_id },
        note: 'Both go back to Needs match, to be matched again as you choose.',
      });
    }
    return { items, problems };
  }
  const rows = await leftovers(ctx, isvId);
  const byKey = new Map(rows.map((r) => [keyOf(r), r]));
  const picked = field(ctx.form, 'pick');
  for (const k of keys) {
    const row = byKey.get(k);
    if (!row) { problems.push('A row you chose is no longer a leftover (someone decided it meanwhile).'); continue; }
    if (!(row.actions as Action[]).includes(action)) { problems.push(`${row.name}: ${ACTION_WORDS[action] ?? action} is not available for this row (it offers ${row.actions.map((a) => ACTION_WORDS[a]).join(', ')}).`); continue; }
    if (action !== 'match') { items.push({ action, row }); continue; }
    const target = await matchTarget(ctx, isvId, row, picked || field(ctx.form, `with:${k}`));
    if (typeof target === 'string') { problems.push(target); continue; }
    items.push({ action, row, with: target.with, note: target.note });
  }
  // One company (or customer) for two rows cannot be: the second would be refused.
  const seen = new Set<string>();
  for (const i of items.filter((x) => x.action === 'match')) {
    const k = keyOf(i.with!);
    if (seen.has(k)) { problems.push(`${i.with!.name} is chosen for more than one row: a company matches one customer.`); items.splice(items.indexOf(i), 1); }
    seen.add(k);
  }
  return { items, problems };
}

function findLink(isvId: string, r: Candidate): string {
  const q = new URLSearchParams({ isv: isvId, side: r.side, id: r.id, ...(r.connection_id ? { connection: r.connection_id } : {}) });
  return `/console/identity/find?${q}`;
}

function leftoverRow(isvId: string, r: Leftover): SafeHtml {
  const k = keyOf(r);
  const id = domId('r', k);
  const other = r.side === 'isv_customer' ? 'PSA company' : 'ISV customer';
  const offers = r.actions.filter((a) => a !== 'match' || r.suggestions.length);
  return html`<tr>
<td data-label="Select"><input type="checkbox" name="row" value="${k}" id="${id}" aria-label="Select ${r.name}"></td>
<th scope="row"><label for="${id}">${r.name}</label><br><span class="muted">${sideWords(r.side)} · ${r.id}</span></th>
<td data-label="State">${r.state === 'skipped' ? html`<span class="badge warn">skipped</span>` : html`<span class="badge info">needs match</span>`}</td>
<td data-label="Best candidates">${r.suggestions.length
    ? html`<label class="visually-hidden" for="w-${id}">Match ${r.name} with</label><select id="w-${id}" name="with:${k}">${r.suggestions.map((c) => html`<option value="${keyOf(c)}">${optionText(c)}</option>`)}</select>`
    : html`<span class="muted">No ${other} looks like it.</span>`}
${r.actions.includes('match') ? html`<br><a href="${findLink(isvId, r)}">Find another ${other}…</a>` : ''}</td>
<td data-label="Actions"><div class="row">${offers.map((a) => html`<button type="submit" name="single" value="${a} ${k}" class="secondary">${ACTION_WORDS[a]}…</button>`)}</div></td>
</tr>`;
}

function isvPicker(isvs: [string, string][], isvId: string, action: string, extra: SafeHtml | string = ''): SafeHtml {
  return isvs.length > 1
    ? html`<form method="get" action="${action}" class="row">${extra}<div><label for="isv">ISV</label><select id="isv" name="isv">${isvs.map(([id, name]) => html`<option value="${id}"${id === isvId ? html` selected` : ''}>${name}</option>`)}</select></div><button type="submit">Show</button></form>`
    : html`<p>ISV: <strong>${isvs[0]![1]}</strong></p>`;
}

export function registerIdentity(routes: ConsoleRoutes): void {
  routes.get('/console/identity', identityPage);
  routes.get('/console/identity/find', findPage);
  routes.post('/console/identity/preview', previewPage);
  routes.post('/console/identity/apply', applyDecisions);
}

/** The leftovers that need a match or were skipped, with their best candidates, and the matched pairs. */
async function identityPage(ctx: PageContext): Promise<void> {
  const { isvs, isvId } = await chosenIsv(ctx, ctx.req.query.isv);
  if (!isvId) return ctx.send('/console/identity', 'Identity', html`<h1>Identity</h1><p>No ISV has access to this tenant yet.</p>`);
  const all = await leftovers(ctx, isvId);
  const matched = await mappingsOf(ctx, isvId);
  const filter = String(ctx.req.query.q ?? '').trim().slice(0, 100);
  const rows = filter ? all.filter((r) => `${r.name} ${r.id}`.toLowerCase().includes(filter.toLowerCase())) : all;
  const done = Number(ctx.req.query.done);
  // Customers first: they are what an ISV's requests name.
  const bySide = (a: Leftover, b: Leftover) => (a.side === b.side ? 0 : a.side === 'isv_customer' ? -1 : 1);
  const needs = rows.filter((r) => r.state === 'needs_match').sort(bySide);
  const skipped = rows.filter((r) => r.state === 'skipped').sort(bySide);
  const shown = [...needs.slice(0, PAGE_ROWS), ...skipped.slice(0, Math.max(0, PAGE_ROWS - needs.length))];
  const actions = [...new Set(shown.flatMap((r) => r.actions))];
  const table = (list: Leftover[], caption: string) => html`<div class="table-wrap" tabindex="0" role="region" aria-label="${caption}"><table class="phone-cards"><caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col"><span class="visually-hidden">Select</span></th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Best candidates</th><th scope="col">Actions</th></tr></thead>
<tbody>${list.map((r) => leftoverRow(isvId, r))}</tbody></table></div>`;
  const shownNeeds = shown.filter((r) => r.state === 'needs_match');
  const shownSkipped = shown.filter((r) => r.state === 'skipped');
  ctx.send('/console/identity', 'Identity', html`<h1>Identity</h1>
${done > 0 ? notice('ok', `${done} ${done === 1 ? 'decision was' : 'decisions were'} recorded.`) : ''}
<p class="lead">Which of the ISV's customers is which of your PSA companies. Same names were matched automatically; the rest wait for you. Each leftover lists the companies that look most like it, best first; "Find another" searches every company. Every decision is shown to you before it is written, and a match can be undone.</p>
${isvPicker(isvs, isvId, '/console/identity')}
<form method="get" action="/console/identity" class="row" role="search"><input type="hidden" name="isv" value="${isvId}"><div><label for="q">Filter leftovers by name</label><input type="search" id="q" name="q" value="${filter}"></div><button type="submit" class="secondary">Filter</button>${filter ? html`<a href="/console/identity?isv=${isvId}">Show all</a>` : ''}</form>
<form method="post" action="/console/identity/preview">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}">
<h2>Needs match (${needs.length})</h2>${needs.length > shownNeeds.length ? html`<p class="hint">Showing ${shownNeeds.length} of ${needs.length}: filter by name to see the others.</p>` : ''}
${shownNeeds.length ? table(shownNeeds, 'Leftovers that need a match') : html`<p>Nothing waits for a match.</p>`}
${skipped.length ? html`<h2>Skipped (${skipped.length})</h2>${shownSkipped.length ? table(shownSkipped, 'Skipped leftovers') : html`<p class="hint">Filter by name to see them.</p>`}` : ''}
${shown.length ? html`<fieldset><legend>With the ticked rows</legend><div class="row">${actions.map((a) => html`<button type="submit" name="action" value="${a}">${ACTION_WORDS[a]}…</button>`)}</div>
<p class="hint">Match uses the candidate chosen on each ticked row; you see the list of matches before anything is written. Import is offered only when the ISV has an import endpoint.</p></fieldset>` : ''}
</form>
<h2>Matched (${matched.length})</h2>
${matched.length ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Matched pairs"><table class="phone-cards"><caption class="visually-hidden">Matched pairs</caption><thead><tr><th scope="col">ISV customer</th><th scope="col">PSA company</th><th scope="col">How</th><th scope="col">Decided by</th><th scope="col"><span class="visually-hidden">Undo</span></th></tr></thead>
<tbody>${matched.map((m) => html`<tr><th scope="row">${m.customer_name ?? m.customer_ref}<br><span class="muted">${m.customer_ref}</span></th><td data-label="PSA company">${m.company_name ?? m.company_source_id}<br><span class="muted">${m.company_source_id}</span></td><td data-label="How">${m.how.replace(/_/g, ' ')}</td><td data-label="Decided by">${m.decided_by}</td>
<td><form method="post" action="/console/identity/preview">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}"><button type="submit" class="secondary" name="single" value="unmatch ${m.customer_ref}" aria-label="Unmatch ${m.customer_name ?? m.customer_ref} from ${m.company_name ?? m.company_source_id}">Unmatch…</button></form></td></tr>`)}</tbody></table></div>` : html`<p>Nothing is matched yet.</p>`}`);
}

/** One leftover: search every row of the other side (identity_candidates), ranked, and match one. */
async function findPage(ctx: PageContext): Promise<void> {
  const qs = ctx.req.query;
  const { isvs, isvId } = await chosenIsv(ctx, qs.isv);
  if (!isvId) return ctx.res.redirect(303, '/console/identity');
  const side: Side = qs.side === 'psa_company' ? 'psa_company' : 'isv_customer';
  const id = String(qs.id ?? '').slice(0, 200);
  const connection = typeof qs.connection === 'string' && qs.connection ? qs.connection.slice(0, 100) : null;
  const q = String(qs.q ?? '').trim().slice(0, 200);
  const found = await ctx.run<Candidates>('identity_candidates', { query: {
    isv_id: isvId, limit: 25, ...(q ? { q } : {}),
    ...(side === 'isv_customer' ? { customer_ref: id } : { company_source_id: id, connection_id: connection }),
  } });
  const s = found.subject!;
  const other = side === 'isv_customer' ? 'PSA company' : 'ISV customer';
  const row = (await leftovers(ctx, isvId)).find((r) => keyOf(r) === keyOf(s));
  const back = `/console/identity?isv=${encodeURIComponent(isvId)}`;
  const sKey = keyOf(s);
  ctx.send('/console/identity', `Identity: match ${s.name}`, html`<h1>Match ${s.name}</h1>
<p><a href="${back}">Back to identity</a></p>
${isvs.length > 1 ? html`<p>ISV: <strong>${isvs.find(([x]) => x === isvId)![1]}</strong></p>` : ''}
<dl class="facts"><dt>${sideWords(side)}</dt><dd>${s.name}</dd><dt>${side === 'isv_customer' ? 'The ISV\'s id' : 'PSA id'}</dt><dd>${s.id}</dd>
${detailsOf(s) ? html`<dt>Details</dt><dd>${detailsOf(s)}</dd>` : ''}
<dt>Now</dt><dd>${s.matched_with ? html`Matched with <strong>${s.matched_with.name ?? s.matched_with.id}</strong> (${s.matched_with.id}): undo it in the Matched table first.` : row?.state === 'skipped' ? 'Skipped: set it back to Needs match to match it.' : 'Needs match'}</dd></dl>
<form method="get" action="/console/identity/find" class="row" role="search"><input type="hidden" name="isv" value="${isvId}"><input type="hidden" name="side" value="${side}"><input type="hidden" name="id" value="${id}">${connection ? html`<input type="hidden" name="connection" value="${connection}">` : ''}
<div><label for="q">Search ${other === 'PSA company' ? 'PSA companies' : 'ISV customers'} by name</label><input type="search" id="q" name="q" value="${q}" placeholder="${s.name}"></div><button type="submit">Search</button></form>
<p class="hint">${q ? html`Results for “${q}”` : html`Ranked against the name “${s.name}”`}: the same name first, then the same name once case, punctuation and legal suffixes (Ltd, Limited, Inc, LLC, GmbH…) are aside, then shared words; ${side === 'isv_customer' ? 'the ISV\'s id, web site and phone count too' : 'ids and web sites count too'}.</p>
${found.candidates.length ? html`<form method="post" action="/console/identity/preview">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}"><input type="hidden" name="single" value="match ${sKey}">
<div class="table-wrap" tabindex="0" role="region" aria-label="Candidates"><table class="phone-cards"><caption class="visually-hidden">${other === 'PSA company' ? 'PSA companies' : 'ISV customers'} that may be ${s.name}, best first</caption>
<thead><tr><th scope="col">${other}</th><th scope="col">${side === 'isv_customer' ? 'PSA id' : 'Ref'}</th><th scope="col">What tells it apart</th><th scope="col">Why</th><th scope="col"><span class="visually-hidden">Match</span></th></tr></thead>
<tbody>${found.candidates.map((c) => html`<tr><th scope="row">${c.name}</th><td data-label="${side === 'isv_customer' ? 'PSA id' : 'Ref'}">${c.id}</td><td data-label="What tells it apart">${detailsOf(c) || html`<span class="muted">nothing more on record</span>`}</td><td data-label="Why">${why(c)}</td>
<td>${c.matched_with ? html`<span class="muted">Matched with ${c.matched_with.name ?? c.matched_with.id}</span>` : row?.actions.includes('match') ? html`<button type="submit" name="pick" value="${keyOf(c)}" class="secondary" aria-label="Match ${s.name} with ${c.name} (${c.id})">Match…</button>` : ''}</td></tr>`)}</tbody></table></div></form>`
  : html`<p>No ${other} answers ${q ? html`“${q}”` : 'this name'}. Try fewer or other words.</p>`}`);
}

/** The decisions ticked, shown before anything is written (an import with the requests it would send). */
async function previewPage(ctx: PageContext): Promise<void> {
  const isvId = field(ctx.form, 'isv_id');
  const { items, problems } = await planOf(ctx, isvId);
  const imports = items.filter((i) => i.action === 'import');
  const importPreview = imports.length
    ? await ctx.run<{ preview: { targets: { requests: { method: string; path: string; body?: unknown }[] }[] } }>('identity_import', { body: { isv_id: isvId, company_source_ids: imports.map((i) => i.row.id), dry_run: true } })
    : null;
  const back = `/console/identity?isv=${encodeURIComponent(isvId)}`;
  ctx.send('/console/identity', 'Identity: preview', html`<h1>Preview</h1>
${notice('info', 'Nothing has been written yet.')}
${problems.length ? notice('warn', html`<ul>${problems.map((p) => html`<li>${p}</li>`)}</ul>`) : ''}
${items.length ? html`<p class="lead">Confirm to record ${items.length === 1 ? 'this decision' : `these ${items.length} decisions`}:</p><ul class="plan">${items.map((i) => html`<li>${describe(i)}</li>`)}</ul>
${importPreview ? html`<h2>Sent to the ISV's import endpoint</h2>${importPreview.preview.targets.flatMap((t) => t.requests).map((r) => html`<p><code>${r.method} ${r.path}</code></p><pre class="request" tabindex="0" aria-label="Request body">${JSON.stringify(r.body ?? null, null, 2)}</pre>`)}` : ''}
<form method="post" action="/console/identity/apply" class="row">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}"><input type="hidden" name="idempotency_key" value="${randomUUID()}">
${items.map((i) => html`<input type="hidden" name="item" value="${JSON.stringify([i.action, i.row, i.with ?? null])}">`)}
<button type="submit">Confirm</button><a href="${back}">Cancel</a></form>` : html`<p><a href="${back}">Back to identity</a></p>`}`);
}

/** The confirmed decisions recorded, then back to the overview. */
async function applyDecisions(ctx: PageContext): Promise<void> {
  const isvId = field(ctx.form, 'isv_id');
  let items: Item[];
  try {
    items = fieldList(ctx.form, 'item').slice(0, PAGE_ROWS).map((v) => {
      const [action, row, withCand] = JSON.parse(v) as [Action, Candidate, Candidate | null];
      if (!ACTION_WORDS[action] || !row?.id || ((action === 'match' || action === 'unmatch') && !withCand?.id)) throw new Error('unreadable');
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
    // Undo a match: the customer goes back to Needs match, and so does the company.
    if (item.action === 'unmatch') await ctx.run('identity_unset', { body: { customer_ref: item.row.id, isv_id: isvId } });
  }
  if (imports.length) {
    await ctx.run('identity_import', { body: { isv_id: isvId, company_source_ids: imports.map((i) => i.row.id), dry_run: false, idempotency_key: field(ctx.form, 'idempotency_key') } });
  }
  ctx.res.redirect(303, `/console/identity?isv=${encodeURIComponent(isvId)}&done=${items.length}`);
}
