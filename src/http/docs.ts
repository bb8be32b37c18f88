/** /docs (Swagger UI from the swagger-ui-dist package, no CDN) and /docs/errors (every error code). */
import express, { type Express } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { ERROR_CODES, VALIDATION_ERROR_DOC } from '../errors/error-codes';

const escape = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/**
 * The descriptions are written with Markdown code spans (`code`) and inline JSON; on the page they are
 * formatted text: code spans and JSON bodies as <code>, never the raw backticks.
 */
export function formatText(text: string): string {
  return escape(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/(\{&quot;[^]*\})(?=\.?$)/, '<code>$1</code>');
}

export function errorsPage(): string {
  const rows = Object.entries(ERROR_CODES)
    .map(([code, e]) => `<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${e.status}</td><td>${formatText(e.description)}</td></tr>`)
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Error codes</title>
<style>body{font:15px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}td,th{padding:.4rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}:target{background:#fff6c8}</style>
</head><body><h1>Error codes</h1><p>Every error body is an Error envelope: <code>{code, message, doc_url, detail, details, needed, allowed, status}</code>. Branch on <code>code</code>.</p>
<p>${formatText(VALIDATION_ERROR_DOC)}</p>
<table><thead><tr><th>code</th><th>HTTP</th><th>meaning</th></tr></thead><tbody>
${rows}
</tbody></table></body></html>`;
}

export function mountDocs(app: Express): void {
  app.get('/docs/errors', (_req, res) => { res.type('html').send(errorsPage()); });
  app.get('/docs', (_req, res) => {
    res.type('html').send(`<!doctype html><html><head><meta charset="utf-8"><title>API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head><body><div id="ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`);
  });
  app.get('/docs/init.js', (_req, res) => {
    // showExtensions: each operation's x-example-key and x-example-needs (what its example needs) are listed on it.
    res.type('application/javascript').send("window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#ui', showExtensions: true });");
  });
  app.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false }));
}
