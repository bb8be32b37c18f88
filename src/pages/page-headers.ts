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
}

export function contentSecurityPolicy(opts: PageSecurityOptions = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "font-src 'self'",
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
