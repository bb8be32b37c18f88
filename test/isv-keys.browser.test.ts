/**
 * The ISV's API keys page in Chromium (design: the ISV's console and its API twins, "Keys"): the sandbox
 * ISV's owner signs in by magic link (the outbox), creates a key (shown once; a reload mints nothing
 * more) and calls the API with it (GET /me answers the ISV), rotates it with a 1-hour overlap (both keys
 * work; once the overlap is over, on the service's clock, which the test moves instead of waiting, the
 * old key answers 401), and revokes the new one (401). Every change is audited with the owner as actor and
 * no key in the log. A developer of the ISV sees the list and cannot mint. axe at laptop and phone
 * width; screenshots in docs/images/isv-keys-*.png and test-output/isv-keys/.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { SANDBOX_ISV_OWNER } from '../src/people/sandbox-people';
import { accessibilityProblems, describeInBrowser, LAPTOP, newContext, PHONE, screenshot, serviceAndBrowser, signInToApp } from './support/browser';
import { startTestService } from './support/service';
import { ISV_CONSOLE_PAGES } from '../src/isv-console/pages';

const SUITE = 'isv-keys';
const DEVELOPER = 'developer@sandbox-isv.example';
const IMAGES = path.join(__dirname, '..', 'docs', 'images');
const HOUR = 3_600_000;

/** How far the service's clock is ahead of the wall clock. */
let shift = 0;

describeInBrowser('the ISV keys page in Chromium', () => {
  const t = serviceAndBrowser(() => startTestService({}, { now: () => Date.now() + shift }));
  let isvId: string;

  beforeAll(async () => {
    isvId = (await t.svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const dev = await t.svc.services.peopleStore.ensurePerson(DEVELOPER, 'Sandbox developer');
    await t.svc.services.peopleStore.addMembership(dev.id, { kind: 'isv', id: isvId }, 'developer');
  });

  const signIn = (page: Page, email: string) => signInToApp(page, t.svc.url, email);

  async function checked(page: Page, step: string): Promise<void> {
    await screenshot(page, SUITE, step);
    expect([step, await accessibilityProblems(page)]).toEqual([step, []]);
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
    expect([step, overflow <= 1]).toEqual([step, true]);
  }

  const me = (key: string) => t.svc.api('/me', { key });
  const row = (page: Page, prefix: string) => page.getByRole('row', { name: new RegExp(prefix.replace(/[-]/g, '\\-')) });

  it('an owner creates a key, uses it, rotates it with an overlap and revokes the new one', async () => {
    const page = await (await newContext(t.browser, LAPTOP)).newPage();
    await signIn(page, SANDBOX_ISV_OWNER);
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    await page.waitForURL(/\/app\/keys$/);
    await checked(page, '01-keys-laptop');

    // Create: the key once, with its Copy button; a reload of the answer sends the form again and mints nothing more.
    await page.getByLabel('Name', { exact: true }).fill('CI pipeline');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    const first = (await page.locator('#new-key').textContent())!.trim();
    expect(first).toMatch(/^sk_live_/);
    await page.getByRole('button', { name: 'Copy the key' }).waitFor();
    await checked(page, '02-created-laptop');
    page.once('dialog', (d) => void d.accept());
    await page.reload();
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    expect((await page.locator('#new-key').textContent())!.trim()).toBe(first);
    expect(await page.textContent('main')).toContain('Already done');
    const named: { n: number }[] = await t.svc.services.ds.query("SELECT count(*)::int AS n FROM api_keys WHERE isv_id = $1 AND label = 'CI pipeline'", [isvId]);
    expect(named[0]!.n).toBe(1);

    // The key works: GET /me answers its ISV; the list names who made it and, soon after, its last use.
    expect(await me(first)).toMatchObject({ status: 200, body: { kind: 'isv', id: isvId, name: 'Sandbox ISV' } });
    const firstPrefix = first.slice(0, 12);
    await page.goto(`${t.svc.url}/app/keys`);
    expect(await row(page, firstPrefix).innerText()).toContain(SANDBOX_ISV_OWNER);
    for (let i = 0; i < 50 && (await row(page, firstPrefix).getByRole('cell').nth(4).innerText()) === 'never'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      await page.reload();
    }
    expect(await row(page, firstPrefix).getByRole('cell').nth(4).innerText()).toMatch(/UTC$/);

    // Rotate with a 1-hour overlap: both keys work.
    await row(page, firstPrefix).getByRole('link', { name: /Rotate/ }).click();
    await checked(page, '03-rotate-laptop');
    await page.getByLabel('Keep the old key working for').selectOption('1h');
    await page.getByRole('button', { name: 'Rotate the key' }).click();
    await page.getByRole('heading', { name: 'Your new key' }).waitFor();
    const second = (await page.locator('#new-key').textContent())!.trim();
    expect(second).not.toBe(first);
    expect(await page.textContent('main')).toContain('keeps working until');
    await checked(page, '04-rotated-laptop');
    expect((await me(second)).status).toBe(200);
    expect((await me(first)).status).toBe(200);
    await page.goto(`${t.svc.url}/app/keys`);
    expect(await row(page, firstPrefix).innerText()).toContain('expiring');
    await page.screenshot({ path: path.join(IMAGES, 'isv-keys-laptop.png'), fullPage: true });

    // Past the overlap (the service's clock moved on): the old key is refused like a revoked one; the new one works.
    shift += 2 * HOUR;
    expect(await me(first)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect((await me(second)).status).toBe(200);
    await page.reload();
    expect(await row(page, firstPrefix).innerText()).toContain('revoked');
    await screenshot(page, SUITE, '05-overlap-over-laptop');

    // Revoke the new key now.
    const secondPrefix = second.slice(0, 12);
    await row(page, secondPrefix).getByRole('link', { name: /Revoke/ }).click();
    await checked(page, '06-revoke-laptop');
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await page.getByText('is revoked: it stopped working now').waitFor();
    expect(await me(second)).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    expect(await row(page, secondPrefix).innerText()).toContain('revoked');
    await checked(page, '07-revoked-laptop');

    // The ISV's own audit log: each change, the owner as actor, never a key.
    const audit: { action: string; subject_ref: string; detail: Record<string, any> }[] = await t.svc.services.ds.query(
      "SELECT action, subject_ref, detail FROM audit_entries WHERE tenant_id IS NULL AND isv_id = $1 AND subject_ref = ANY($2) ORDER BY seq", [isvId, [firstPrefix, secondPrefix]]);
    expect(audit.map((a) => [a.action, a.subject_ref])).toEqual([['api_key.create', firstPrefix], ['api_key.rotate', secondPrefix], ['api_key.revoke', secondPrefix]]);
    for (const a of audit) {
      expect(a.detail.actor).toMatchObject({ kind: 'person', email: SANDBOX_ISV_OWNER });
      expect(a.detail.via).toBe('console');
      expect(JSON.stringify(a.detail)).not.toContain(first);
      expect(JSON.stringify(a.detail)).not.toContain(second);
    }
    expect(audit[1]!.detail.replaced).toBe(firstPrefix);
    expect(await page.locator('main').innerText()).toContain(`revoked by ${SANDBOX_ISV_OWNER}`);

    // The same list at phone width.
    const phone = await (await newContext(t.browser, PHONE)).newPage();
    await signIn(phone, SANDBOX_ISV_OWNER);
    await phone.goto(`${t.svc.url}/app/keys`);
    await checked(phone, '08-keys-phone');
    await phone.screenshot({ path: path.join(IMAGES, 'isv-keys-phone.png'), fullPage: true });
    await phone.context().close();
    await page.context().close();
  }, 180_000);

  it('a developer sees the keys and cannot mint, rotate or revoke one', async () => {
    const page = await (await newContext(t.browser, PHONE)).newPage();
    await signIn(page, DEVELOPER);
    await page.goto(`${t.svc.url}/app/keys`);
    await checked(page, '09-developer-phone');
    expect(await page.getByRole('button', { name: 'Create the key' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /Rotate|Revoke/ }).count()).toBe(0);
    expect(await page.getByRole('row').count()).toBeGreaterThan(1);

    // A hand-made form post with this session's own CSRF token is refused and mints nothing.
    const count = async () => (await t.svc.services.ds.query('SELECT count(*)::int AS n FROM api_keys WHERE isv_id = $1', [isvId]))[0].n as number;
    const before = await count();
    const csrf = await page.locator('input[name="csrf"]').first().inputValue();
    const minted = await page.request.post(`${t.svc.url}/app/keys/create`, { form: { csrf, idempotency_key: randomUUID(), name: 'not mine to make' } });
    expect(minted.status()).toBe(403);
    expect(await minted.text()).toContain('Only an owner');
    const active: { id: string }[] = await t.svc.services.ds.query("SELECT id FROM api_keys WHERE isv_id = $1 AND revoked_at IS NULL LIMIT 1", [isvId]);
    const rotate = await page.request.post(`${t.svc.url}/app/keys/${active[0]!.id}/rotate`, { form: { csrf, idempotency_key: randomUUID(), overlap: 'none' } });
    expect(rotate.status()).toBe(403);
    const revoke = await page.request.post(`${t.svc.url}/app/keys/${active[0]!.id}/revoke`, { form: { csrf } });
    expect(revoke.status()).toBe(403);
    expect(await count()).toBe(before);
    expect((await t.svc.services.ds.query('SELECT revoked_at FROM api_keys WHERE id = $1', [active[0]!.id]))[0].revoked_at).toBeNull();
    await page.context().close();
  }, 120_000);

  it('every page of the console, as its navigation lists them, passes axe at laptop and phone width', async () => {
    const pages = ISV_CONSOLE_PAGES.flatMap((p) => (p.nav ? [p.nav] : []));
    expect(pages.map((p) => p.href)).toEqual(expect.arrayContaining(['/app', '/app/members', '/app/keys', '/app/msps', '/app/connect-links', '/app/webhooks', '/app/requests', '/app/settings/sso']));
    for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const page = await (await newContext(t.browser, viewport)).newPage();
      await signIn(page, SANDBOX_ISV_OWNER);
      for (const { href } of pages) {
        const answer = await page.goto(`${t.svc.url}${href}`);
        expect([href, answer?.status()]).toEqual([href, 200]);
        await checked(page, `pages${href.replace(/\//g, '-')}-${width}`);
      }
      await page.context().close();
    }
  }, 180_000);
});
