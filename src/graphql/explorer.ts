/**
 * The GraphQL explorer a browser gets at GET /graphql (docs/architecture.md, Pages): GraphiQL 3 from the
 * installed `graphiql` package with React 18's UMD builds, all served from our own /assets/graphiql/
 * (no CDN), under the strict page CSP of every page. A small script of ours (explorer-script.ts) asks for
 * the admin token or an API key, keeps it in sessionStorage only, and sends it on every request
 * (`Authorization: Bearer` or `X-API-Key`, both of which POST /graphql takes).
 */
import path from 'node:path';
import type { Express, NextFunction, Request, Response } from 'express';
import { html } from '../pages/html';
import { setPageHeaders } from '../pages/page-headers';
import { EXPLORER_CSS, EXPLORER_SCRIPT } from './explorer-script';

const ASSET_ROOT = '/assets/graphiql';

const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

/** The files of installed packages the page loads, by the name it loads them under. */
const PACKAGE_FILES: Record<string, string> = {
  'react.js': path.join(packageDir('react'), 'umd', 'react.production.min.js'),
  'react-dom.js': path.join(packageDir('react-dom'), 'umd', 'react-dom.production.min.js'),
  'graphiql.js': path.join(packageDir('graphiql'), 'graphiql.min.js'),
  'graphiql.css': path.join(packageDir('graphiql'), 'graphiql.min.css'),
};

const OWN_FILES: Record<string, { type: string; body: string }> = {
  'explorer.js': { type: 'application/javascript; charset=utf-8', body: EXPLORER_SCRIPT },
  'explorer.css': { type: 'text/css; charset=utf-8', body: EXPLORER_CSS },
};

export const EXPLORER_PAGE = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>GraphQL explorer · MSP Integration</title>
<link rel="stylesheet" href="${ASSET_ROOT}/graphiql.css"><link rel="stylesheet" href="${ASSET_ROOT}/explorer.css">
<script src="${ASSET_ROOT}/react.js" defer></script><script src="${ASSET_ROOT}/react-dom.js" defer></script>
<script src="${ASSET_ROOT}/graphiql.js" defer></script><script src="${ASSET_ROOT}/explorer.js" defer></script>
</head><body>
<header class="gx-top"><h1>GraphQL explorer <span>internal tooling</span></h1>
<form id="gx-credential" class="gx-credential">
<label for="gx-kind">Send as</label>
<select id="gx-kind" name="kind"><option value="admin">Admin token (Authorization: Bearer)</option><option value="key">API key (X-API-Key)</option></select>
<label for="gx-secret">Token or key</label>
<input id="gx-secret" name="secret" type="password" autocomplete="off" required>
<button type="submit">Use it</button><button type="button" id="gx-forget">Forget it</button>
</form>
<p id="gx-status" class="gx-status" role="status">Enter the admin token or an API key to load the schema. It stays in this tab only.</p>
</header>
<main id="graphiql" aria-label="GraphiQL"><noscript><p>The explorer needs JavaScript. Without it, POST a query to /graphql with the admin token or an X-API-Key.</p></noscript></main>
</body></html>`.value;

export function sendExplorer(res: Response): void {
  setPageHeaders(res, { fontSources: ['data:'] });
  res.type('html').send(EXPLORER_PAGE);
}

/** GET /graphql from a browser (it asks for a page), and the explorer's assets. */
export function mountExplorer(app: Express): void {
  app.get(`${ASSET_ROOT}/:name`, (req: Request, res: Response, next: NextFunction) => {
    const name = String(req.params.name);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-cache');
    const own = OWN_FILES[name];
    if (own) return void res.type(own.type).send(own.body);
    const file = PACKAGE_FILES[name];
    if (!file) return next();
    res.sendFile(file);
  });
  app.get('/graphql', (req: Request, res: Response, next: NextFunction) => {
    const credentials = req.headers.authorization || req.headers['x-api-key'];
    if (credentials || req.accepts(['application/json', 'text/html']) !== 'text/html') return next();
    sendExplorer(res);
  });
}
