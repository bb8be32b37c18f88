/**
 * Grants per ISV and connection: each key the connection's kind offers (src/access, `grantKeysFor`),
 * in plain words, ticked when the ISV holds it. Saving one connection's form runs `set_grants` for that
 * connection only (a PUT leaves the others as they are).
 */
import { grantKeysFor } from '../../access/access.service';
import { connectorTitle } from '../../connectors/registry';
import { field, fieldList } from '../../pages/forms';
import { html } from '../../pages/html';
import { GRANT_WORDS } from '../../access/grant-words';
import type { ConsoleRoutes } from '../page-context';
import { csrfField, notice } from '../ui';

interface GrantRow { isv_id: string; isv_name: string; connection_id: string; kind: 'psa' | 'rmm' | 'distributor'; connector: string; keys: string[] }

export function registerGrants(routes: ConsoleRoutes): void {
  routes.get('/console/grants', async (ctx) => {
    const rows = (await ctx.run<{ grants: GrantRow[] }>('list_grants', { query: { limit: 500 } })).grants;
    const isvs = [...new Map(rows.map((r) => [r.isv_id, r.isv_name])).entries()];
    const saved = ctx.req.query.done === 'saved';
    ctx.send('/console/grants', 'Grants', html`<h1>Grants</h1>
${saved ? notice('ok', 'Saved. The ISV can do exactly what is ticked, from its next request.') : ''}
<p class="lead">What each software vendor (ISV) may do in each of your systems. Only what makes sense for that system is offered. Untick a box and save to take the permission away.</p>
${isvs.length ? '' : html`<p>No ISV has access to this tenant yet.</p>`}
${isvs.map(([isvId, name]) => html`<section aria-labelledby="isv-${isvId}"><h2 id="isv-${isvId}">${name}</h2><div class="cards">
${rows.filter((r) => r.isv_id === isvId).map((r) => html`<form class="card" method="post" action="/console/grants">
${csrfField(ctx.session)}<input type="hidden" name="isv_id" value="${isvId}"><input type="hidden" name="connection_id" value="${r.connection_id}">
<fieldset><legend>${connectorTitle(r.connector)} (${r.kind})</legend>
${grantKeysFor(r.kind).map((k) => html`<label class="check" for="g-${r.connection_id}-${k}"><input type="checkbox" id="g-${r.connection_id}-${k}" name="keys" value="${k}"${r.keys.includes(k) ? html` checked` : ''}>
<span><strong>${GRANT_WORDS[k].title}</strong><span class="hint">${GRANT_WORDS[k].words}</span><code class="key">${k}</code></span></label>`)}
</fieldset>
<button type="submit">Save ${connectorTitle(r.connector)} grants for ${name}</button></form>`)}
</div></section>`)}`);
  });

  routes.post('/console/grants', async (ctx) => {
    const isvId = field(ctx.form, 'isv_id');
    await ctx.run('set_grants', { path: { isv_id: isvId }, body: { connections: [{ connection_id: field(ctx.form, 'connection_id'), keys: fieldList(ctx.form, 'keys') }] } });
    ctx.res.redirect(303, '/console/grants?done=saved');
  });
}
