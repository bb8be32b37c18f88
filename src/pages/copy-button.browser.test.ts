/** The Copy button beside a secret shown once, in Chromium: hidden without its script, shown with it, and it copies the secret. */
import express from 'express';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { accessibilityProblems, describeInBrowser, launchBrowser, newContext } from '../../test/support/browser';
import { mountPageAssets } from './assets';
import { COPY_SCRIPT, copyButton } from './copy-button';
import { html } from './html';
import { renderPage } from './layout';
import { pageHeaders } from './page-headers';

describeInBrowser('the Copy button in Chromium', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const app = express();
    mountPageAssets(app);
    app.get('/secret', pageHeaders(), (req, res) => {
      res.type('html').send(renderPage({
        title: 'Key', area: 'Check', scripts: req.query.js === 'no' ? [] : [COPY_SCRIPT],
        main: html`<h1>Your new key</h1><p><code class="secret" id="new-key">sk_test_shown_once_123</code></p><p>${copyButton('new-key', 'Copy the key')}</p>`,
      }));
    });
    server = await new Promise<Server>((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => { await new Promise((r) => server.close(r)); });

  it('copies the secret to the clipboard and says so; without the script the button stays hidden', async () => {
    const browser = await launchBrowser();
    try {
      const context = await newContext(browser);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url });
      const page = await context.newPage();
      await page.goto(`${url}/secret?js=no`);
      expect(await page.getByRole('button', { name: 'Copy the key' }).isVisible()).toBe(false);
      await page.goto(`${url}/secret`);
      const button = page.getByRole('button', { name: 'Copy the key' });
      await button.waitFor({ state: 'visible' });
      await button.click();
      await page.waitForFunction("document.getElementById('new-key-copied').textContent === 'Copied.'");
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe('sk_test_shown_once_123');
      expect(await accessibilityProblems(page)).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
