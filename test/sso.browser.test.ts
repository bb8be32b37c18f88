/**
 * Single sign-on in Chromium against a real OpenID provider on loopback (docs/architecture.md, Single
 * sign-on): an owner signed in by magic link sets it up on the console's settings page; a member then
 * signs in with it (the full round trip: our sign-in page, the provider's sign-in and consent, the
 * callback, the console). A tampered `state`, a tampered `nonce` (the provider's ID token then carries
 * another one), an email outside the configured domains, a sign-in cancelled at the provider, a replayed
 * callback and a reused code are each refused with nobody signed in; someone of the domain without a
 * membership needs an invitation unless the owner lets new people join as viewers; and the domain's magic
 * link is refused while SSO is required. Pages are checked with axe-core at 1280 and 390 pixels wide
 * (screenshots under test-output/sso/).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, launchBrowser, newContext, PHONE, screenshot } from './support/browser';
import { startOidcProvider, type TestProvider } from './support/oidc-provider';
import { startTestService, type TestService } from './support/service';

const SUITE = 'sso';
/** The widths the brief names for the accessibility checks: a 1280-pixel laptop and a 390-pixel phone. */
const LAPTOP = { width: 1280, height: 900 } as const;
const OWNER = 'olivia@acme.test';
const MEMBER = 'alice@acme.test';
const NEWCOMER = 'nina@acme.test';
const FOREIGN = 'mallory@evil.test';

let svc: TestService;
let provider: TestProvider;
let browser: Browser;
const problems: string[] = [];

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  provider = await startOidcProvider({
    redirectUri: `${svc.url}/sign-in/oidc/callback`,
    accounts: {
      [MEMBER]: { email: MEMBER, email_verified: true, name: 'Alice Member' },
      [NEWCOMER]: { email: NEWCOMER, email_verified: true, name: 'Nina Newcomer' },
      [FOREIGN]: { email: FOREIGN, email_verified: true, name: 'Mallory' },
    },
  });
  // The organisations' people, as invitations accepted earlier would have left them.
  const people = svc.services.peopleStore;
  const owner = await people.ensurePerson(OWNER, 'Olivia Owner');
  await people.addMembership(owner.id, { kind: 'tenant', id: svc.alphaId }, 'owner');
  await people.addMembership(owner.id, { kind: 'isv', id: svc.sandbox!.isvId }, 'owner');
  const member = await people.ensurePerson(MEMBER, 'Alice Member');
  await people.addMembership(member.id, { kind: 'tenant', id: svc.alphaId }, 'admin');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await provider?.close();
  await svc?.close();
});

async function checked(page: Page, step: string): Promise<void> {
  await screenshot(page, SUITE, step);
  problems.push(...(await accessibilityProblems(page)).map((p) => `${step}: ${p}`));
}

/** The magic link from the local outbox, opened and continued: the owner's session. */
async function ownerSignedIn(context: BrowserContext, area: 'console' | 'app', org: { kind: 'tenant' | 'isv'; id: string }): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${svc.url}/sign-in?area=${area}`);
  await page.locator('#email').fill(OWNER);
  await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
  await page.getByText('Check your mail').first().waitFor();
  const mail = (await svc.services.outbox.latest(10)).find((m) => m.to === OWNER)!;
  await page.goto(/https?:\/\/\S+/.exec(mail.text)![0]);
  await page.getByRole('button', { name: 'Continue' }).click();
  // An owner of two organisations chooses one.
  if (page.url().endsWith('/sign-in/choose')) {
    await page.locator('form', { has: page.locator(`input[name="org_id"][value="${org.id}"]`) }).getByRole('button').click();
  }
  await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
  return page;
}

/** Our sign-in page's SSO form for `email`; the page then continues to the provider's sign-in form. */
async function startSso(page: Page, email: string): Promise<void> {
  await page.goto(`${svc.url}/sign-in?area=console`);
  await page.locator('#sso_email').fill(email);
  await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
  await page.waitForURL(`${provider.issuer}/**`);
}

/** The provider's development sign-in (any password; the login names the account) and its consent. */
async function signInAtProvider(page: Page, login?: string): Promise<void> {
  if (login) await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  const consent = page.getByRole('button', { name: 'Continue' });
  await Promise.race([consent.waitFor().then(() => consent.click()), page.waitForURL(`${svc.url}/**`)]);
  await page.waitForURL(`${svc.url}/**`);
}

/** Whether the browser holds a live session: the console opens, or answers its sign-in page. */
async function signedIn(context: BrowserContext): Promise<boolean> {
  const res = await context.request.get(`${svc.url}/console/health`, { maxRedirects: 0 });
  return res.status() === 200 && !(await res.text()).includes('Mail me a sign-in link');
}

async function refusedPage(page: Page, text: RegExp): Promise<void> {
  await page.getByRole('heading', { name: /Not signed in|Invitation needed/ }).waitFor();
  expect(await page.getByRole('alert').textContent()).toMatch(text);
}

describeInBrowser('single sign-on in Chromium', () => {
  it('an owner sets it up on the settings page of each console; the secret is never shown again', async () => {
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const context = await newContext(browser, viewport);
      const page = await ownerSignedIn(context, 'app', { kind: 'isv', id: svc.sandbox!.isvId });
      await page.goto(`${svc.url}/app/settings/sso`);
      await page.getByRole('heading', { name: 'Single sign-on' }).waitFor();
      await checked(page, `app-settings-${name}`);
      await context.close();
    }
    const context = await newContext(browser, LAPTOP);
    const page = await ownerSignedIn(context, 'console', { kind: 'tenant', id: svc.alphaId });
    await page.goto(`${svc.url}/console/settings/sso`);
    await checked(page, 'console-settings-empty');
    await page.locator('#issuer').fill(provider.issuer);
    await page.locator('#client_id').fill(provider.clientId);
    await page.locator('#client_secret').fill(provider.clientSecret);
    await page.locator('#domains').fill('acme.test');
    await page.locator('#require_sso').check();
    await page.getByRole('button', { name: 'Save single sign-on' }).click();
    await page.getByText('Saved.').waitFor();
    await checked(page, 'console-settings-saved');
    expect(await page.content()).not.toContain(provider.clientSecret);
    expect(await page.locator('#client_secret').inputValue()).toBe('');
    expect(await page.locator('#require_sso').isChecked()).toBe(true);
    // A form without the session's token changes nothing.
    const forged = await context.request.post(`${svc.url}/console/settings/sso/remove`, { form: { csrf: 'forged' }, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    expect(await svc.services.sso.ssoRequiredFor(MEMBER)).toBe(true);
    await context.close();
  });

  it('a member signs in through the provider and lands in the console (the full round trip)', async () => {
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const context = await newContext(browser, viewport);
      const page = await context.newPage();
      await page.goto(`${svc.url}/sign-in?area=console`);
      await checked(page, `sign-in-${name}`);
      let authorize: URL | null = null;
      page.on('request', (r) => { if (r.url().startsWith(`${provider.issuer}/auth?`)) authorize = new URL(r.url()); });
      await startSso(page, MEMBER);
      // The provider was asked for this email, with PKCE (S256), a state and a nonce.
      const asked = Object.fromEntries(authorize!.searchParams);
      expect(asked).toMatchObject({ login_hint: MEMBER, code_challenge_method: 'S256', response_type: 'code', redirect_uri: `${svc.url}/sign-in/oidc/callback` });
      expect(asked.state && asked.nonce && asked.code_challenge).toBeTruthy();
      await signInAtProvider(page);
      await page.waitForURL('**/console/health');
      expect(await page.content()).toContain(MEMBER);
      expect(await signedIn(context)).toBe(true);
      await checked(page, `console-after-sso-${name}`);
      await context.close();
    }
  });

  it('a tampered state is refused and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    provider.tamper.callback = (url) => url.searchParams.set('state', `${url.searchParams.get('state')}x`);
    await startSso(page, MEMBER);
    await signInAtProvider(page).finally(() => { provider.tamper.callback = undefined; provider.tamper.authorizeQuery = undefined; });
    await refusedPage(page, /did not pass our checks/);
    await checked(page, 'refused-state');
    expect(await signedIn(context)).toBe(false);
    await context.close();
  });

  it('a tampered nonce (the ID token carries another one) is refused and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    provider.tamper.authorizeQuery = (query) => query.set('nonce', 'a-nonce-of-the-attacker');
    await startSso(page, MEMBER);
    await signInAtProvider(page).finally(() => { provider.tamper.callback = undefined; provider.tamper.authorizeQuery = undefined; });
    await refusedPage(page, /did not pass our checks/);
    expect(await signedIn(context)).toBe(false);
    await context.close();
  });

  it('an email outside the configured domains is refused and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    await startSso(page, MEMBER);
    await signInAtProvider(page, FOREIGN);
    await refusedPage(page, /outside the domains/);
    expect(await signedIn(context)).toBe(false);
    await context.close();
  });

  it('a sign-in cancelled at the provider is told as such and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    await startSso(page, MEMBER);
    await page.getByRole('link', { name: '[ Cancel ]' }).click();
    await refusedPage(page, /did not sign you in/);
    expect(await signedIn(context)).toBe(false);
    await context.close();
  });

  it('a replayed callback and a reused code are refused and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    let callback = '';
    page.on('request', (r) => { if (r.url().startsWith(`${svc.url}/sign-in/oidc/callback`)) callback = r.url(); });
    await startSso(page, MEMBER);
    await signInAtProvider(page);
    await page.waitForURL('**/console/health');
    const used = new URL(callback);
    expect(used.searchParams.get('code')).toBeTruthy();

    // The same callback again: its attempt is spent.
    const fresh = await newContext(browser, LAPTOP);
    const again = await fresh.newPage();
    await again.goto(callback);
    await refusedPage(again, /already used|another browser/);
    expect(await signedIn(fresh)).toBe(false);

    // A new attempt in that browser (its own state), answered with the old code: the provider refuses it.
    let state = '';
    await again.route(`${provider.issuer}/auth?**`, (route) => {
      state = new URL(route.request().url()).searchParams.get('state')!;
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>held</title><p>held by the test</p>' });
    });
    await startSso(again, MEMBER);
    await again.unrouteAll();
    expect(state).toBeTruthy();
    used.searchParams.set('state', state);
    await again.goto(used.href);
    await refusedPage(again, /did not pass our checks/);
    expect(await signedIn(fresh)).toBe(false);
    await context.close();
    await fresh.close();
  });

  it('an expired code is refused and nobody is signed in', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    // The provider's answer is held (the browser is sent elsewhere) until its code, issued with a 1 s
    // lifetime, has expired; then the browser follows it.
    let held = '';
    provider.tamper.codeTtlSeconds = 1;
    provider.tamper.callback = (url) => { held = url.href; url.pathname = '/healthz'; url.search = ''; };
    await startSso(page, MEMBER);
    await signInAtProvider(page).finally(() => { provider.tamper.callback = undefined; provider.tamper.codeTtlSeconds = undefined; });
    expect(new URL(held).searchParams.get('code')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 2500));
    await page.goto(held);
    await refusedPage(page, /did not pass our checks/);
    expect(await signedIn(context)).toBe(false);
    await context.close();
  });

  it('someone of the domain without a membership needs an invitation, unless the owner lets them join as viewer', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    await startSso(page, NEWCOMER);
    await signInAtProvider(page);
    await refusedPage(page, /not a member/);
    await checked(page, 'refused-invitation-needed');
    expect(await signedIn(context)).toBe(false);
    expect(await svc.services.peopleStore.personByEmail(NEWCOMER)).toBeNull();

    const current = (await svc.services.sso.view({ kind: 'tenant', id: svc.alphaId }))!;
    await svc.services.sso.save({ kind: 'tenant', id: svc.alphaId }, {
      issuer: current.issuer, clientId: current.clientId, clientSecret: '', domains: current.domains.join('\n'), requireSso: true, allowJoin: true,
    }, null);
    // A new browser: the provider would otherwise remember the sign-in and consent of the first.
    await context.close();
    const joining = await newContext(browser, LAPTOP);
    const second = await joining.newPage();
    await startSso(second, NEWCOMER);
    await signInAtProvider(second);
    await second.waitForURL('**/console/health');
    expect(await signedIn(joining)).toBe(true);
    const person = (await svc.services.peopleStore.personByEmail(NEWCOMER))!;
    expect((await svc.services.peopleStore.membership(person.id, { kind: 'tenant', id: svc.alphaId }))?.role).toBe('viewer');
    await joining.close();
  });

  it('while SSO is required for the domain, its magic link is refused and says to use SSO', async () => {
    const context = await newContext(browser, LAPTOP);
    const page = await context.newPage();
    const before = (await svc.services.outbox.latest(100)).filter((m) => m.to === MEMBER).length;
    await page.goto(`${svc.url}/sign-in?area=console`);
    await page.locator('#email').fill(MEMBER);
    await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
    await page.getByText(/requires single sign-on/).waitFor();
    await checked(page, 'magic-link-refused');
    expect((await svc.services.outbox.latest(100)).filter((m) => m.to === MEMBER)).toHaveLength(before);
    await context.close();
  });

  it('no page had a serious or critical accessibility problem', () => {
    expect(problems).toEqual([]);
  });
});
