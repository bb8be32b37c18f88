/**
 * The connect flow in Chromium on the sandbox (docs/architecture.md, Connect sessions and console): an
 * ISV opens a session; on the page a person connects ConnectWise, NinjaOne (through the simulator's
 * consent page) and Pax8, chooses grants, presses Connect and watches the first sync finish; the ISV
 * then sees the session completed and reads the new tenant's tickets. With a ConnectWise API member
 * whose security role lacks Service Tickets: Add, the page names that permission and ticket create is
 * off. Screenshots of every step go to test-output/connect-flow/.
 */
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, serviceAndBrowser, newContext, PHONE, screenshot } from './support/browser';
import { CW_CREDENTIALS, CW_LIMITED_CREDENTIALS, sandboxBase } from './support/connect-page';

const SUITE = 'connect-flow';

describeInBrowser('the connect page in Chromium', () => {
  const t = serviceAndBrowser();

  async function fill(page: Page, kind: string, connector: string, baseUrl: string, credentials: Record<string, string>) {
    const card = page.locator(`#${kind}-${connector}-card`);
    if (!(await card.evaluate((d) => (d as unknown as { open: boolean }).open))) await card.locator('summary').click();
    await page.fill(`#${kind}-${connector}-base_url`, baseUrl);
    for (const [name, value] of Object.entries(credentials)) await page.fill(`#${kind}-${connector}-${name}`, value);
    await card.getByRole('button', { name: /^Test / }).click();
    await page.locator(`#tested-${kind}`).waitFor();
  }

  it('an ISV creates a session; the MSP connects ConnectWise, NinjaOne and Pax8, chooses grants and watches the first sync; the ISV reads the tenant', async () => {
    const created = await t.svc.api('/connect-sessions', {
      method: 'POST',
      json: {
        msp_name: 'Browser MSP', kinds: ['psa', 'rmm', 'distributor'], redirect_url: 'https://isv.example/connected',
        requested_grants: ['psa.ticket.create', 'psa.ticket.update', 'psa.ticket.events', 'psa.company.create', 'rmm.device.events', 'rmm.device.write', 'distributor.company.create'],
      },
    });
    expect(created.status).toBe(201);
    const base = sandboxBase(t.svc);
    const page = await (await newContext(t.browser)).newPage();
    const opened = await page.goto(created.body.connect_url);
    expect(opened?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    await page.getByRole('heading', { name: 'Connect your systems to Sandbox ISV' }).waitFor();
    expect(await page.getByText('Create tickets in your PSA').first().isVisible()).toBe(true);
    await screenshot(page, SUITE, '01-opened');
    expect(await accessibilityProblems(page)).toEqual([]);

    await fill(page, 'psa', 'connectwise', base.connectwise, CW_CREDENTIALS);
    expect(await page.locator('#tested-psa').textContent()).toContain('Service Desk > Service Tickets: Add');
    await screenshot(page, SUITE, '02-connectwise-tested');

    await fill(page, 'rmm', 'ninjaone', base.ninjaone, { clientId: 'sandbox', clientSecret: 'sandbox-secret' });
    expect(await page.locator('#grant-rmm-rmm-device-write').isDisabled()).toBe(true);
    await screenshot(page, SUITE, '03-ninjaone-tested-needs-sign-in');
    await page.locator('#oauth-rmm').click();
    await page.getByRole('heading', { name: 'Authorize application' }).waitFor();
    await screenshot(page, SUITE, '04-ninjaone-consent');
    await page.getByRole('button', { name: 'Authorize' }).click();
    await page.getByText('Signed in and approved at the vendor.').waitFor();
    expect(await page.locator('#grant-rmm-rmm-device-write').isDisabled()).toBe(false);
    await screenshot(page, SUITE, '05-ninjaone-authorised');

    await fill(page, 'distributor', 'pax8', base.pax8, { clientId: 'sandbox', clientSecret: 'sandbox-secret' });
    // Grants the interface keeps off start unticked; the defaults start ticked.
    expect(await page.locator('#grant-psa-psa-ticket-create').isChecked()).toBe(true);
    expect(await page.locator('#grant-psa-psa-company-create').isChecked()).toBe(false);
    expect(await page.locator('#grant-rmm-rmm-device-write').isChecked()).toBe(false);
    await page.locator('#grant-rmm-rmm-device-write').check();
    await page.locator('#grant-psa-psa-ticket-update').uncheck();
    // The person completing a new tenant's session names themselves: they become its first owner.
    await page.fill('#owner_name', 'Pat Owner');
    await page.fill('#owner_email', 'pat@browser-msp.example');
    await page.locator('#grants').scrollIntoViewIfNeeded();
    await screenshot(page, SUITE, '06-grants-chosen');
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Connected to Sandbox ISV' }).waitFor();
    await screenshot(page, SUITE, '07-connected-first-sync');
    await page.getByText('The first sync has finished.').waitFor({ timeout: 60_000 });
    const ticketsRow = page.locator('tr', { hasText: 'tickets' }).first();
    expect(Number(await ticketsRow.locator('.records').textContent())).toBeGreaterThan(0);
    const next = page.getByRole('link', { name: 'Continue to Sandbox ISV' });
    expect(await next.getAttribute('href')).toBe(`https://isv.example/connected?connect_session_id=${created.body.id}&state=completed`);
    expect(await page.locator('#msp-key-value').textContent()).toMatch(/^sk_msp_/);
    await screenshot(page, SUITE, '08-first-sync-finished');
    expect(await accessibilityProblems(page)).toEqual([]);

    const session = await t.svc.api(`/connect-sessions/${created.body.id}`);
    expect(session.body.state).toBe('completed');
    const tenants = await t.svc.api('/tenants');
    expect(tenants.body.tenants.map((t: { id: string }) => t.id)).toContain(session.body.tenant_id);
    const tickets = await t.svc.api(`/tenants/${session.body.tenant_id}/tickets?limit=5`);
    expect(tickets.status).toBe(200);
    expect(tickets.body.tickets.length).toBeGreaterThan(0);
    const keys = session.body.granted.flatMap((g: { keys: string[] }) => g.keys).sort();
    expect(keys).toEqual(['psa.ticket.create', 'psa.ticket.events', 'rmm.device.events', 'rmm.device.write']);

    // The page ends in the MSP's console: the answer to Connect signed the first owner in, in this browser only.
    expect(await page.content()).not.toContain('/console/link/');
    await page.getByRole('link', { name: 'Open your console' }).click();
    await page.getByRole('heading', { name: 'Connections and health' }).waitFor();
    expect(await page.textContent('body')).toContain('pat@browser-msp.example');
    expect(await page.textContent('main')).toContain('ConnectWise PSA (psa)');
    await screenshot(page, SUITE, '09-console-after-connect');
  }, 180_000);

  it('a ConnectWise member whose security role lacks ticket add: the page names the permission and ticket create is off (phone width)', async () => {
    const created = await t.svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Limited MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create', 'psa.ticket.events'] } });
    const page = await (await newContext(t.browser, PHONE)).newPage();
    await page.goto(created.body.connect_url);
    await fill(page, 'psa', 'connectwise', sandboxBase(t.svc).connectwise, CW_LIMITED_CREDENTIALS);
    const missing = page.locator('#tested-psa .missing-permission');
    expect(await missing.textContent()).toContain('Service Desk > Service Tickets: Add');
    expect(await missing.textContent()).toContain('Create tickets in your PSA will not work');
    const create = page.locator('#grant-psa-psa-ticket-create');
    expect(await create.isDisabled()).toBe(true);
    expect(await create.isChecked()).toBe(false);
    expect(await page.locator('#grant-psa-psa-ticket-events').isChecked()).toBe(true);
    await screenshot(page, SUITE, '09-limited-member-permission-named');
    expect(await accessibilityProblems(page)).toEqual([]);
  }, 60_000);

  it('works without JavaScript: Test and Connect are plain forms', async () => {
    const created = await t.svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'No Script MSP', kinds: ['distributor'], requested_grants: ['distributor.company.create'] } });
    const context = await t.browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(created.body.connect_url);
    await fill(page, 'distributor', 'pax8', sandboxBase(t.svc).pax8, { clientId: 'sandbox', clientSecret: 'sandbox-secret' });
    await page.fill('#owner_name', 'Sam Owner');
    await page.fill('#owner_email', 'sam@no-script-msp.example');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Connected to Sandbox ISV' }).waitFor();
    await screenshot(page, SUITE, '10-no-script-connected');
    // Without the script, "Refresh progress" shows how far the first sync has got (bounded).
    for (let i = 0; i < 300 && !(await page.getByText('The first sync has finished.').isVisible()); i++) {
      await page.getByRole('link', { name: 'Refresh progress' }).click();
      await page.waitForTimeout(100);
    }
    expect(await page.getByText('The first sync has finished.').isVisible()).toBe(true);
    // The browser that connected still sees what was shown once, for a few minutes (test/connect-completion.browser.test.ts).
    expect(await page.locator('#msp-key-value').count()).toBe(1);
    await screenshot(page, SUITE, '11-no-script-first-sync-finished');
    await context.close();
  }, 60_000);
});
