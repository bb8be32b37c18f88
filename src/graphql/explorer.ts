/**
 * The GraphQL explorer a browser gets at GET /graphql: one self-contained page (no CDN, no package:
 * nothing in node_modules serves an explorer offline), asking for the admin token, which it keeps in
 * sessionStorage only and sends as a Bearer header. It lists the operations with their descriptions
 * (introspection) and runs a query with variables.
 */
import type { Response } from 'express';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GraphQL explorer (internal tooling)</title>
<style>
body{font:14px system-ui,sans-serif;margin:1rem;display:grid;grid-template-columns:22rem 1fr;gap:1rem}
textarea,input{font:13px ui-monospace,monospace;width:100%;box-sizing:border-box}
pre{background:#f4f4f4;padding:.5rem;overflow:auto;max-height:70vh}
#ops li{cursor:pointer;margin:.2rem 0} #ops small{color:#555;display:block}
</style></head><body>
<aside>
<label>Admin token <input id="token" type="password" autocomplete="off" placeholder="ADMIN_TOKEN"></label>
<button id="load">Load operations</button>
<ul id="ops"></ul>
</aside>
<main>
<label>Query<textarea id="query" rows="14">{ connectors { connectors { name kind credentials } grant_keys } }</textarea></label>
<label>Variables (JSON)<textarea id="vars" rows="5">{}</textarea></label>
<button id="run">Run</button>
<pre id="out"></pre>
</main>
<script>
const $ = (id) => document.getElementById(id);
$('token').value = sessionStorage.getItem('adminToken') || '';
$('token').addEventListener('change', () => sessionStorage.setItem('adminToken', $('token').value));
async function gql(query, variables) {
  if (!$('token').value) { $('token').focus(); throw new Error('Enter the admin token first.'); }
  const res = await fetch(location.pathname, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + $('token').value }, body: JSON.stringify({ query, variables }) });
  return res.json();
}
$('run').onclick = async () => {
  try { $('out').textContent = JSON.stringify(await gql($('query').value, JSON.parse($('vars').value || '{}')), null, 2); }
  catch (e) { $('out').textContent = String(e.message || e); }
};
$('load').onclick = async () => {
  try {
    const r = await gql('{ __schema { queryType { fields { name description } } mutationType { fields { name description } } } }');
    if (!r.data) { $('out').textContent = JSON.stringify(r, null, 2); return; }
    const ul = $('ops'); ul.textContent = '';
    for (const [kind, t] of [['query', r.data.__schema.queryType], ['mutation', r.data.__schema.mutationType]]) {
      for (const f of (t && t.fields) || []) {
        const li = document.createElement('li'); li.textContent = kind + ' ' + f.name;
        const s = document.createElement('small'); s.textContent = f.description || ''; li.appendChild(s);
        li.onclick = () => { $('query').value = kind + ' {\\n  ' + f.name + ' {\\n    \\n  }\\n}'; };
        ul.appendChild(li);
      }
    }
  } catch (e) { $('out').textContent = String(e.message || e); }
};
</script></body></html>`;

export function sendExplorer(res: Response): void {
  res.type('html').set('Cache-Control', 'no-store').set('Content-Security-Policy', "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'").send(PAGE);
}
