/**
 * The headers of every page the service renders (docs/architecture.md, Pages): a strict
 * Content-Security-Policy (our own origin only, no inline script or style, no framing, forms post only
 * to us), no caching (pages can show one-time values such as a new key), no referrer (a connect URL
 * carries its token), no MIME sniffing.
 */
import type { NextFunction, Request, Response } from 'express';

export interface PageSecurityOptions {
  /** Origins a form of the page may post (or be redirected) to besides our own, e.g. a vendor's OAuth host. */
  formActions?: readonly string[];
  /** Font sources besides our own origin: GraphiQL's stylesheet embeds its fonts as `data:` URLs. */
  fontSources?: readonly string[];
}

export function contentSecurityPolicy(opts: PageSecurityOptions = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    `font-src 'self'${(opts.fontSources ?? []).map((o) => ` ${o}`).join('')}`,
    `form-action 'self'${(opts.formActions ?? []).map((o) => ` ${o}`).join('')}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

export function setPageHeaders(res: Response, opts: PageSecurityOptions = {}): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy(opts));
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
}

/** Express middleware form of setPageHeaders, for a router of pages. */
export function pageHeaders(opts: PageSecurityOptions = {}) {
  return (_req: Request, res: Response, next: NextFunction) => {
    setPageHeaders(res, opts);
    next();
  };
}

function isHtml(res: Response): boolean {
  return /^\s*text\/html\b/i.test(String(res.getHeader('Content-Type') ?? ''));
}

/**
 * The one guard of every HTML answer of the app, mounted first in src/app.ts: when a response turns out
 * to be a page (Content-Type text/html) and its route set no policy of its own (the connect page names a
 * vendor's OAuth host in form-action, for instance), it gets the page headers above. So a page added
 * later, a simulator's consent page or an error page cannot be framed or run inline script even if its
 * route forgot to ask. Applied when the headers are written, the only moment the type is known.
 */
export function pageHeadersOnEveryPage() {
  return (_req: Request, res: Response, next: NextFunction) => {
    const writeHead = res.writeHead;
    res.writeHead = function guarded(this: Response, ...args: unknown[]) {
      if (isHtml(res) && !res.getHeader('Content-Security-Policy')) setPageHeaders(res);
      return (writeHead as (...a: unknown[]) => Response).apply(this, args);
    } as Response['writeHead'];
    next();
  };
}
