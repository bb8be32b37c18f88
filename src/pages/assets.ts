/**
 * Static assets of the service's pages, served from memory at /assets/<name> (no CDN, no build step): the
 * stylesheet and each page's small script, registered by the feature that owns the page.
 */
import type { Express, Response } from 'express';
import { PAGE_CSS } from './page-style';

const ASSETS = new Map<string, { type: string; body: string }>([['pages.css', { type: 'text/css; charset=utf-8', body: PAGE_CSS }]]);

/** A feature's page script, served at /assets/<name>.js. */
export function registerPageScript(name: string, source: string): string {
  ASSETS.set(`${name}.js`, { type: 'application/javascript; charset=utf-8', body: source });
  return `/assets/${name}.js`;
}

function send(res: Response, asset: { type: string; body: string }): void {
  res.setHeader('Content-Type', asset.type);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  res.send(asset.body);
}

export function mountPageAssets(app: Express): void {
  app.get('/assets/:name', (req, res, next) => {
    const asset = ASSETS.get(String(req.params.name));
    if (!asset) return next();
    send(res, asset);
  });
}
