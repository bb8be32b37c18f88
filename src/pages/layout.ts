/**
 * The page shell every server-rendered page uses (docs/architecture.md, Pages): one stylesheet, scripts
 * only from our own /assets (the CSP forbids inline script), a skip link and landmarks for keyboard and
 * screen-reader users, and a viewport that works at phone width.
 */
import { html, type SafeHtml } from './html';

export interface NavLink {
  href: string;
  label: string;
  current?: boolean;
}

export interface PageShell {
  title: string;
  /** Shown in the top bar after the brand, e.g. the product area ("Connect", "Console"). */
  area: string;
  main: SafeHtml;
  nav?: NavLink[];
  /** Right side of the top bar (who is signed in, a sign-out form). */
  aside?: SafeHtml;
  /** Script paths under /assets (e.g. '/assets/connect.js'); loaded deferred, the page works without them where it can. */
  scripts?: string[];
}

export function renderPage(p: PageShell): string {
  const nav = p.nav?.length
    ? html`<nav aria-label="${p.area}"><ul>${p.nav.map((l) => html`<li><a href="${l.href}"${l.current ? html` aria-current="page"` : ''}>${l.label}</a></li>`)}</ul></nav>`
    : '';
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${p.title} · ${p.area}</title><link rel="stylesheet" href="/assets/pages.css">
${(p.scripts ?? []).map((s) => html`<script src="${s}" defer></script>`)}
</head><body><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="#main">MSP Integration · ${p.area}</a>${nav}${p.aside ? html`<div class="who">${p.aside}</div>` : ''}</header>
<main id="main" tabindex="-1">${p.main}</main>
</body></html>`.value;
}
