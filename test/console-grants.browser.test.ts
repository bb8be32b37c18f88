/**
 * The console's grants page in Chromium (docs/architecture.md, Connect sessions and console): a person
 * connects ConnectWise as an API member whose security role lacks Service Tickets: Add, plus Pax8, on the
 * connect page, where ticket create and the grants that rest on it cannot be ticked; then, signed in to
 * the new tenant's console, finds the same grants off with the vendor's words, saves changes in both
 * systems with one press (both kept, and a stale tab's save keeps the other's change), is told when a
 * save changes nothing, and a hand-made form or REST call granting a ruled-out key is refused. axe finds
 * nothing at laptop and phone width; the page's screenshots go to docs/images/console-grants-*.png.
 */
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, newContext, PHONE, screenshot, serviceAndBrowser } from './support/browser';
import { CW_LIMITED_CREDENTIALS, sandboxBase } from './support/connect-page';

const SUITE = 'console-grants';
const IMAGES = path.join(__dirname, '..', 'docs', 'images');
const RULED_OUT = ['psa.ticket.create', 'psa.ticket.update', 'psa.ticket.auto_close', 'psa.time.create'];
const box = (connectionId: string, key: string) => `#g-${connectionId}-${key.replace(/\./g, '-')}`;

describeInBrowser('the console grants page in Chromium', () => {
  const t = serviceAndBrowser();
  let context: BrowserContext;
  let page: Page;
  let tenantId: string;
  let mspKey: string;
  let isvId: string;
  let psa: string;
  let pax8: string;

  const grants = async () => (await t.svc.api(`/tenants/${tenantId}/grants`, { key: mspKey })).body.grants as { connection_id: string; keys: string[]; unavailable: { key: string; reason: string }[] }[];
  const keysOn = async (connectionId: string) => (await grants()).find((g) => g.connection_id === connectionId)!.keys;

  async function fill(p: Page, kind: string, connector: string, baseUrl: string, credentials: Record<string, string>) {
    const card = p.locator(`#${kind}-${connector}-card`);
    if (!(await card.evaluate((d) => (d as unknown as { open: boolean }).open))) await card.locator('summary').click();
    await p.fill(`#${kind}-${connector}-base_url`, baseUrl);
    for (const [name, value] of Object.entries(credentials)) await p.fill(`#${kind}-${connector}-${name}`, value);
    await card.getByRole('button', { name: /^Test / }).click();
    await p.locator(`#tested-${kind}`).waitFor();
  }

  async function save(p: Page): Promise<string> {
    await p.getByRole('button', { name: 'Save grants for Sandbox ISV' }).click();
    await p.waitForURL('**/console/grants?**');
    return (await p.locator('main .notice').first().textContent()) ?? '';
  }

  it('on the connect page, grants resting on the missing "Service Tickets: Add" cannot be ticked', async () => {
    const created = await t.svc.api('/connect-sessions', {
      method: 'POST',
      json: { msp_name: 'Grants MSP', kinds: ['psa', 'distributor'], requested_grants: [...RULED_OUT, 'psa.ticket.events', 'psa.company.create', 'distributor.company.create'] },
    });
    expect(created.status).toBe(201);
    context = await newContext(t.browser, LAPTOP);
    page = await context.newPage();
    await page.goto(created.body.connect_url);
    await fill(page, 'psa', 'connectwise', sandboxBase(t.svc).connectwise, CW_LIMITED_CREDENTIALS);
    await fill(page, 'distributor', 'pax8', sandboxBase(t.svc).pax8, { clientId: 'sandbox', clientSecret: 'sandbox-secret' });
    for (const k of RULED_OUT) {
      const input = page.locator(`#grant-psa-${k.replace(/\./g, '-')}`);
      expect([k, await input.isDisabled(), await input.isChecked()]).toEqual([k, true, false]);
      expect(await page.locator(`#grant-psa-${k.replace(/\./g, '-')}-why`).textContent()).toContain('Service Desk > Service Tickets: Add');
    }
    expect(await page.locator('#grant-psa-psa-ticket-update-why').textContent()).toContain('Create tickets in your PSA');
    expect(await page.locator('#grant-psa-psa-ticket-events').isChecked()).toBe(true);
    // The hint names the extras by the titles the boxes carry.
    expect(await page.locator('form.connect-form').textContent()).toContain('“Match its new customers to your PSA companies”');
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.fill('#owner_name', 'Gail Owner');
    await page.fill('#owner_email', 'gail@grants-msp.example');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Connected to Sandbox ISV' }).waitFor();
    mspKey = (await page.locator('#msp-key-value').textContent())!.trim();
    const session = (await t.svc.api(`/connect-sessions/${created.body.id}`)).body;
    tenantId = session.tenant_id;
    psa = session.connections.find((c: { kind: string }) => c.kind === 'psa').id;
    pax8 = session.connections.find((c: { kind: string }) => c.kind === 'distributor').id;
    isvId = (await t.svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    expect(await keysOn(psa)).toEqual(['psa.ticket.events']);
  }, 120_000);

  it('in the console the same grants are off with the vendor\'s words, and neither a hand-made form nor REST can grant them', async () => {
    await page.goto(`${t.svc.url}/console/grants`);
    for (const k of RULED_OUT) {
      expect([k, await page.locator(box(psa, k)).isDisabled(), await page.locator(box(psa, k)).isChecked()]).toEqual([k, true, false]);
    }
    expect(await page.locator(`${box(psa, 'psa.ticket.create')}-why`).textContent()).toContain('“Service Desk > Service Tickets: Add” in ConnectWise PSA');
    expect(await page.locator(`${box(psa, 'psa.time.create')}-why`).textContent()).toContain('it needs “Create tickets in your PSA”');
    // Titles come from the one table: company create is not "Find companies".
    expect(await page.locator('main').textContent()).not.toContain('Find companies');

    // A form made by hand (this session's own CSRF token) that ticks ticket create is refused by the operation.
    const csrf = await page.locator('form[action="/console/grants"] input[name="csrf"]').first().inputValue();
    const crafted = await page.request.post(`${t.svc.url}/console/grants`, {
      form: { csrf, isv_id: isvId, connection_id: psa, [`shown_${psa}`]: 'psa.ticket.events', [`keys_${psa}`]: 'psa.ticket.create' },
      maxRedirects: 0,
    });
    expect(crafted.status()).toBe(422);
    expect(await crafted.text()).toContain('Service Desk &gt; Service Tickets: Add');
    const put = await t.svc.api(`/tenants/${tenantId}/grants/${isvId}`, { method: 'PUT', key: mspKey, json: { connections: [{ connection_id: psa, keys: ['psa.ticket.events', 'psa.ticket.update'] }] } });
    expect([put.status, put.body.code, put.body.details?.refused]).toEqual([422, 'request_invalid', ['psa.ticket.update']]);
    expect(await keysOn(psa)).toEqual(['psa.ticket.events']);
  }, 60_000);

  it('saves changes in both systems with one press, keeps a stale tab\'s other change, and says when nothing changed', async () => {
    await page.goto(`${t.svc.url}/console/grants`);
    // A second tab opened now, before the first saves.
    const stale = await context.newPage();
    await stale.goto(`${t.svc.url}/console/grants`);

    await page.locator(box(psa, 'psa.company.create')).check();
    await page.locator(box(psa, 'psa.ticket.events')).uncheck();
    await page.locator(box(pax8, 'distributor.company.create')).check();
    const said = await save(page);
    expect(said).toContain('Turned on “Match its new customers to your PSA companies” on ConnectWise PSA');
    expect(said).toContain('Turned off “See when tickets change in your PSA” on ConnectWise PSA');
    expect(said).toContain('Turned on “Create companies at your distributor” on Pax8');
    expect(await keysOn(psa)).toEqual(['psa.company.create']);
    expect(await keysOn(pax8)).toContain('distributor.company.create');
    await screenshot(page, SUITE, 'saved-both-columns');

    // The stale tab changes another box and saves: the first tab's changes stay.
    await stale.locator(box(pax8, 'billing.cost.submit')).check();
    expect(await save(stale)).toContain('Turned on “Send you its costs for billing reconciliation” on Pax8');
    expect(await keysOn(psa)).toEqual(['psa.company.create']);
    expect((await keysOn(pax8)).sort()).toEqual(['billing.cost.submit', 'distributor.company.create']);
    await stale.close();

    // Saving again as it is changes nothing, and the page says so.
    await page.goto(`${t.svc.url}/console/grants`);
    expect(await save(page)).toContain('Nothing changed for Sandbox ISV');
  }, 60_000);

  it('has no accessibility problems at laptop and phone width (screenshots in docs/images)', async () => {
    const state = await context.storageState();
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const ctx = await t.browser.newContext({ viewport, storageState: state });
      const p = await ctx.newPage();
      await p.goto(`${t.svc.url}/console/grants`);
      await p.getByRole('heading', { name: 'Grants' }).first().waitFor();
      expect(await accessibilityProblems(p)).toEqual([]);
      expect(await p.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number).toBeLessThanOrEqual(1);
      await p.screenshot({ path: path.join(IMAGES, `console-grants-${name}.png`), fullPage: true });
      await ctx.close();
    }
    await context.close();
  }, 60_000);
});
