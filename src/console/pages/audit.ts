/** The audit log, newest first, filtered by what was done and how it ended (`list_audit`'s filters). */
import { html } from '../../pages/html';
import type { ConsoleRoutes } from '../page-context';
import { ago } from '../ui';

interface Entry { id: string; action: string; outcome: string; subject_ref: string | null; detail: Record<string, unknown>; created_at: string }

const ACTIONS: [string, string][] = [
  ['', 'Everything'], ['charge.', 'Charge decisions'], ['identity.', 'Identity decisions'], ['grants.', 'Grant changes'],
  ['console.', 'Console sign-ins and links'], ['msp_key.', 'MSP key'], ['sync.', 'Syncs'], ['sync.failed', 'Failed syncs'],
];
const OUTCOMES: [string, string][] = [['', 'Any'], ['ok', 'Done'], ['refused', 'Refused'], ['failed', 'Failed']];

const ACTOR_WORDS: Record<string, string> = { person: 'a person', isv_key: 'an ISV key', msp_key: 'the MSP key', operator: 'the operator', system: 'the service' };

/** Who made the decision, in words: the person's email, or which key (by its prefix). */
function actorWords(actor: unknown): string {
  if (!actor || typeof actor !== 'object') return '';
  const a = actor as { kind?: unknown; email?: unknown; key_prefix?: unknown };
  const who = typeof a.email === 'string' ? a.email : ACTOR_WORDS[String(a.kind)] ?? '';
  return who ? `by ${who}${typeof a.key_prefix === 'string' ? ` (${a.key_prefix}…)` : ''}` : '';
}

function summary(e: Entry): string {
  const d = e.detail;
  const by = actorWords(d.actor) || (d.decided_by ? `by ${String(d.decided_by)}` : '');
  const parts = [
    typeof d.connector === 'string' ? d.connector : '', by, d.via ? `via ${String(d.via)}` : '',
    typeof d.message === 'string' ? d.message : '', typeof d.error === 'string' ? `${String(d.resource ?? '')}: ${d.error}` : '',
  ];
  return parts.filter(Boolean).join(' · ');
}

export function registerAudit(routes: ConsoleRoutes): void {
  routes.get('/console/audit', async (ctx) => {
    const action = ACTIONS.some(([v]) => v === ctx.req.query.action) ? String(ctx.req.query.action) : '';
    const outcome = OUTCOMES.some(([v]) => v === ctx.req.query.outcome) ? String(ctx.req.query.outcome) : '';
    const cursor = typeof ctx.req.query.cursor === 'string' ? ctx.req.query.cursor.slice(0, 500) : '';
    const page = await ctx.run<{ audit: Entry[]; next_cursor: string | null }>('list_audit', {
      query: { limit: 50, ...(action ? { action } : {}), ...(outcome ? { outcome } : {}), ...(cursor ? { cursor } : {}) },
    });
    const next = page.next_cursor ? `/console/audit?${new URLSearchParams({ action, outcome, cursor: page.next_cursor }).toString()}` : null;
    ctx.send('/console/audit', 'Audit log', html`<h1>Audit log</h1>
<p class="lead">Everything done on this tenant, newest first: syncs, writes, decisions and who made them.</p>
<form method="get" action="/console/audit" class="card row">
<div><label for="action">What</label><select id="action" name="action">${ACTIONS.map(([v, l]) => html`<option value="${v}"${v === action ? html` selected` : ''}>${l}</option>`)}</select></div>
<div><label for="outcome">Outcome</label><select id="outcome" name="outcome">${OUTCOMES.map(([v, l]) => html`<option value="${v}"${v === outcome ? html` selected` : ''}>${l}</option>`)}</select></div>
<button type="submit">Filter</button></form>
<div class="table-wrap" tabindex="0"><table><caption class="visually-hidden">Audit entries</caption>
<thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Outcome</th><th scope="col">Subject</th><th scope="col">Detail</th></tr></thead>
<tbody>${page.audit.map((e) => html`<tr><td><time datetime="${e.created_at}" title="${e.created_at}">${ago(e.created_at)}</time></td><td><code>${e.action}</code></td>
<td>${e.outcome === 'ok' ? html`<span class="badge ok">ok</span>` : html`<span class="badge ${e.outcome === 'refused' ? 'warn' : 'bad'}">${e.outcome}</span>`}</td><td>${e.subject_ref ?? ''}</td><td>${summary(e)}</td></tr>`)}</tbody>
</table></div>
${page.audit.length ? '' : html`<p>No entries match.</p>`}
${next ? html`<p><a href="${next}">Older entries</a></p>` : ''}`);
  });
}
