/**
 * The audit log, newest first, filtered by kind (what was done), outcome, actor and subject (`list_audit`'s
 * filters); previews are hidden unless asked for. Each subject shows its readable label beside its id (the
 * entry's `subject_label`: a ticket's summary, a project's or agreement's name, a charge's company and
 * product, an ISV's name), and a grant change says which grants of
 * which system changed, from what to what (`detail.changes`, recorded by set_grants), and a routing change
 * which finding kinds' write-back target changed, from what to what (`detail.before`/`after`, set_routing).
 */
import { isGrantKey } from '../../access/caller';
import { GRANT_WORDS } from '../../access/grant-words';
import { connectorTitle } from '../../connectors/registry';
import { html, type SafeHtml } from '../../pages/html';
import type { ConsoleRoutes } from '../page-context';
import { ago } from '../ui';

interface Entry { id: string; action: string; outcome: string; subject_ref: string | null; detail: Record<string, unknown>; created_at: string }
interface GrantChange { connection_id: string; connector: string; before: string[]; after: string[] }

const ACTIONS: [string, string][] = [
  ['', 'Everything'], ['charge.', 'Charge decisions'], ['identity.', 'Identity decisions'], ['grants.', 'Grant changes'], ['routing.', 'Routing changes'],
  ['console.', 'Console sign-ins and links'], ['msp_key.', 'MSP key'], ['sync.', 'Syncs'], ['sync.failed', 'Failed syncs'],
];
const OUTCOMES: [string, string][] = [['', 'Any'], ['ok', 'Done'], ['refused', 'Refused'], ['failed', 'Failed']];

const ACTOR_WORDS: Record<string, string> = { person: 'a person', isv_key: 'an ISV key', msp_key: 'the MSP key', operator: 'the operator', system: 'the service' };

/** Who made the decision, in words: the person's email, or which key (by its prefix). */
function actorWords(actor: unknown): string {
  if (!actor || typeof actor !== 'object') return '';
  const a = actor as { kind?: unknown; email?: unknown; key_prefix?: unknown };
  const who = typeof a.email === 'string' ? a.email : ACTOR_WORDS[String(a.kind)] ?? '';
  return who ? `${who}${typeof a.key_prefix === 'string' ? ` (${a.key_prefix}…)` : ''}` : '';
}

const grantTitle = (k: string) => (isGrantKey(k) ? GRANT_WORDS[k].title : k);

/** A grant change, per system: what was turned on and off; the whole grant lists before and after folded (they run to a paragraph). */
function grantChanges(changes: GrantChange[]): SafeHtml {
  return html`<ul class="changes">${changes.map((c) => {
    const on = c.after.filter((k) => !c.before.includes(k));
    const off = c.before.filter((k) => !c.after.includes(k));
    return html`<li><strong>${connectorTitle(c.connector)}</strong>: ${on.length ? html`turned on ${on.map(grantTitle).join(', ')}` : ''}${on.length && off.length ? '; ' : ''}${off.length ? html`turned off ${off.map(grantTitle).join(', ')}` : ''}
<details class="hint"><summary>Every grant before and after</summary><span class="lists">Before: ${c.before.length ? c.before.map(grantTitle).join(', ') : 'nothing'}. After: ${c.after.length ? c.after.map(grantTitle).join(', ') : 'nothing'}.</span></details></li>`;
  })}</ul>`;
}

const TARGET_WORDS: Record<string, string> = { service_ticket: 'a service ticket', project: 'a project' };
const targetWords = (t: string | undefined) => (t ? TARGET_WORDS[t] ?? t : 'the recommended target');

/** A routing change: each finding kind whose override changed, from what to what (no override: the ISV's recommendation). */
function routingChanges(before: Record<string, string>, after: Record<string, string>): SafeHtml {
  const kinds = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]).sort();
  if (kinds.length === 0) return html`<span class="hint">Nothing changed.</span>`;
  return html`<ul class="changes">${kinds.map((k) => html`<li><strong>${k}</strong> findings: from ${targetWords(before[k])} to ${targetWords(after[k])}</li>`)}</ul>`;
}

const isTargets = (v: unknown): v is Record<string, string> =>
  Boolean(v) && typeof v === 'object' && !Array.isArray(v) && Object.values(v as object).every((t) => typeof t === 'string');

function summary(e: Entry): SafeHtml {
  const d = e.detail;
  const by = actorWords(d.actor) || (d.decided_by ? String(d.decided_by) : '');
  const parts = [
    typeof d.connector === 'string' ? connectorTitle(d.connector) : '', by ? `by ${by}` : '', d.via ? `via ${String(d.via)}` : '',
    typeof d.message === 'string' ? d.message : '', typeof d.error === 'string' ? `${String(d.resource ?? '')}: ${d.error}` : '',
  ];
  const changes = Array.isArray(d.changes) ? (d.changes as GrantChange[]).filter((c) => c && Array.isArray(c.before) && Array.isArray(c.after)) : [];
  const routing = e.action === 'routing.update' && isTargets(d.before) && isTargets(d.after) ? routingChanges(d.before, d.after) : '';
  return html`${parts.filter(Boolean).join(' · ')}${changes.length ? grantChanges(changes) : ''}${routing}`;
}

/** The subject's readable label (list_audit's `detail.subject_label`, audit.service.ts) and its id. */
function subject(e: Entry): SafeHtml {
  if (!e.subject_ref) return html``;
  const label = typeof e.detail.subject_label === 'string' ? e.detail.subject_label : null;
  return html`${label ? html`<strong>${label}</strong><br>` : ''}<code class="id">${e.subject_ref}</code>`;
}

export function registerAudit(routes: ConsoleRoutes): void {
  routes.get('/console/audit', async (ctx) => {
    const q = ctx.req.query;
    const action = ACTIONS.some(([v]) => v === q.action) ? String(q.action) : '';
    const outcome = OUTCOMES.some(([v]) => v === q.outcome) ? String(q.outcome) : '';
    const actor = typeof q.actor === 'string' ? q.actor.trim().slice(0, 200) : '';
    const subjectRef = typeof q.subject === 'string' ? q.subject.trim().slice(0, 200) : '';
    const previews = q.previews === 'include' ? 'include' : 'exclude';
    const cursor = typeof q.cursor === 'string' ? q.cursor.slice(0, 500) : '';
    const page = await ctx.run<{ audit: Entry[]; next_cursor: string | null }>('list_audit', {
      query: { limit: 50, previews, ...(action ? { action } : {}), ...(outcome ? { outcome } : {}), ...(actor ? { actor } : {}), ...(subjectRef ? { subject: subjectRef } : {}), ...(cursor ? { cursor } : {}) },
    });
    const keep = { action, outcome, actor, subject: subjectRef, ...(previews === 'include' ? { previews } : {}) };
    const next = page.next_cursor ? `/console/audit?${new URLSearchParams({ ...keep, cursor: page.next_cursor }).toString()}` : null;
    ctx.send('/console/audit', 'Audit log', html`<h1>Audit log</h1>
<p class="lead">Everything done on this tenant, newest first: syncs, writes, decisions and who made them.</p>
<form method="get" action="/console/audit" class="card row">
<div><label for="action">Kind</label><select id="action" name="action">${ACTIONS.map(([v, l]) => html`<option value="${v}"${v === action ? html` selected` : ''}>${l}</option>`)}</select></div>
<div><label for="outcome">Outcome</label><select id="outcome" name="outcome">${OUTCOMES.map(([v, l]) => html`<option value="${v}"${v === outcome ? html` selected` : ''}>${l}</option>`)}</select></div>
<div><label for="actor">Who</label><p class="hint" id="actor-hint">An email, a key prefix, or msp_key, isv_key, person, system</p><input id="actor" name="actor" value="${actor}" aria-describedby="actor-hint"></div>
<div><label for="subject">Subject id</label><input id="subject" name="subject" value="${subjectRef}"></div>
<div class="check"><input type="checkbox" id="previews" name="previews" value="include"${previews === 'include' ? html` checked` : ''}><label for="previews">Show previews</label></div>
<button type="submit">Filter</button></form>
<div class="table-wrap" tabindex="0"><table class="phone-cards"><caption class="visually-hidden">Audit entries</caption>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">Subject</th><th scope="col">Detail</th></tr></thead>
<tbody>${page.audit.map((e) => html`<tr><td data-label="When"><time datetime="${e.created_at}" title="${e.created_at}">${ago(e.created_at)}</time></td><td data-label="Action"><code class="action">${e.action}</code></td>
<td data-label="Outcome">${e.outcome === 'ok' ? html`<span class="badge ok">ok</span>` : html`<span class="badge ${e.outcome === 'refused' ? 'warn' : 'bad'}">${e.outcome}</span>`}</td><td data-label="Subject">${subject(e)}</td><td data-label="Detail">${summary(e)}</td></tr>`)}</tbody>
</table></div>
${page.audit.length ? '' : html`<p>No entries match.</p>`}
${next ? html`<p><a href="${next}">Older entries</a></p>` : ''}`);
  });
}
