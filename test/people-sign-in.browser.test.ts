/**
 * People signing in, in Chromium (docs/architecture.md, People): the magic link is followed from the
 * message a real SMTP server on loopback received (the `smtp-server` package, SMTP_URL pointing at it);
 * the session id changes at sign-in; a sign-in form posted from another site (login CSRF) signs no one
 * in; invite -> accept -> member listed; the last owner cannot leave; a person of tenant A sees nothing
 * of tenant B; the same answer for unknown emails; the limit per client address. axe-core checks every
 * page at laptop and phone width (screenshots under test-output/people/).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { SMTPServer } from 'smtp-server';
import { accessibilityProblems, describeInBrowser, LAPTOP, launchBrowser, newContext, PHONE, screenshot } from './support/browser';
import { startTestService, type TestService } from './support/service';

const SUITE = 'people';
/** Sign-in requests one client address may make a minute in this suite (AUTH_FAILURES_PER_MINUTE). */
const PER_ADDRESS = 20;

let svc: TestService;
let browser: Browser;
let smtp: SMTPServer;
const inbox: { to: string; text: string }[] = [];

/** A message's text part as a person reads it (quoted-printable undone). */
function plainText(raw: string): string {
  const body = raw.slice(raw.indexOf('\r\n\r\n') + 4);
  return body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
}

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        for (const rcpt of session.envelope.rcptTo) inbox.push({ to: rcpt.address, text: plainText(Buffer.concat(chunks).toString('utf8')) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  svc = await startTestService({}, { env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'Sign-in <signin@service.example>', AUTH_FAILURES_PER_MINUTE: String(PER_ADDRESS) } });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

/** The link of the newest message to `to` that arrives after `after` messages were in the inbox (bounded wait). */
async function mailedLink(to: string, after: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mail = inbox.slice(after).reverse().find((m) => m.to === to);
    if (mail) return /https?:\/\/\S+/.exec(mail.text)![0];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail to ${to}`);
}

async function checked(page: Page, step: string, problems: string[]): Promise<void> {
  await screenshot(page, SUITE, step);
  problems.push(...(await accessibilityProblems(page)).map((p) => `${step}: ${p}`));
  const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
  expect([step, overflow <= 1]).toEqual([step, true]);
}

const sessionCookie = async (ctx: BrowserContext) => (await ctx.cookies()).find((c) => c.name === 'session')?.value ?? null;

/** Signs in by magic link through the pages; the page ends on the console it lands on. */
async function signInByMail(page: Page, area: 'console' | 'app', email: string, problems: string[] = [], step = ''): Promise<void> {
  await page.goto(`${svc.url}/${area}`);
  if (step) await checked(page, `${step}-sign-in`, problems);
  await page.locator('#email').fill(email);
  const before = inbox.length;
  await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
  if (step) await checked(page, `${step}-check-mail`, problems);
  await page.goto(await mailedLink(email, before));
  if (step) await checked(page, `${step}-continue`, problems);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(area === 'app' ? /\/app$/ : /\/console\/health$/);
}

describeInBrowser('people signing in, in Chromium', () => {
  it('follows the mailed link from a real SMTP server; the session id changes at sign-in; every page passes axe at laptop and phone width', async () => {
    const problems: string[] = [];
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const ctx = await newContext(browser, viewport);
      const page = await ctx.newPage();
      // First the sandbox's pasted key: a session of its own, then replaced by the person's.
      await page.goto(`${svc.url}/console`);
      await checked(page, `console-sign-in-${name}`, problems);
      await page.locator('#api_key').fill(svc.alphaMspKey);
      await page.getByRole('button', { name: 'Sign in with the key' }).click();
      await page.waitForURL(/\/console\/health$/);
      const keySession = await sessionCookie(ctx);
      expect(keySession).toBeTruthy();

      await signInByMail(page, 'app', 'owner@sandbox-isv.example', problems, `app-${name}`);
      const personSession = await sessionCookie(ctx);
      expect(personSession).toBeTruthy();
      expect(personSession).not.toBe(keySession);
      // The replaced session is over.
      const old = await fetch(`${svc.url}/console/health`, { headers: { cookie: `session=${keySession}` }, redirect: 'manual' });
      expect(old.status).toBe(401);
      await checked(page, `app-landing-${name}`, problems);
      await page.getByRole('link', { name: 'Members', exact: true }).first().click();
      await page.waitForURL(/\/app\/members$/);
      await checked(page, `app-members-${name}`, problems);
      await page.goto(`${svc.url}/sign-in/choose`);
      await checked(page, `chooser-${name}`, problems);
      await ctx.close();
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('refuses login CSRF: a page on another site auto-posting its MSP key signs no one in', async () => {
    const attacker = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(`<!doctype html><title>Win a prize</title><form id="f" method="post" action="${svc.url}/console/sign-in">
<input name="api_key" value="${svc.betaMspKey}"><input name="csrf" value="forged"></form><script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const ctx = await newContext(browser, LAPTOP);
      const page = await ctx.newPage();
      // The victim has visited the console (a pre-session cookie), then opens the attacker's page (another site: localhost).
      await page.goto(`${svc.url}/console`);
      await page.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
      await page.getByRole('heading', { name: 'Refused' }).waitFor();
      expect(await sessionCookie(ctx)).toBeNull();
      await page.goto(`${svc.url}/console/health`);
      expect(await page.getByRole('heading', { level: 1, name: /Sign in/ }).count()).toBe(1);
      await ctx.close();
    } finally {
      await new Promise<void>((resolve) => attacker.close(() => resolve()));
    }
  }, 180_000);

  it('invite -> accept -> member listed; the last owner cannot leave; tenant A shows nothing of tenant B', async () => {
    const problems: string[] = [];
    const owner = await (await newContext(browser, LAPTOP)).newPage();
    await signInByMail(owner, 'console', 'owner@sandbox-alpha.example');
    await owner.goto(`${svc.url}/console/members`);
    await checked(owner, 'console-members-owner', problems);
    await owner.getByLabel('Email', { exact: true }).fill('new.tech@alpha.example');
    await owner.getByLabel('Role', { exact: true }).selectOption('admin');
    const before = inbox.length;
    await owner.getByRole('button', { name: 'Send the invitation' }).click();
    await owner.getByText('Invitation mailed to new.tech@alpha.example').waitFor();

    const invitee = await (await newContext(browser, PHONE)).newPage();
    await invitee.goto(await mailedLink('new.tech@alpha.example', before));
    await checked(invitee, 'invitation-phone', problems);
    await invitee.getByLabel('Your name').fill('New Tech');
    await invitee.getByRole('button', { name: 'Accept and sign in' }).click();
    await invitee.waitForURL(/\/console\/health$/);
    for (const p of ['health', 'members', 'audit']) {
      await invitee.goto(`${svc.url}/console/${p}`);
      expect(await invitee.content()).not.toContain('Sandbox Beta');
    }

    await owner.goto(`${svc.url}/console/members`);
    const row = owner.getByRole('row', { name: /new\.tech@alpha\.example/ });
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('admin');
    // The owner is the last owner: leaving is refused and they stay.
    await owner.getByRole('row', { name: /owner@sandbox-alpha\.example/ }).getByRole('button', { name: 'Leave' }).click();
    await owner.getByText('This is the last owner').waitFor();
    await checked(owner, 'console-last-owner', problems);
    await owner.goto(`${svc.url}/console/members`);
    expect(await owner.getByRole('row', { name: /owner@sandbox-alpha\.example/ }).getByRole('cell').nth(2).textContent()).toBe('owner');
    expect(problems).toEqual([]);
  }, 180_000);

  it('answers the same for unknown emails, and limits the requests of one client address', async () => {
    const ctx = await newContext(browser, LAPTOP);
    const page = await ctx.newPage();
    const answerFor = async (email: string) => {
      await page.goto(`${svc.url}/app`);
      await page.locator('#email').fill(email);
      await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
      await page.locator('main').waitFor();
      return page.locator('main').innerText();
    };
    const mails = inbox.length;
    const unknown = await answerFor('nobody@unknown.example');
    const known = await answerFor('owner@sandbox-beta.example');
    expect(unknown).toBe(known);
    await mailedLink('owner@sandbox-beta.example', mails);
    expect(inbox.slice(mails).map((m) => m.to)).toEqual(['owner@sandbox-beta.example']);
    // Then the address's limit: distinct emails, so that the per-email limit is not what answers. The
    // window is a fixed minute that may end during the loop: twice the limit fills one window whole.
    let limited = false;
    for (let i = 0; i < 2 * PER_ADDRESS + 2 && !limited; i++) limited = (await answerFor(`n${i}@unknown.example`)).includes('Too many sign-in requests');
    expect(limited).toBe(true);
    const problems = await accessibilityProblems(page);
    await screenshot(page, SUITE, 'rate-limited');
    expect(problems).toEqual([]);
    await ctx.close();
  }, 180_000);
});
