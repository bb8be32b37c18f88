/**
 * A resubmitted MSP key rotation in Chromium (docs/architecture.md, Connect sessions and console): the
 * sandbox's alpha owner signs in with a magic link from the outbox, rotates the key, reloads the result
 * page (the browser sends the form again) and sends the same form once more. One rotation:
 * the same key each time, the one that works; the key before it is refused. The audit names the person.
 * Laptop and phone width, axe on each page; screenshots in test-output/key-rotation/.
 */
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, serviceAndBrowser, LAPTOP, newContext, PHONE, screenshot } from './support/browser';
import { sandboxTenantOwner } from '../src/people/sandbox-people';

const SUITE = 'key-rotation';
const OWNER = sandboxTenantOwner('sandbox-alpha');

describeInBrowser('a resubmitted MSP key rotation in Chromium', () => {
  const t = serviceAndBrowser();

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${t.svc.url}/console`);
    await page.fill('#email', OWNER);
    await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    await page.goto(`${t.svc.url}/dev/outbox`);
    await page.getByRole('link', { name: new RegExp(`\\(${OWNER.replace(/[.]/g, '\\.')}\\)`) }).first().click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL('**/console/health');
  }

  const keyWorks = async (key: string) => (await t.svc.api(`/tenants/${t.svc.alphaId}/grants`, { key })).status;

  for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
    it(`a reload of the result and the same form sent again rotate once (${width})`, async () => {
      const before = (await t.svc.api(`/tenants/${t.svc.alphaId}/msp-key/rotate`, { method: 'POST', key: t.svc.alphaMspKey, json: {} })).status === 200 ? t.svc.alphaMspKey : null;
      const page = await (await newContext(t.browser, viewport)).newPage();
      await signIn(page);
      await page.goto(`${t.svc.url}/console/key`);
      await screenshot(page, SUITE, `01-key-page-${width}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      const rotationsBefore = Number((await t.svc.services.ds.query(`SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1 AND action = 'msp_key.rotate'`, [t.svc.alphaId]))[0].n);

      await page.locator('#confirm').check();
      // What the form sends, to send it again as a second press would.
      const sent = await page.evaluate(`Object.fromEntries(new FormData(document.querySelector('form[action="/console/key/rotate"]')))`) as Record<string, string>;
      await page.getByRole('button', { name: 'Rotate the MSP key' }).click();
      await page.getByRole('heading', { name: 'Your new MSP key' }).waitFor();
      const first = (await page.locator('#new-key').textContent())!.trim();
      expect(first).toMatch(/^sk_msp_/);
      await screenshot(page, SUITE, `02-rotated-${width}`);
      expect(await accessibilityProblems(page)).toEqual([]);

      // The browser sends the form again on a reload of its answer.
      page.once('dialog', (d) => void d.accept());
      await page.reload();
      await page.getByRole('heading', { name: 'Your new MSP key' }).waitFor();
      expect((await page.locator('#new-key').textContent())!.trim()).toBe(first);
      expect(await page.textContent('main')).toContain('Already rotated');
      await screenshot(page, SUITE, `03-reloaded-${width}`);

      // The same form sent once more from this browser (its csrf and idempotency key): the same answer.
      const again = await page.request.post(`${t.svc.url}/console/key/rotate`, { form: sent });
      expect(again.status()).toBe(200);
      expect(await again.text()).toContain(first);

      const rotations: { detail: { actor: { kind: string; email: string } } }[] = await t.svc.services.ds.query(
        `SELECT detail FROM audit_entries WHERE tenant_id = $1 AND action = 'msp_key.rotate' ORDER BY seq`, [t.svc.alphaId]);
      expect(rotations.length - rotationsBefore).toBe(1);
      expect(rotations[rotations.length - 1]!.detail.actor).toMatchObject({ kind: 'person', email: OWNER });
      expect(await keyWorks(first)).toBe(200);
      if (before) expect(await keyWorks(before)).toBe(401);
      t.svc.alphaMspKey = first;
      await page.context().close();
    }, 120_000);
  }
});
