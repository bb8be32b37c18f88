/**
 * The connect completion page in Chromium (docs/architecture.md, Connect sessions and console): what it
 * shows once (the new MSP key, the way into the console) is shown again on a reload in the browser that
 * completed it, with a Copy button, and never in another browser, which is told the key was shown and how
 * to rotate it; what is kept at rest is never the key in plain text, and once its few minutes are over
 * the same browser is told the same. axe finds nothing at laptop and phone width.
 */
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, newContext, PHONE, screenshot, serviceAndBrowser } from './support/browser';
import { sandboxBase } from './support/connect-page';

const SUITE = 'connect-completion';

describeInBrowser('the connect completion page in Chromium', () => {
  const t = serviceAndBrowser();

  async function connectPax8(page: Page, mspName: string): Promise<string> {
    const created = await t.svc.api('/connect-sessions', { method: 'POST', json: { msp_name: mspName, kinds: ['distributor'], requested_grants: ['distributor.company.create'] } });
    expect(created.status).toBe(201);
    await page.goto(created.body.connect_url);
    const card = page.locator('#distributor-pax8-card');
    if (!(await card.evaluate((d) => (d as unknown as { open: boolean }).open))) await card.locator('summary').click();
    await page.fill('#distributor-pax8-base_url', sandboxBase(t.svc).pax8);
    await page.fill('#distributor-pax8-clientId', 'sandbox');
    await page.fill('#distributor-pax8-clientSecret', 'sandbox-secret');
    await card.getByRole('button', { name: /^Test / }).click();
    await page.locator('#tested-distributor').waitFor();
    await page.fill('#owner_name', 'Cora Owner');
    await page.fill('#owner_email', `cora-${mspName.toLowerCase().replace(/\W+/g, '-')}@completion.example`);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Connected to Sandbox ISV' }).waitFor();
    return created.body.id;
  }

  it('a reload in the same browser shows the MSP key again with a Copy button; another browser is told it was shown, never the key', async () => {
    const context = await newContext(t.browser, LAPTOP);
    const page = await context.newPage();
    const sessionId = await connectPax8(page, 'Completion MSP');
    // Connect's answer is a redirect: the page's address is the completion page, not the form's.
    expect(page.url()).toMatch(/\/connect\/progress\/[A-Za-z0-9_-]{43}$/);
    const key = (await page.locator('#msp-key-value').textContent())!.trim();
    expect(key).toMatch(/^sk_msp_/);
    expect(await page.getByRole('button', { name: 'Copy the key' }).isVisible()).toBe(true);
    expect(await page.getByRole('link', { name: 'Open your console' }).isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, SUITE, 'shown-laptop');

    // What is kept for the reload is sealed: the key is nowhere in the session's row.
    const row = (await t.svc.services.ds.query('SELECT * FROM connect_sessions WHERE id = $1', [sessionId]))[0];
    expect(JSON.stringify(row)).not.toContain(key);

    await page.reload();
    expect((await page.locator('#msp-key-value').textContent())!.trim()).toBe(key);
    expect(await page.getByRole('link', { name: 'Open your console' }).isVisible()).toBe(true);

    // Another browser with the same address: the key was shown, and how to rotate it; never the key.
    const other = await (await newContext(t.browser, PHONE)).newPage();
    const answer = await other.goto(page.url());
    expect(answer!.status()).toBe(200);
    expect(await other.content()).not.toContain(key);
    expect(await other.content()).not.toMatch(/sk_msp_/);
    const shown = await other.locator('#msp-key-shown').textContent();
    expect(shown).toContain('was shown on this page once');
    expect(shown).toContain('Rotate the MSP key');
    expect(await accessibilityProblems(other)).toEqual([]);
    await screenshot(other, SUITE, 'already-shown-phone');
    await other.context().close();

    // The same browser at phone width still sees it (a reload within the few minutes).
    await page.setViewportSize(PHONE);
    await page.reload();
    expect((await page.locator('#msp-key-value').textContent())!.trim()).toBe(key);
    expect(await accessibilityProblems(page)).toEqual([]);
    await screenshot(page, SUITE, 'shown-phone');

    // Once its minutes are over (the completion moved back in time), the same browser is told it was shown, and what was kept is gone.
    await t.svc.services.ds.query(`UPDATE connect_sessions SET completed_at = completed_at - interval '11 minutes' WHERE id = $1`, [sessionId]);
    await page.reload();
    expect(await page.content()).not.toContain(key);
    expect(await page.locator('#msp-key-shown').textContent()).toContain('was shown on this page once');
    const after = (await t.svc.services.ds.query('SELECT draft_sealed FROM connect_sessions WHERE id = $1', [sessionId]))[0];
    expect(after.draft_sealed).toBe('shown.k.spent');
    await context.close();
  }, 120_000);
});
