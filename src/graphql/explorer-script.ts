/**
 * The explorer's own script and stylesheet (served at /assets/graphiql/explorer.{js,css}; the page CSP
 * allows no inline script): it asks for the admin token or an API key, keeps it in sessionStorage (this
 * tab only, never a cookie or localStorage), and renders GraphiQL with a fetcher that sends it. It also
 * fixes what GraphiQL 3.8's markup lacks for WCAG 2.1 AA (axe): names for its editors' hidden textareas,
 * keyboard access to the editors' scrolling boxes, and darker syntax and logo colours (the stylesheet).
 */
export const EXPLORER_SCRIPT = `(function () {
  'use strict';
  var STORE = 'graphqlExplorerCredential';
  var form = document.getElementById('gx-credential');
  var kind = document.getElementById('gx-kind');
  var secret = document.getElementById('gx-secret');
  var status = document.getElementById('gx-status');
  var root = null;

  function saved() {
    try { return JSON.parse(sessionStorage.getItem(STORE) || 'null'); } catch (e) { return null; }
  }
  function headersOf(c) {
    var h = { 'content-type': 'application/json', accept: 'application/json' };
    if (c && c.kind === 'key') h['x-api-key'] = c.secret;
    else if (c) h.authorization = 'Bearer ' + c.secret;
    return h;
  }
  function fetcher(params) {
    return fetch('/graphql', { method: 'POST', headers: headersOf(saved()), body: JSON.stringify(params) }).then(function (res) {
      if (res.status === 401 || res.status === 403) status.textContent = 'The service refused that token or key (' + res.status + '). Enter another.';
      return res.json();
    });
  }
  function show() {
    var c = saved();
    if (!c) { secret.focus(); return; }
    kind.value = c.kind;
    status.textContent = 'Sending ' + (c.kind === 'key' ? 'an API key as X-API-Key' : 'the admin token as a Bearer token') + '. Ctrl-Enter runs the query; Ctrl-Space suggests fields.';
    if (root) root.unmount();
    root = ReactDOM.createRoot(document.getElementById('graphiql'));
    root.render(React.createElement(GraphiQL, { fetcher: fetcher, defaultEditorToolsVisibility: true, isHeadersEditorEnabled: false }));
  }
  // GraphiQL's editors are CodeMirror 5: name their hidden textareas and let the keyboard reach what scrolls.
  var EDITOR_NAMES = [['.graphiql-query-editor', 'Query'], ['.graphiql-editor-tool', 'Variables or headers'], ['.result-window, .graphiql-response', 'Response']];
  function nameEditors() {
    EDITOR_NAMES.forEach(function (pair) {
      document.querySelectorAll(pair[0]).forEach(function (box) {
        box.querySelectorAll('textarea:not([aria-label])').forEach(function (t) { t.setAttribute('aria-label', pair[1]); });
        box.querySelectorAll('.CodeMirror-scroll:not([tabindex])').forEach(function (el) { el.setAttribute('tabindex', '0'); el.setAttribute('aria-label', pair[1]); });
      });
    });
  }
  new MutationObserver(nameEditors).observe(document.getElementById('graphiql'), { childList: true, subtree: true });
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    if (!secret.value) return;
    sessionStorage.setItem(STORE, JSON.stringify({ kind: kind.value === 'key' ? 'key' : 'admin', secret: secret.value }));
    secret.value = '';
    show();
  });
  document.getElementById('gx-forget').addEventListener('click', function () {
    sessionStorage.removeItem(STORE);
    if (root) { root.unmount(); root = null; }
    status.textContent = 'Forgotten. Enter the admin token or an API key to load the schema.';
    secret.focus();
  });
  show();
})();
`;

/** The page around GraphiQL: a header with the credential form, GraphiQL filling the rest of the window. */
export const EXPLORER_CSS = `
html,body{height:100%;margin:0}
body{display:flex;flex-direction:column;font:15px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1b1f24;background:#fff}
.gx-top{background:#1b2a41;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1.25rem;align-items:center}
.gx-top h1{font-size:1.05rem;margin:0}
.gx-top h1 span{font-weight:400;color:#dbe6ff;font-size:.9rem}
.gx-credential{display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}
.gx-credential label{font-weight:600}
.gx-credential input,.gx-credential select{font:inherit;padding:.25rem .4rem;border:1px solid #8a94a3;border-radius:4px;background:#fff;color:#1b1f24}
.gx-credential button{font:inherit;font-weight:600;padding:.25rem .75rem;border-radius:4px;border:1px solid #dbe6ff;background:#0b57d0;color:#fff;cursor:pointer}
.gx-credential button[type=button]{background:transparent}
.gx-status{margin:0;font-size:.875rem;color:#dbe6ff;flex-basis:100%}
:focus-visible{outline:3px solid #7fb0ff;outline-offset:2px}
#graphiql{flex:1;min-height:0}
.graphiql-container .CodeMirror-linenumber{color:#4f5866}
.graphiql-container .graphiql-logo,.graphiql-container .graphiql-logo .graphiql-logo-link{color:#3b4350}
.graphiql-container .cm-s-graphiql .cm-property,.graphiql-container .cm-s-graphiql .cm-qualifier{color:#0b4f9c}
.graphiql-container .cm-s-graphiql .cm-def,.graphiql-container .cm-s-graphiql .cm-string,.graphiql-container .cm-s-graphiql .cm-string-2{color:#7a3e00}
.graphiql-container .cm-s-graphiql .cm-keyword{color:#8b1a62}
.graphiql-container .cm-s-graphiql .cm-variable,.graphiql-container .cm-s-graphiql .cm-attribute{color:#553c8a}
.graphiql-container .cm-s-graphiql .cm-number,.graphiql-container .cm-s-graphiql .cm-atom,.graphiql-container .cm-s-graphiql .cm-builtin{color:#1a6b3f}
.graphiql-container .cm-s-graphiql .cm-comment,.graphiql-container .cm-s-graphiql .cm-meta,.graphiql-container .cm-s-graphiql .cm-punctuation{color:#4f5866}
`;
