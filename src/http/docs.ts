/** /docs (Swagger UI from the swagger-ui-dist package, no CDN), /docs/errors (every error code) and /docs/guides. */
import express, { type Express } from 'express';
import { getAbsoluteFSPath } from 'swagger-ui-dist';
import { ERROR_CODES, VALIDATION_ERROR_DOC, type ErrorCode } from '../errors/error-codes';
import { html, trusted } from '../pages/html';
import { renderPage } from '../pages/layout';
import { setPageHeaders } from '../pages/page-headers';
import { DOCS_CSS, DOCS_INIT } from './docs-assets';
import { ERROR_GUIDES } from './error-guides';
import { guidePages } from './guides';

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
    .map(([code, e]) => html`<tr id="${code}"><td><a href="#${code}"><code>${code}</code></a></td><td>${String(e.status)}</td><td>${trusted(formatText(e.description))}</td><td><a href="${ERROR_GUIDES[code as ErrorCode]}">What to do<span class="visually-hidden"> about ${code}</span></a></td></tr>`);
  return renderPage({
    title: 'Error codes', area: 'API reference', nav: [{ href: '/docs', label: 'API reference' }, { href: '/docs/guides', label: 'Guides' }, { href: '/docs/errors', label: 'Error codes', current: true }],
    main: html`<h1>Error codes</h1><p>Every error body is an Error envelope: <code>{code, message, doc_url, detail, details, needed, allowed, status}</code>. Branch on <code>code</code>.</p>
<p>${trusted(formatText(VALIDATION_ERROR_DOC))}</p>
<div class="table-wrap"><table><thead><tr><th scope="col">code</th><th scope="col">HTTP</th><th scope="col">meaning</th><th scope="col">guide</th></tr></thead><tbody>
${rows}
</tbody></table></div>`,
  });
}

/**
 * Swagger UI in a page of ours: a language, a banner and a main landmark around it, and our own overrides
 * (docs.css, docs-init.js) for what axe finds in Swagger UI's own markup: text colours under WCAG AA
 * contrast and selects without a name. No inline script or style: the page CSP of every page applies.
 */
const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · MSP Integration</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"><link rel="stylesheet" href="/docs/docs.css"></head>
<body><header class="docs-top"><span class="docs-brand">MSP Integration · API reference</span> <a href="/docs/guides">Guides</a> <a href="/docs/errors">Error codes</a></header>
<main id="ui" aria-label="API reference"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

export function mountDocs(app: Express): void {
  const guides = guidePages();
  const guide = (slug: string) => (_req: express.Request, res: express.Response) => { setPageHeaders(res); res.type('html').send(guides.get(slug)); };
  app.get('/docs/guides', guide('index'));
  for (const slug of guides.keys()) if (slug !== 'index') app.get(`/docs/guides/${slug}`, guide(slug));
  app.get('/docs/errors', (_req, res) => { setPageHeaders(res); res.type('html').send(errorsPage()); });
  app.get('/docs', (_req, res) => { setPageHeaders(res); res.type('html').send(DOCS_PAGE); });
  app.get('/docs/docs.css', (_req, res) => { res.type('text/css').set('Cache-Control', 'no-cache').send(DOCS_CSS); });
  app.get('/docs/init.js', (_req, res) => { res.type('application/javascript').set('Cache-Control', 'no-cache').send(DOCS_INIT); });
  app.use('/docs/assets', express.static(getAbsoluteFSPath(), { index: false }));
}
