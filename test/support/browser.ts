/**
 * Browser tests of the service's own pages (docs/architecture.md, Pages): playwright-core driving Debian's
 * Chromium at /usr/bin/chromium (no browser download), headless. `.ci/run` installs Chromium with apt-get;
 * without it `npm test` skips these tests and says how to run them. Screenshots go under
 * test-output/<suite>/ so that a person can look at every step.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestService, type TestService } from './service';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const browserAvailable = fs.existsSync(CHROMIUM_PATH);

/** `describe`, or `describe.skip` with a line saying why and how to run the suite. */
export function describeInBrowser(name: string, fn: () => void): void {
  if (browserAvailable) {
    describe(name, fn);
    return;
  }
  console.warn(`skipped browser tests "${name}": no Chromium at ${CHROMIUM_PATH}. Install it with \`apt-get install -y chromium\` (bash .ci/run does) and run npm test again.`);
  describe.skip(name, fn);
}

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // The machine has no network but loopback: Chromium's own background connections are turned off.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}

export const LAPTOP = { width: 1366, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export async function newContext(browser: Browser, viewport: { width: number; height: number } = LAPTOP): Promise<BrowserContext> {
  return browser.newContext({ viewport, acceptDownloads: true });
}

/** Where a suite's screenshots and downloads go: test-output/<suite>/ (ignored by git). */
export function outputDir(suite: string): string {
  const dir = path.join(__dirname, '..', '..', 'test-output', suite);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A full-page screenshot named `<step>.png` under the suite's output folder. */
export async function screenshot(page: Page, suite: string, step: string): Promise<string> {
  const file = path.join(outputDir(suite), `${step}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2 A/AA rules). axe's source is
 * evaluated through the browser's debugging protocol, which the page's CSP does not govern, so the page is
 * checked exactly as it is served.
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  const source = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const result = await page.evaluate(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`) as {
    violations: { id: string; impact?: string | null; help: string; nodes: { target: unknown[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * The sandbox service and a Chromium for one describe block: started before its tests, closed after
 * them. Its `svc` and `browser` are there once `beforeAll` has run (read them inside tests and helpers).
 */
export function serviceAndBrowser(start: () => Promise<TestService> = () => startTestService()): { svc: TestService; browser: Browser } {
  const held = {} as { svc: TestService; browser: Browser };
  beforeAll(async () => {
    held.svc = await start();
    held.browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await held.browser?.close();
    await held.svc?.close();
  });
  return held;
}

/**
 * Signs `email` in to the ISV's console as a person would: the sign-in form, then the link of the newest
 * mail to that address in the sandbox's outbox (/dev/outbox), then Continue. Ends on /app.
 */
export async function signInToApp(page: Page, baseUrl: string, email: string): Promise<void> {
  await page.goto(`${baseUrl}/app`);
  await page.fill('#email', email);
  await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
  await page.goto(`${baseUrl}/dev/outbox`);
  await page.getByRole('link', { name: new RegExp(`\\(${email.replace(/[.]/g, '\\.')}\\)`) }).first().click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(/\/app$/);
}

/**
 * A page signed in to the sandbox alpha tenant's MSP console in a fresh browser context at `viewport`, as
 * the MSP's key hands a person in: a one-time console link, then Continue. Ends on /console/health.
 */
export async function signedInToConsole(world: { svc: TestService; browser: Browser }, viewport: { width: number; height: number }): Promise<Page> {
  const link = await world.svc.api(`/tenants/${world.svc.alphaId}/console-links`, { method: 'POST', key: world.svc.alphaMspKey });
  const page = await (await newContext(world.browser, viewport)).newPage();
  await page.goto(link.body.url);
  await page.getByRole('button', { name: 'Continue to the console' }).click();
  await page.waitForURL('**/console/health');
  return page;
}
