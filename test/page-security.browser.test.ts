/**
 * Every HTML page the service serves refuses framing and inline script (docs/architecture.md, Pages):
 * the GET routes are read from the running app itself (so a page added later is covered), each is
 * fetched as a browser would, and every answer that is a page must carry the strict CSP with
 * `frame-ancestors 'none'` and `X-Frame-Options: DENY`. In Chromium, a page of ours put in a frame by
 * another origin does not render, and /docs has no serious or critical axe-core violation at laptop and
 * phone width.
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Browser } from 'playwright-core';
import { buildApp } from '../src/app';
import { SIMULATOR_MOUNT } from '../src/http/request-log';
import { accessibilityProblems, describeInBrowser, launchBrowser, newContext, PHONE, screenshot } from './support/browser';
import { startTestService, type TestService } from './support/service';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await svc?.close();
});

interface Layer { route?: { path: unknown; methods: Record<string, boolean> }; handle: { stack?: Layer[] }; rawPath?: unknown }

/** Every GET path the app routes, nested routers included (simulators under their mount path). */
function getPaths(stack: Layer[], prefix: string, out: Set<string>): Set<string> {
  for (const layer of stack) {
    if (layer.route && layer.route.methods.get) {
      for (const p of [layer.route.path].flat()) if (typeof p === 'string') out.add(prefix + p);
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      getPaths(layer.handle.stack, prefix + mount, out);
    }
  }
  return out;
}

/** A path with each parameter filled in (a made-up token, an unknown id: refusal pages are pages too). */
const concrete = (p: string) => p.replace(/:(\w+)/g, (_m, name: string) => (name === 'connector' ? 'ninjaone' : `x${name}`)).replace(/\*\w*|\{.*?\}/g, '');

const CSP_OF_A_PAGE = [/default-src 'none'/, /script-src 'self'(;|$)/, /frame-ancestors 'none'/, /base-uri 'none'/];

describe('page headers on every HTML page', () => {
  it('lists the routes from the app, and every one that answers a page refuses framing and inline script', async () => {
    // The routes of the app the server runs, built the same way from the same services.
    const built = await buildApp(svc.services);
    const paths = getPaths((built.app as unknown as { router: { stack: Layer[] } }).router.stack, '', new Set());
    await built.apollo.stop();
    // The simulators' consent page needs a valid request to render: add one with its parameters.
    const consent = `${SIMULATOR_MOUNT}/ninjaone/ws/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sandbox', redirect_uri: 'https://isv.example/callback', scope: 'monitoring', state: 's' })}`;
    const pages: string[] = [];
    const problems: string[] = [];
    for (const p of [...[...paths].map(concrete), consent]) {
      const res = await fetch(`${svc.url}${p}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' });
      await res.arrayBuffer();
      if (!/^text\/html/.test(res.headers.get('content-type') ?? '')) continue;
      pages.push(p.split('?')[0]!);
      const csp = res.headers.get('content-security-policy') ?? '';
      if (res.headers.get('x-frame-options') !== 'DENY') problems.push(`${p}: X-Frame-Options ${res.headers.get('x-frame-options')}`);
      for (const rule of CSP_OF_A_PAGE) if (!rule.test(csp)) problems.push(`${p}: CSP "${csp}" lacks ${rule}`);
      if (/unsafe-inline|unsafe-eval/.test(csp)) problems.push(`${p}: CSP allows ${csp}`);
    }
    expect(problems).toEqual([]);
    // The listing found the pages this test exists for (else it would prove nothing).
    expect(pages).toEqual(expect.arrayContaining([
      '/docs', '/docs/errors', '/graphql', '/console', '/console/key', '/connect/xtoken', `${SIMULATOR_MOUNT}/ninjaone/ws/oauth/authorize`,
      ...['/sign-in', '/app', '/dev/outbox'].filter((p) => paths.has(p)),
    ]));
  });

  it('the explorer and /docs load only our own assets and no inline script', async () => {
    for (const p of ['/graphql', '/docs', '/docs/errors']) {
      const body = await (await fetch(`${svc.url}${p}`, { headers: { accept: 'text/html' } })).text();
      expect(body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(body).not.toMatch(/\sstyle=|<style/);
      expect(body).not.toMatch(/(src|href)="https?:/);
    }
  });
});

describeInBrowser('pages in Chromium', () => {
  let browser: Browser;
  let framer: Server;
  let framerUrl = '';
  beforeAll(async () => {
    browser = await launchBrowser();
    // Another origin (another port) that puts our pages in frames, as a clickjacking site would.
    const app = express();
    app.get('/frame', (req, res) => {
      res.type('html').send(`<!doctype html><html lang="en"><head><title>framer</title></head><body><iframe title="ours" src="${svc.url}${String(req.query.path)}" width="800" height="600"></iframe></body></html>`);
    });
    framer = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    framerUrl = `http://127.0.0.1:${(framer.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => framer?.close(r));
  });

  it('a page of ours does not render inside another origin\'s frame', async () => {
    const page = await (await newContext(browser)).newPage();
    // The frame test is only meaningful if a page that allows framing does render in it.
    await page.goto(`${framerUrl}/frame?path=${encodeURIComponent('/healthz')}`);
    await page.waitForFunction('document.querySelector("iframe") && true');
    let framed = '';
    for (let i = 0; i < 100 && !framed.includes('ok'); i++) {
      framed = await page.frames()[1]?.evaluate('document.body ? document.body.innerText : ""').catch(() => '') as string ?? '';
      if (!framed.includes('ok')) await new Promise((r) => setTimeout(r, 50));
    }
    expect(framed).toContain('"status":"ok"');
    for (const p of ['/docs', '/graphql', '/console', '/docs/errors']) {
      await page.goto(`${framerUrl}/frame?path=${encodeURIComponent(p)}`);
      await page.waitForLoadState('load');
      const frame = page.frames()[1]!;
      // Chromium replaces a refused frame with its own error document: nothing of ours is in it.
      const text = await frame.evaluate('document.body ? document.body.innerText : ""').catch(() => '') as string;
      expect({ p, url: frame.url(), text }).toEqual({ p, url: expect.stringMatching(/^chrome-error:|^about:blank/), text: expect.not.stringMatching(/API reference|Error codes|GraphQL explorer|Sign in/) });
    }
    await page.context().close();
  });

  it('/docs has no serious or critical accessibility problem at 1280 and 390 wide', async () => {
    for (const [name, viewport] of [['laptop', { width: 1280, height: 900 }], ['phone', PHONE]] as const) {
      const page = await (await newContext(browser, viewport)).newPage();
      const blocked: string[] = [];
      page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) blocked.push(m.text()); });
      await page.goto(`${svc.url}/docs`);
      await page.locator('.opblock').first().waitFor();
      // One operation opened, so its parameters and answers are checked too.
      await page.locator('.opblock-summary').first().click();
      await page.locator('.opblock-body').first().waitFor();
      await screenshot(page, 'pages', `docs-${name}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(blocked).toEqual([]);
      await page.goto(`${svc.url}/docs/errors`);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.context().close();
    }
  }, 300_000);
});
