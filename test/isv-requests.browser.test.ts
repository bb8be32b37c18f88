/**
 * The ISV console's request log, in Chromium (docs/architecture.md, Request log): the sandbox ISV's
 * owner signs in, finds a refused request by the `request_id` of its Error envelope, reads its status,
 * error code and redacted bodies, and filters the list by status.
 * axe at laptop and phone width; no sideways scrolling; screenshots in docs/images/isv-requests-*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, launchBrowser, newContext, PHONE, signInToApp } from './support/browser';
import { startTestService, type TestService } from './support/service';
import { SANDBOX_ISV_OWNER } from '../src/people/sandbox-people';

const IMAGES = path.join(__dirname, '..', 'docs', 'images');

describeInBrowser('the ISV console: request log', () => {
  // serviceAndBrowser's, with room for a start on a loaded machine (two test passes share its cores in CI).
  const t = {} as { svc: TestService; browser: Browser };
  beforeAll(async () => {
    t.svc = await startTestService();
    t.browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await t.browser?.close();
    await t.svc?.close();
  });

  async function signIn(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
    const page = await (await newContext(browser, viewport)).newPage();
    await signInToApp(page, t.svc.url, SANDBOX_ISV_OWNER);
    return page;
  }

  /** axe, no sideways scrolling, and the page's picture for the docs. */
  async function checked(page: Page, name: string): Promise<void> {
    fs.mkdirSync(IMAGES, { recursive: true });
    await page.screenshot({ path: path.join(IMAGES, `isv-requests-${name}.png`), fullPage: true });
    expect({ name, problems: await accessibilityProblems(page) }).toEqual({ name, problems: [] });
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
    expect([name, overflow <= 1]).toEqual([name, true]);
  }

  for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
    it(`finds a refused request by its id and reads it (${width})`, async () => {
      const refused = await t.svc.api(`/tenants/${t.svc.alphaId}/tickets`, { method: 'POST', json: { summary: `no company (${width})`, company_name: '' } });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      const id = refused.body.request_id as string;
      expect(typeof id).toBe('string');
      await t.svc.api(`/tenants/${t.svc.alphaId}/tickets?limit=2`);
      await t.svc.services.requestRecorder.flush();

      const page = await signIn(t.browser, viewport);
      if (width === 'phone') await page.goto(`${t.svc.url}/app/requests`);
      else await page.getByRole('link', { name: 'Requests', exact: true }).click();
      await page.getByRole('heading', { name: 'Requests', level: 1 }).waitFor();
      expect(await page.textContent('main')).toContain('/tenants/{tenant_id}/tickets');
      await checked(page, `list-${width}`);

      await page.fill('#find-id', id);
      await page.getByRole('button', { name: 'Find' }).click();
      await page.getByRole('heading', { name: `POST /tenants/${t.svc.alphaId}/tickets`, level: 1 }).waitFor();
      const main = (await page.textContent('main'))!;
      expect(main).toContain(id);
      expect(main).toContain(String(refused.status));
      expect(main).toContain('x-api-key');
      expect(main).toContain('[redacted]');
      expect(main).not.toContain(t.svc.key);
      await checked(page, `detail-${width}`);

      await page.getByRole('link', { name: 'All requests' }).click();
      await page.selectOption('#status', '4xx');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=4xx/);
      const rows = await page.locator('tbody tr').allTextContents();
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.every((r) => /\b4\d\d\b/.test(r))).toBe(true);
      await page.context().close();
    }, 120_000);
  }
});
