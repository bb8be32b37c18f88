/**
 * The guides under /docs/guides, rendered from the repository's own markdown (docs/guides/*.md), so the
 * workflows are written once, beside the code, and read in the browser without the README.
 *
 * markdown-it with `html: false` escapes any markup written in a guide, and its link check refuses
 * `javascript:` and `data:` links; the page is served on the page kit under the page CSP (no inline script).
 */
import fs from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
import { html, trusted, type SafeHtml } from '../pages/html';
import { renderPage, type NavLink } from '../pages/layout';
import { projectRoot } from '../shared/project-root';

/** Every guide, in reading order: its path under /docs/guides and its file in docs/guides. */
export const GUIDES = [
  { slug: 'getting-started', title: 'Getting started' },
  { slug: 'polling', title: 'Polling with after' },
  { slug: 'webhooks', title: 'Webhooks and verification' },
  { slug: 'idempotency', title: 'Idempotency and previews' },
  { slug: 'mcp', title: 'MCP' },
  { slug: 'connect', title: 'The connect flow' },
  { slug: 'errors', title: 'Errors' },
] as const;

/** A heading's anchor: its text in lower case, words joined by hyphens (GitHub's rule, ASCII only). */
export function slugOf(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9\s-]/g, '').trim().replace(/\s+/g, '-');
}

function markdown(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
  // Each heading gets its anchor, so a link (and a doc_url) can name a section.
  md.renderer.rules.heading_open = (tokens, i, options, _env, self) => {
    const inline = tokens[i + 1];
    const text = inline?.children?.map((c) => c.content).join('') ?? '';
    tokens[i].attrSet('id', slugOf(text));
    return self.renderToken(tokens, i, options);
  };
  // A code block scrolls sideways at phone width: it is in the tab order, so a keyboard can scroll it.
  const fence = md.renderer.rules.fence!;
  md.renderer.rules.fence = (tokens, i, options, env, self) => fence(tokens, i, options, env, self)
    .replace(/^<pre>/, `<pre class="request guide" tabindex="0" aria-label="${tokens[i].info ? md.utils.escapeHtml(tokens[i].info.split(/\s/)[0]!) : 'code'} example">`);
  return md;
}

const md = markdown();

/** A guide's markdown rendered to the page's main content (escaped: no markup of the file survives). */
export function renderGuideMarkdown(source: string): SafeHtml {
  return trusted(md.render(source));
}

function nav(current: string): NavLink[] {
  return [
    { href: '/docs', label: 'API reference' },
    { href: '/docs/guides', label: 'Guides', current: current === 'index' },
    ...GUIDES.map((g) => ({ href: `/docs/guides/${g.slug}`, label: g.title, current: g.slug === current })),
    { href: '/docs/errors', label: 'Error codes' },
  ];
}

const guidesDir = () => path.join(projectRoot(), 'docs', 'guides');

/** The pages, read and rendered once at start (the files ship with the service). */
export function guidePages(dir = guidesDir()): Map<string, string> {
  const pages = new Map<string, string>();
  for (const g of GUIDES) {
    const source = fs.readFileSync(path.join(dir, `${g.slug}.md`), 'utf8');
    pages.set(g.slug, renderPage({ title: g.title, area: 'Guides', nav: nav(g.slug), main: renderGuideMarkdown(source) }));
  }
  pages.set('index', renderPage({
    title: 'Guides', area: 'Guides', nav: nav('index'),
    main: html`<h1>Guides</h1><p>How to work with the service, one workflow a page. Every operation is in the <a href="/docs">API reference</a>; every error code in <a href="/docs/errors">Error codes</a>.</p>
<ul>${GUIDES.map((g) => html`<li><a href="/docs/guides/${g.slug}">${g.title}</a></li>`)}</ul>`,
  }));
  return pages;
}
