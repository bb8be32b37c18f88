/**
 * Identity in the MSP's console, in Chromium, as a person at the MSP would use it (docs/architecture.md, Connect sessions and console):
 * a leftover customer whose name is not the PSA company's ("Fourth Coffee Roasters Limited" for the PSA's
 * "Fourth Coffee") is found by search, matched after a preview, then unmatched from the matched table;
 * a reconciliation row's fix (an unmatched customer) is done from the reconciliation page; two leftovers
 * are matched at once with their best candidates after a preview of the list. axe finds no violation at
 * laptop and phone width; the identity page's screenshots go to docs/images/console-identity-*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, PHONE, screenshot, serviceAndBrowser, signedInToConsole } from './support/browser';

const SUITE = 'console-identity';
const DOCS = path.join(__dirname, '..', 'docs', 'images');
const world = serviceAndBrowser();
const cw: { id: number; name: string }[] = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'sandbox-alpha', 'connectwise', 'companies.json'), 'utf8'));
const idOf = (name: string) => String(cw.find((c) => c.name === name)!.id);
const A = (p: string) => `/tenants/${world.svc.alphaId}${p}`;
const mappings = async (): Promise<any[]> => (await world.svc.api(A('/identity/mappings'))).body.mappings;

const signedIn = (viewport: { width: number; height: number }): Promise<Page> => signedInToConsole(world, viewport);

/** Every WCAG A/AA violation axe finds, whatever its impact (the shared helper keeps serious and critical). */
async function axeViolations(page: Page, where: string): Promise<string[]> {
  const serious = await accessibilityProblems(page);
  const all = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`) as { violations: { id: string; help: string }[] };
  return [...serious, ...all.violations.map((v) => `${v.id}: ${v.help}`)].map((p) => `${where}: ${p}`);
}

async function noOverflow(page: Page): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number).toBeLessThanOrEqual(1);
}

describeInBrowser('identity in the MSP console', () => {
  beforeAll(async () => {
    // The ISV pushes a customer whose name is not the PSA company's: auto-match leaves it to a person.
    const push = await world.svc.api(A('/identity/book'), { method: 'PUT', json: { customers: [{ ref: 'cust-300', name: 'Fourth Coffee Roasters Limited' }] } });
    expect(push.status).toBe(200);
  });

  it('finds the company of a differently named leftover by search, matches it after a preview, then unmatches it', async () => {
    const problems: string[] = [];
    for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const page = await signedIn(viewport);
      await page.goto(`${world.svc.url}/console/identity`);
      await page.locator('main').getByText('Fourth Coffee Roasters Limited').first().waitFor();
      await page.screenshot({ path: path.join(DOCS, `console-identity-${width}.png`), fullPage: true });
      problems.push(...await axeViolations(page, `identity (${width})`));
      await noOverflow(page);
      await page.context().close();
    }

    const page = await signedIn(LAPTOP);
    await page.goto(`${world.svc.url}/console/identity`);
    const row = page.locator('tr', { has: page.locator('th', { hasText: 'cust-300' }) });
    await row.getByRole('link', { name: 'Find another PSA company…' }).click();
    await page.waitForURL('**/console/identity/find?**');
    expect(await page.locator('h1').textContent()).toBe('Match Fourth Coffee Roasters Limited');
    await page.getByLabel('Search PSA companies by name').fill('fourth coffee');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**q=fourth+coffee**');
    const hit = page.locator('tbody tr').first();
    expect(await hit.locator('th').textContent()).toBe('Fourth Coffee');
    expect(await hit.textContent()).toContain('Denver');
    problems.push(...await axeViolations(page, 'find (laptop)'));
    await screenshot(page, SUITE, 'find-laptop');
    await hit.getByRole('button', { name: `Match Fourth Coffee Roasters Limited with Fourth Coffee (${idOf('Fourth Coffee')})` }).click();
    await page.waitForURL('**/console/identity/preview');
    const plan = await page.locator('ul.plan').textContent();
    expect(plan).toContain('Fourth Coffee Roasters Limited');
    expect(plan).toContain('The names differ');
    problems.push(...await axeViolations(page, 'preview (laptop)'));
    expect((await mappings()).some((m) => m.customer_ref === 'cust-300')).toBe(false);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/identity?**');
    expect(await page.locator('.notice.ok').textContent()).toContain('1 decision was recorded');
    expect((await mappings()).find((m) => m.customer_ref === 'cust-300')).toMatchObject({ company_source_id: idOf('Fourth Coffee'), how: 'manual', decided_by: 'msp' });

    // A mistake is undone from the matched table, after a preview.
    await page.getByRole('button', { name: 'Unmatch Fourth Coffee Roasters Limited from Fourth Coffee' }).click();
    await page.waitForURL('**/console/identity/preview');
    expect(await page.locator('ul.plan').textContent()).toContain('Unmatch ISV customer Fourth Coffee Roasters Limited');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/identity?**');
    expect((await mappings()).some((m) => m.customer_ref === 'cust-300')).toBe(false);
    expect(await page.locator('tr', { has: page.locator('th', { hasText: 'cust-300' }) }).locator('.badge').textContent()).toBe('needs match');
    await page.context().close();

    // The find page and the preview at phone width.
    const phone = await signedIn(PHONE);
    await phone.goto(`${world.svc.url}/console/identity/find?side=isv_customer&id=cust-004`);
    expect(await phone.locator('tbody tr').count()).toBeGreaterThanOrEqual(2);
    // Two companies of one name show what tells them apart.
    const dental = await phone.locator('tbody tr', { hasText: 'Lakeshore Family Dental' }).allTextContents();
    expect(dental.join(' ')).toContain('Evanston');
    expect(dental.join(' ')).toContain('Oak Park');
    problems.push(...await axeViolations(phone, 'find (phone)'));
    await noOverflow(phone);
    await screenshot(phone, SUITE, 'find-phone');
    await phone.context().close();
    expect(problems).toEqual([]);
  }, 240_000);

  it('does a reconciliation row\'s fix on the page: the unmatched customer is matched from there', async () => {
    const problems: string[] = [];
    const page = await signedIn(LAPTOP);
    await page.goto(`${world.svc.url}/console/reconciliation`);
    const period = `period_start=${await page.inputValue('#period_start')}&period_end=${await page.inputValue('#period_end')}`;
    const unresolved = async () => (await world.svc.api(A(`/billing/reconciliation?${period}&limit=500`), { key: world.svc.alphaMspKey })).body.unresolved as any[];
    expect((await unresolved()).find((u) => u.external_customer_ref === 'cust-005')).toMatchObject({ reason: 'customer_unmatched' });
    // No API path is shown to a person.
    expect(await page.locator('main').textContent()).not.toMatch(/\/tenants\/|POST |GET /);
    problems.push(...await axeViolations(page, 'reconciliation (laptop)'));
    // A quantity that differs opens its charge.
    const charge = page.getByRole('link', { name: 'Open the charge' }).first();
    const href = await charge.getAttribute('href');
    expect(href).toMatch(/^\/console\/charges#ch-/);
    await page.getByRole('link', { name: 'Match customer cust-005…' }).click();
    await page.waitForURL('**/console/identity/find?**');
    expect(await page.locator('h1').textContent()).toBe('Match Zephyr Analytics');
    await page.getByLabel('Search PSA companies by name').fill('trey');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL('**q=trey**');
    await page.getByRole('button', { name: `Match Zephyr Analytics with Trey Research (${idOf('Trey Research')})` }).click();
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/identity?**');
    expect((await unresolved()).some((u) => u.external_customer_ref === 'cust-005' && u.reason === 'customer_unmatched')).toBe(false);
    await page.goto(`${world.svc.url}/console/reconciliation`);
    expect(await page.getByRole('link', { name: 'Match customer cust-005…' }).count()).toBe(0);
    await page.goto(`${world.svc.url}${href}`);
    expect(await page.locator(href!.slice(href!.indexOf('#'))).isVisible()).toBe(true);
    await page.context().close();

    const phone = await signedIn(PHONE);
    await phone.goto(`${world.svc.url}/console/reconciliation`);
    problems.push(...await axeViolations(phone, 'reconciliation (phone)'));
    await phone.context().close();
    expect(problems).toEqual([]);
  });

  it('matches two leftovers at once with their best candidates, after a preview of the list', async () => {
    const page = await signedIn(PHONE);
    await page.goto(`${world.svc.url}/console/identity`);
    for (const ref of ['cust-300', 'cust-004']) {
      await page.locator('tr', { has: page.locator('th', { hasText: ref }) }).getByRole('checkbox').check();
    }
    await page.getByRole('group', { name: 'With the ticked rows' }).getByRole('button', { name: 'Match…' }).click();
    await page.waitForURL('**/console/identity/preview');
    const items = await page.locator('ul.plan li').allTextContents();
    expect(items).toHaveLength(2);
    expect(items.join('\n')).toContain('Fourth Coffee Roasters Limited');
    expect(items.join('\n')).toContain('Lakeshore Family Dental');
    expect((await axeViolations(page, 'bulk preview (phone)'))).toEqual([]);
    await screenshot(page, SUITE, 'bulk-preview-phone');
    expect((await mappings()).some((m) => m.customer_ref === 'cust-300' || m.customer_ref === 'cust-004')).toBe(false);
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.waitForURL('**/console/identity?**');
    expect(await page.locator('.notice.ok').textContent()).toContain('2 decisions were recorded');
    const now = await mappings();
    expect(now.find((m) => m.customer_ref === 'cust-300')).toMatchObject({ company_source_id: idOf('Fourth Coffee'), decided_by: 'msp' });
    expect(idOfAll('Lakeshore Family Dental')).toContain(now.find((m) => m.customer_ref === 'cust-004')?.company_source_id);
    await page.context().close();
  });
});

function idOfAll(name: string): string[] {
  return cw.filter((c) => c.name === name).map((c) => String(c.id));
}
