/**
 * The GraphQL explorer in Chromium (docs/architecture.md, Pages): GET /graphql serves GraphiQL from our
 * own assets under the page CSP (nothing blocked); given the admin token, or an API key sent as
 * X-API-Key, a query typed with autocompletion (part of a field name, the suggestion accepted with the
 * keyboard) runs and its answer shows. axe-core checks the whole page, GraphiQL included: our overrides
 * (explorer-script.ts) fix what GraphiQL 3.8 lacks (names of its editors' textareas, keyboard access to
 * what scrolls, colours under AA contrast).
 */
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, launchBrowser, newContext, screenshot } from './support/browser';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  svc = await startTestService();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function explorer(blocked: string[]): Promise<Page> {
  const page = await (await newContext(browser, LAPTOP)).newPage();
  page.on('console', (m) => { if (/Content Security Policy|Refused to/i.test(m.text())) blocked.push(m.text()); });
  page.on('pageerror', (e) => blocked.push(String(e)));
  const res = await page.goto(`${svc.url}/graphql`);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  return page;
}

/** Types `partial` in the query editor, waits for GraphiQL's suggestion list and accepts it with Enter. */
async function typeWithHint(page: Page, partial: string, expected: string): Promise<void> {
  await page.keyboard.type(partial, { delay: 30 });
  const hint = page.locator('.CodeMirror-hints .CodeMirror-hint-active');
  await hint.waitFor({ timeout: 15_000 });
  expect(await hint.textContent()).toBe(expected);
  await page.keyboard.press('Enter');
}

async function runAndRead(page: Page): Promise<string> {
  await page.keyboard.press('Control+Enter');
  const result = page.locator('.graphiql-response .CodeMirror-code');
  for (let i = 0; i < 200; i++) {
    const text = (await result.textContent().catch(() => '')) ?? '';
    if (text.includes('"data"') || text.includes('"errors"')) return text;
    await page.waitForTimeout(50);
  }
  return (await result.textContent()) ?? '';
}

async function clearEditor(page: Page): Promise<void> {
  await page.locator('.graphiql-query-editor .CodeMirror').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
}

describeInBrowser('the GraphQL explorer in Chromium', () => {
  beforeAll(async () => { browser = await launchBrowser(); });

  it('loads GraphiQL from local assets; with the admin token, a query typed with autocompletion runs', async () => {
    const blocked: string[] = [];
    const page = await explorer(blocked);
    // Before a token is given: our form only, focused, and no serious accessibility problem in it.
    await page.getByLabel('Token or key').waitFor();
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Send as').selectOption('admin');
    await page.getByLabel('Token or key').fill(svc.config.adminToken);
    await page.getByRole('button', { name: 'Use it' }).click();
    await page.locator('.graphiql-container').waitFor();
    await screenshot(page, 'graphql-explorer', 'loaded');

    await clearEditor(page);
    await page.keyboard.type('{ ', { delay: 30 });
    await typeWithHint(page, 'connect', 'connectors');
    await page.keyboard.type(' { ', { delay: 30 });
    await typeWithHint(page, 'grant_', 'grant_keys');
    const answer = await runAndRead(page);
    await screenshot(page, 'graphql-explorer', 'answered');
    expect(answer).toContain('"grant_keys"');
    expect(answer).toContain('psa.ticket.create');
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(blocked).toEqual([]);
    await page.context().close();
  }, 180_000);

  it('sends an API key as X-API-Key: the ISV key reads its tenants; a wrong key is refused', async () => {
    const blocked: string[] = [];
    const page = await explorer(blocked);
    await page.getByLabel('Send as').selectOption('key');
    await page.getByLabel('Token or key').fill(svc.key);
    await page.getByRole('button', { name: 'Use it' }).click();
    await page.locator('.graphiql-container').waitFor();
    await clearEditor(page);
    await page.keyboard.type('{ ', { delay: 30 });
    await typeWithHint(page, 'list_ten', 'list_tenants');
    await page.keyboard.type(' { tenants { name } } }', { delay: 10 });
    const answer = await runAndRead(page);
    expect(answer).toContain('Sandbox Alpha MSP');
    expect(blocked).toEqual([]);

    await page.getByRole('button', { name: 'Forget it' }).click();
    await page.getByLabel('Send as').selectOption('key');
    await page.getByLabel('Token or key').fill('sk_isv_not_a_key');
    await page.getByRole('button', { name: 'Use it' }).click();
    await page.locator('.graphiql-container').waitFor();
    await expect(page.locator('#gx-status')).toBeDefined();
    for (let i = 0; i < 200 && !/refused/.test((await page.textContent('#gx-status')) ?? ''); i++) await page.waitForTimeout(50);
    expect(await page.textContent('#gx-status')).toMatch(/refused that token or key \(401\)/);
    await page.context().close();
  }, 180_000);
});
