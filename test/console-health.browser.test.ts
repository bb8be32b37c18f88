/**
 * The console's health page in Chromium (docs/architecture.md, Connect sessions and console): each system
 * shows its freshest successful check and every resource's own age (never the slowest resource as the
 * connection's age); after `POST /sandbox/simulate` credentials_revoked and a sync, ConnectWise's 401s are
 * one group, told once, whose one action is Reconnect, which opens the connect page. axe finds nothing at
 * laptop and phone width; screenshots in docs/images/console-health-*.png.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, PHONE, serviceAndBrowser, signedInToConsole } from './support/browser';

const IMAGES = path.join(__dirname, '..', 'docs', 'images');

describeInBrowser('the console health page in Chromium', () => {
  const t = serviceAndBrowser();
  const A = (p: string) => `/tenants/${t.svc.alphaId}${p}`;

  const signedIn = (viewport: { width: number; height: number }): Promise<Page> => signedInToConsole(t, viewport);

  it('shows each system\'s freshest check and each resource\'s own age', async () => {
    expect((await t.svc.api(A('/sync'), { method: 'POST', key: t.svc.alphaMspKey, json: {} })).status).toBe(200);
    const page = await signedIn(LAPTOP);
    const main = (await page.locator('main').textContent())!;
    expect(main).toContain('Freshest check');
    expect(main).not.toContain('Lag');
    expect(main).not.toMatch(/Last successful sync/);
    const card = page.locator('section.card', { has: page.locator('h2', { hasText: 'ConnectWise PSA' }) });
    const rows = card.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(1);
    for (const text of await rows.allTextContents()) expect(text).toMatch(/\d+ (s|min|h)/);
    await page.context().close();
  });

  it('groups the 401s of revoked credentials once, with Reconnect as the one action', async () => {
    const revoked = await t.svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: t.svc.alphaId, change: { kind: 'credentials_revoked' } } });
    expect(revoked.status).toBe(200);
    const connectionId = revoked.body.connection_id as string;
    // A second sync fails the same way: the audit log holds each failed sync, the page tells the failure once.
    expect((await t.svc.api(A('/sync'), { method: 'POST', key: t.svc.alphaMspKey, json: {} })).status).toBe(200);
    expect((await t.svc.api(A('/audit?action=sync.failed'), { key: t.svc.alphaMspKey })).body.audit.length).toBeGreaterThan(1);
    const status = (await t.svc.api(A('/status'), { key: t.svc.alphaMspKey })).body;
    const failing = status.connections.find((c: any) => c.id === connectionId).resources.filter((r: any) => r.last_status === 'failed');
    expect(failing.length).toBeGreaterThan(0);

    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const page = await signedIn(viewport);
      const card = page.locator('section.card', { has: page.locator(`#c-${connectionId}`) });
      // One group for every resource the 401 stopped, told once (not once per resource, not again from the audit).
      expect(await card.locator('.failure').count()).toBe(1);
      const group = card.locator('.failure[data-fix="reconnect"]');
      expect(await group.textContent()).toContain('refuses the stored credentials');
      for (const r of failing) expect(await group.textContent()).toContain(r.resource);
      expect(await card.getByRole('button', { name: /^Reconnect / }).count()).toBe(1);
      expect(await group.getByRole('button', { name: 'Reconnect ConnectWise PSA' }).count()).toBe(1);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.screenshot({ path: path.join(IMAGES, `console-health-${name}.png`), fullPage: true });
      const wide = await page.evaluate(`[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap')).map((e) => e.tagName + '.' + e.className + ': ' + (e.textContent || '').slice(0, 60))`);
      expect(wide).toEqual([]);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
      expect(overflow).toBeLessThanOrEqual(1);
      await page.screenshot({ path: path.join(IMAGES, `console-health-${name}.png`), fullPage: true });
      if (name === 'laptop') {
        await group.getByRole('button', { name: 'Reconnect ConnectWise PSA' }).click();
        await page.waitForURL('**/connect/**');
        expect(await page.locator('h1').textContent()).toBeTruthy();
      }
      await page.context().close();
    }
    expect((await t.svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: t.svc.alphaId, change: { kind: 'credentials_restored' } } })).status).toBe(200);
  });
});
