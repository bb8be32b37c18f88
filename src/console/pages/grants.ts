/**
 * Grants per ISV: one form and one save per ISV, a fieldset per connection with each key the connection's
 * kind offers (src/access, `grantKeysFor`), in the words of the one table (src/access/grant-words.ts).
 * A key the connection's vendor permissions rule out (`unavailable` from `list_grants`) is shown off and
 * cannot be ticked, with the reason in the vendor's words; `set_grants` refuses it as well.
 *
 * A save applies what the person changed on the form they saw (ticked or unticked since it was shown) to
 * the grants as they are now, in one `set_grants` naming every connection of the ISV: a change made
 * meanwhile in another tab or by a colleague, to another box, is kept. The page then says what changed,
 * or that nothing did.
 */
import { grantKeysFor } from '../../access/access.service';
import { isGrantKey, type GrantKey } from '../../access/caller';
import { GRANT_WORDS } from '../../access/grant-words';
import { connectorTitle } from '../../connectors/registry';
import { field, fieldList } from '../../pages/forms';
import { html, type SafeHtml } from '../../pages/html';
import type { ConsoleRoutes, PageContext } from '../page-context';
import { csrfField } from '../ui';
import { notice } from '../../pages/notice';

interface GrantRow {
  isv_id: string; isv_name: string; connection_id: string; kind: 'psa' | 'rmm' | 'distributor'; connector: string; keys: string[];
  unavailable?: { key: string; reason: string; vendor_permissions: string[] }[];
}

/** One change of a save, as the page reports it: `<connection id>~<key>`. */
type Change = { connection: string; key: GrantKey };

const KIND_WORDS: Record<string, string> = { psa: 'PSA', rmm: 'RMM', distributor: 'distributor' };
const domId = (connectionId: string, key: string) => `g-${connectionId}-${key.replace(/\./g, '-')}`;

async function grantRows(ctx: PageContext): Promise<GrantRow[]> {
  return (await ctx.run<{ grants: GrantRow[] }>('list_grants', { query: { limit: 500 } })).grants;
}

/** The keys a row shows ticked: held, and not ruled out by a vendor permission. */
function shownOn(r: GrantRow): GrantKey[] {
  const off = new Set((r.unavailable ?? []).map((u) => u.key));
  return grantKeysFor(r.kind).filter((k) => r.keys.includes(k) && !off.has(k));
}

function parseChanges(raw: unknown, rows: GrantRow[]): Change[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  const known = new Set(rows.map((r) => r.connection_id));
  return list.flatMap((v) => {
    const [connection, key] = String(v).split('~');
    return connection && key && known.has(connection) && isGrantKey(key) ? [{ connection, key }] : [];
  });
}

function savedNotice(ctx: PageContext, rows: GrantRow[]): SafeHtml {
  const q = ctx.req.query;
  const isv = rows.find((r) => r.isv_id === q.isv);
  if (!isv) return html``;
  if (q.done === 'unchanged') return notice('info', html`Nothing changed for ${isv.isv_name}: the boxes were as they are now, so nothing was saved.`);
  if (q.done !== 'saved') return html``;
  const on = parseChanges(q.on, rows);
  const off = parseChanges(q.off, rows);
  const dropped = parseChanges(q.dropped, rows);
  const where = (c: Change) => {
    const r = rows.find((x) => x.connection_id === c.connection)!;
    return `${connectorTitle(r.connector)}`;
  };
  const line = (verb: string, c: Change) => html`<li>${verb} “${GRANT_WORDS[c.key].title}” on ${where(c)}</li>`;
  return notice('ok', html`<p>Saved for ${isv.isv_name}. ${isv.isv_name} can do exactly what is ticked, from its next request:</p>
<ul class="changes">${on.map((c) => line('Turned on', c))}${off.map((c) => line('Turned off', c))}${dropped.map((c) => line('Turned off (the vendor permission it needs is missing)', c))}</ul>`);
}

function connectionFieldset(r: GrantRow): SafeHtml {
  const unavailable = new Map((r.unavailable ?? []).map((u) => [u.key, u]));
  const shown = shownOn(r);
  const title = connectorTitle(r.connector);
  return html`<fieldset class="card"><legend>${title} <span class="muted">(${KIND_WORDS[r.kind] ?? r.kind})</span></legend>
<input type="hidden" name="connection_id" value="${r.connection_id}"><input type="hidden" name="shown_${r.connection_id}" value="${shown.join(' ')}">
${grantKeysFor(r.kind).map((k) => {
    const id = domId(r.connection_id, k);
    const off = unavailable.get(k);
    return html`<div class="check"><input type="checkbox" id="${id}" name="keys_${r.connection_id}" value="${k}"${shown.includes(k) ? html` checked` : ''}${off ? html` disabled aria-describedby="${id}-why"` : ''}>
<label for="${id}"><span><strong>${GRANT_WORDS[k].title}</strong></span><span class="hint">${GRANT_WORDS[k].words}</span>${off ? html`<span class="hint off-reason" id="${id}-why">${off.reason}</span>` : ''}<code class="key">${k}</code></label></div>`;
  })}
${unavailable.size ? html`<p class="hint">Added the permission in ${title}? <a href="/console/health">Reconnect ${title}</a> on the Health page to check again.</p>` : ''}
</fieldset>`;
}

export function registerGrants(routes: ConsoleRoutes): void {
  routes.get('/console/grants', async (ctx) => {
    const rows = await grantRows(ctx);
    const isvs = [...new Map(rows.map((r) => [r.isv_id, r.isv_name])).entries()];
    ctx.send('/console/grants', 'Grants', html`<h1>Grants</h1>
${savedNotice(ctx, rows)}
<p class="lead">What each software vendor (ISV) may do in each of your systems. Only what makes sense for that system is offered. Tick or untick boxes in any of an ISV's systems, then save once.</p>
${isvs.length ? '' : html`<p>No ISV has access to this tenant yet.</p>`}
${isvs.map(([isvId, name]) => html`<section aria-labelledby="isv-${isvId}" class="isv-grants"><h2 id="isv-${isvId}">${name}</h2>
<form method="post" action="/console/grants">${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}">
<div class="cards">${rows.filter((r) => r.isv_id === isvId).map((r) => connectionFieldset(r))}</div>
<p><button type="submit">Save grants for ${name}</button></p>
</form></section>`)}`);
  });

  routes.post('/console/grants', async (ctx) => {
    const isvId = field(ctx.form, 'isv_id');
    const rows = (await grantRows(ctx)).filter((r) => r.isv_id === isvId);
    const named = new Set(fieldList(ctx.form, 'connection_id'));
    const on: Change[] = [];
    const off: Change[] = [];
    const dropped: Change[] = [];
    const connections: { connection_id: string; keys: string[] }[] = [];
    for (const r of rows) {
      const now = new Set<string>(r.keys);
      const ruledOut = new Set((r.unavailable ?? []).map((u) => u.key));
      if (named.has(r.connection_id)) {
        // What this person changed on the form they saw; boxes they left alone keep what they hold now.
        const shown = new Set(field(ctx.form, `shown_${r.connection_id}`).split(' ').filter(Boolean));
        const ticked = new Set(fieldList(ctx.form, `keys_${r.connection_id}`));
        for (const k of grantKeysFor(r.kind)) {
          if (ticked.has(k) && !shown.has(k) && !now.has(k)) { now.add(k); on.push({ connection: r.connection_id, key: k }); }
          if (!ticked.has(k) && shown.has(k) && now.has(k)) { now.delete(k); off.push({ connection: r.connection_id, key: k }); }
        }
        // A key ticked that the form did not offer (another kind's key, a hand-made form) goes to set_grants as sent: it refuses it.
        for (const k of ticked) if (!(grantKeysFor(r.kind) as string[]).includes(k)) now.add(k);
      }
      // A held key the vendor's permissions rule out grants nothing: a save takes it away (and says so).
      for (const k of [...now]) {
        if (ruledOut.has(k) && !fieldList(ctx.form, `keys_${r.connection_id}`).includes(k) && isGrantKey(k)) { now.delete(k); dropped.push({ connection: r.connection_id, key: k }); }
      }
      connections.push({ connection_id: r.connection_id, keys: [...now].sort() });
    }
    const changed = connections.some((c) => {
      const before = rows.find((r) => r.connection_id === c.connection_id)!.keys;
      return before.length !== c.keys.length || c.keys.some((k) => !before.includes(k));
    });
    if (!rows.length || !changed) {
      return ctx.res.redirect(303, `/console/grants?${new URLSearchParams({ done: 'unchanged', isv: isvId })}#isv-${isvId}`);
    }
    await ctx.run('set_grants', { path: { isv_id: isvId }, body: { connections } });
    const params = new URLSearchParams({ done: 'saved', isv: isvId });
    for (const c of on) params.append('on', `${c.connection}~${c.key}`);
    for (const c of off) params.append('off', `${c.connection}~${c.key}`);
    for (const c of dropped) params.append('dropped', `${c.connection}~${c.key}`);
    ctx.res.redirect(303, `/console/grants?${params}`);
  });
}
