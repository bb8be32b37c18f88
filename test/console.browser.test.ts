/**
 * The MSP's console in Chromium (docs/architecture.md, Connect sessions and console): a person signs in
 * with a one-time link and, through the pages only, turns a grant off (the ISV's ticket create is then
 * refused with grant_missing), matches the ambiguous company (the ISV's ticket create for that name then
 * previews), previews and approves a charge (the agreement line's new quantity is at the ConnectWise
 * simulator), dismisses and restores one, and downloads the reconciliation as CSV (the JSON's figures).
 * Every page is screenshot at laptop and phone width (test-output/console/) and has no serious or
 * critical axe-core violation.
 */
import fs from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, launchBrowser, newContext, PHONE, screenshot } from './support/browser';
import { parseCsv } from './support/csv';
import { startTestService, type TestService } from './support/service';

const SUITE = 'console';
const PAGES = ['health', 'grants', 'identity', 'charges', 'reconciliation', 'audit', 'key', 'members'] as const;

let svc: TestService;
let browser: Browser;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const msp = (path: string, init: Parameters<TestService['api']>[1] = {}) => svc.api(path, { ...init, key: svc.alphaMspKey });
const ticket = (companyName: string) => svc.api(A('/tickets'), {
  method: 'POST', json: { company_name: companyName, summary: 'Backup agent stopped', description: 'Seen by the console test.', priority: 'high', board: '1', dry_run: true },
});

beforeAll(async () => {
  svc = await startTestService();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function signedInPage(viewport: { width: number; height: number }): Promise<Page> {
  const link = await svc.api(A('/console-links'), { method: 'POST', key: svc.alphaMspKey });
  const page = await (await newContext(browser, viewport)).newPage();
  await page.goto(link.body.url);
  await page.getByRole('button', { name: 'Continue to the console' }).click();
  await page.waitForURL('**/console/health');
  return page;
}

describeInBrowser('the MSP console in Chromium', () => {
  it('signs in with a link; every page renders at laptop and phone width without serious accessibility problems', async () => {
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const page = await signedInPage(viewport);
      const problems: string[] = [];
      for (const p of PAGES) {
        await page.goto(`${svc.url}/console/${p}`);
        expect(await page.locator('h1').first().textContent()).toBeTruthy();
        await screenshot(page, SUITE, `${p}-${name}`);
        problems.push(...(await accessibilityProblems(page)).map((x) => `${p} (${name}): ${x}`));
        // Nothing wider than the screen but tables, which scroll in their own box.
        const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
        expect(overflow).toBeLessThanOrEqual(1);
      }
      expect(problems).toEqual([]);
      await page.context().close();
    }
  });

  it('turns a grant off: the ISV\'s ticket create is refused with grant_missing', async () => {
    expect((await ticket('Contoso Ltd')).status).toBe(200);
    const page = await signedInPage(LAPTOP);
    await page.goto(`${svc.url}/console/grants`);
    const form = page.locator('form', { has: page.locator('legend', { hasText: 'ConnectWise PSA' }) });
    await form.getByRole('checkbox', { name: /Create tickets/ }).uncheck();
    await form.getByRole('button', { name: /Save grants for/ }).click();
    await page.waitForURL('**/console/grants?done=saved**');
    await screenshot(page, SUITE, 'grants-saved');
    const refused = await ticket('Contoso Ltd');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('grant_missing');
    // And back on, through the same page.
    const again = page.locator('form', { has: page.locator('legend', { hasText: 'ConnectWise PSA' }) });
    await again.getByRole('checkbox', { name: /Create tickets/ }).check();
    await again.getByRole('button', { name: /Save grants for/ }).click();
    await page.waitForURL('**/console/grants?done=saved**');
    expect((await ticket('Contoso Ltd')).status).toBe(200);
    await page.context().close();
  });

  it('matches the ambiguous company after a preview: the ISV\'s ticket create for that name then previews', async () => {
    const before = await ticket('Lakeshore Family Dental');
    expect(before.status).toBe(409);
    expect(before.body.code).toBe('company_match_ambiguous');
    const page = await signedInPage(LAPTOP);
    await page.goto(`${svc.url}/console/identity`);
    const row = page.locator('tr', { has: page.locator('th', { hasText: 'cust-004' }) });
    // An option names the company, its PSA id and what tells it apart from the other of that name.
    await row.getByRole('combobox').selectOption((await row.locator('option', { hasText: 'Lakeshore Family Dental (19303)' }).getAttribute('value'))!);
    await row.getByRole('button', { name: 'Match…' }).click();
    await page.waitForURL('**/console/identity/preview');
    expect(await page.locator('ul.plan').textContent()).toContain('Lakeshore Family Dental');
    await screenshot(page, SUITE, 'identity-preview');
    expect((await ticket('Lakeshore Family Dental')).status).toBe(409);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/identity?**');
    expect(await page.locator('.notice.ok').textContent()).toContain('1 decision was recorded');
    const after = await ticket('Lakeshore Family Dental');
    expect(after.status).toBe(200);
    expect(after.body.dry_run).toBe(true);
    const match = (await msp(A('/audit?action=identity.match'))).body.audit[0];
    expect(match.detail).toMatchObject({ decided_by: 'msp', via: 'console' });
    await page.context().close();
  });

  it('previews and approves a charge: the agreement line has the new quantity at the ConnectWise simulator', async () => {
    const cw = svc.services.simulators!.connectwise as any;
    const [charge] = (await msp(A('/charges?status=pending'))).body.charges;
    const page = await signedInPage(LAPTOP);
    await page.goto(`${svc.url}/console/charges`);
    await page.locator(`form[action="/console/charges/${charge.id}/approve"] button`).click();
    const pre = page.locator('pre.request');
    expect(await page.locator('h1').textContent()).toContain('Approve: preview');
    expect(await page.locator('main').textContent()).toContain(`/finance/agreements/${charge.agreement_source_id}/additions/${charge.line_source_id}`);
    expect(JSON.parse((await pre.textContent())!)).toEqual(expect.arrayContaining([expect.objectContaining({ path: '/quantity', value: charge.proposed_quantity })]));
    await screenshot(page, SUITE, 'charges-approve-preview');
    const line = () => cw.list('sandbox-alpha', 'additions').find((x: any) => String(x.id) === charge.line_source_id);
    expect(line().quantity).toBe(charge.current_quantity);
    await page.getByRole('button', { name: 'Approve now' }).click();
    await page.waitForURL('**/console/charges?done=approved');
    expect(line().quantity).toBe(charge.proposed_quantity);
    await page.context().close();
  });

  it('dismisses a charge and restores it', async () => {
    const [charge] = (await msp(A('/charges?status=pending'))).body.charges;
    const page = await signedInPage(PHONE);
    await page.goto(`${svc.url}/console/charges`);
    await page.locator(`form[action="/console/charges/${charge.id}/dismiss"] button`).click();
    expect(await page.locator('main').textContent()).toContain('pending → dismissed');
    await screenshot(page, SUITE, 'charges-dismiss-preview');
    await page.getByRole('button', { name: 'Dismiss now' }).click();
    await page.waitForURL('**/console/charges?done=dismissed');
    expect((await msp(A(`/charges?status=dismissed`))).body.charges.map((c: any) => c.id)).toContain(charge.id);
    await page.locator(`form[action="/console/charges/${charge.id}/restore"] button`).click();
    await page.getByRole('button', { name: 'Restore now' }).click();
    await page.waitForURL('**/console/charges?done=restored');
    expect((await msp(A(`/charges?status=pending`))).body.charges.map((c: any) => c.id)).toContain(charge.id);
    await page.context().close();
  });

  it('downloads the reconciliation as CSV with the JSON\'s figures', async () => {
    const page = await signedInPage(LAPTOP);
    await page.goto(`${svc.url}/console/reconciliation`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    const csv = fs.readFileSync((await download.path())!, 'utf8');
    const start = await page.inputValue('#period_start');
    const end = await page.inputValue('#period_end');
    const json = (await msp(A(`/billing/reconciliation?period_start=${start}&period_end=${end}&limit=500`))).body;
    const [header, ...rows] = parseCsv(csv);
    const col = (r: string[], name: string) => Number(r[header!.indexOf(name)]);
    const data = rows.filter((r) => r[0] === 'row');
    expect(data.length).toBe(json.reconciliation.length);
    json.reconciliation.forEach((r: any, i: number) => {
      expect(col(data[i]!, 'revenue')).toBeCloseTo(r.revenue, 2);
      expect(col(data[i]!, 'margin')).toBeCloseTo(r.margin, 2);
    });
    const total = rows.find((r) => r[0] === 'total')!;
    expect(col(total, 'margin')).toBeCloseTo(json.totals.margin, 2);
    expect(col(total, 'partner_minimum_shortfall')).toBeGreaterThan(0);
    // A person reads the notes: no REST path in them, and every fix on the page is a console action.
    expect(rows.some((r) => r[0] === 'unresolved')).toBe(true);
    for (const r of rows) expect(r.join(' ')).not.toMatch(/\/tenants\/|\b(GET|POST|PUT|DELETE) \//);
    expect(await page.locator('main').textContent()).not.toMatch(/\/tenants\/|\b(GET|POST|PUT|DELETE) \//);
    for (const href of await page.locator('tr[data-reason] a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''))) expect(href.startsWith('/console/')).toBe(true);
    await page.context().close();
  });
});
