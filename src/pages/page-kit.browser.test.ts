/** The page kit in a real browser: the shell renders, the CSP blocks inline script, axe finds nothing serious. */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { accessibilityProblems, describeInBrowser, launchBrowser, newContext, PHONE, screenshot } from '../../test/support/browser';
import { html } from './html';
import { renderPage } from './layout';
import { mountPageAssets, registerPageScript } from './assets';
import { pageHeaders } from './page-headers';

describeInBrowser('page kit in Chromium', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const app = express();
    mountPageAssets(app);
    const script = registerPageScript('kit-check', "document.getElementById('js').textContent = 'external script ran';");
    app.get('/page', pageHeaders(), (_req, res) => {
      res.type('html').send(renderPage({
        title: 'Kit', area: 'Check', scripts: [script], nav: [{ href: '/page', label: 'Page', current: true }],
        main: html`<h1>Kit check</h1><p id="js">no script</p><p id="inline">inline blocked</p>
<script>document.getElementById('inline').textContent = 'inline ran';</script>
<form class="stack"><label for="n">Name</label><input id="n" name="n" type="text"><button type="submit">Save</button></form>
<div class="table-wrap"><table><thead><tr><th scope="col">a</th><th scope="col" class="num">b</th></tr></thead><tbody><tr><td>x</td><td class="num">1</td></tr></tbody></table></div>`,
      }));
    });
    // A page with an unlabelled field: the accessibility check must see it (or it proves nothing).
    app.get('/unlabelled', pageHeaders(), (_req, res) => {
      res.type('html').send(renderPage({ title: 'Bad', area: 'Check', main: html`<h1>Bad</h1><input type="text" name="x">` }));
    });
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { await new Promise((r) => server.close(r)); });

  it('runs our own script, refuses inline script, and has no serious accessibility problem', async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await newContext(browser, PHONE)).newPage();
      const res = await page.goto(`${url}/page`);
      expect(res?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await page.waitForFunction("document.getElementById('js')?.textContent === 'external script ran'");
      expect(await page.textContent('#inline')).toBe('inline blocked');
      await screenshot(page, 'page-kit', 'phone');
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.goto(`${url}/unlabelled`);
      expect((await accessibilityProblems(page)).join('\n')).toMatch(/^label \(critical\)/m);
    } finally {
      await browser.close();
    }
  });
});
