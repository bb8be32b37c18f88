/**
 * The takeover an ISV could once make of an MSP's console, replayed in Chromium (docs/architecture.md,
 * Connect sessions and console). The ISV opens a connect session on a tenant it sees and opens the link
 * itself: it reads what it asked for, and nothing more; it can neither test keys nor connect, saves
 * nothing, and never holds a console session. An owner of the tenant who signs in on the same link
 * (a magic link from the mail, back to the same page) completes it. No answer of the flow, for either of
 * them, contains a console link, and the audit names the person who decided. Laptop and phone width,
 * axe on every page; screenshots in test-output/connect-takeover/.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, serviceAndBrowser, LAPTOP, newContext, PHONE, screenshot } from './support/browser';
import { sandboxBase } from './support/connect-page';
import { sandboxTenantOwner } from '../src/people/sandbox-people';

const SUITE = 'connect-takeover';
const PAX8 = { clientId: 'sandbox', clientSecret: 'sandbox-secret' };
const ALPHA_OWNER = sandboxTenantOwner('sandbox-alpha');

describeInBrowser('a connect link on an existing tenant in Chromium', () => {
  const t = serviceAndBrowser();

  /** Every answer body the browser received, to look for console links afterwards. */
  function recordAnswers(context: BrowserContext): string[] {
    const bodies: string[] = [];
    context.on('response', (res) => {
      if (!res.url().startsWith(t.svc.url)) return;
      void res.text().then((t) => bodies.push(`${res.status()} ${res.url()}\n${t}`), () => undefined);
    });
    return bodies;
  }

  async function connectionsOfAlpha(): Promise<string[]> {
    const rows: { id: string }[] = await t.svc.services.ds.query('SELECT id FROM connections WHERE tenant_id = $1 ORDER BY id', [t.svc.alphaId]);
    return rows.map((r) => r.id);
  }

  async function signInOnThePage(page: Page, email: string): Promise<void> {
    await page.fill('#gate-email', email);
    await page.getByRole('button', { name: 'Mail me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your mail' }).waitFor();
    // The sandbox's outbox holds the mail (SMTP_URL unset); the link in it is followed as a person would.
    await page.goto(`${t.svc.url}/dev/outbox`);
    await page.getByRole('link', { name: new RegExp(`Open: .*\\(${email.replace(/[.]/g, '\\.')}\\)`) }).first().click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
    it(`the ISV that opens its own link saves nothing and never holds a console session; an owner who signs in on it completes it (${width})`, async () => {
      const created = await t.svc.api('/connect-sessions', {
        method: 'POST', json: { tenant_id: t.svc.alphaId, kinds: ['distributor'], requested_grants: [], redirect_url: 'https://example.com/connected' },
      });
      expect(created.status).toBe(201);
      const before = await connectionsOfAlpha();

      // The ISV, in a browser of its own.
      const isvContext = await newContext(t.browser, viewport);
      const isvAnswers = recordAnswers(isvContext);
      const isvPage = await isvContext.newPage();
      await isvPage.goto(created.body.connect_url);
      await isvPage.getByRole('heading', { name: /Sign in as an owner or admin of/ }).waitFor();
      expect(await isvPage.locator('form[action$="/test"]').count()).toBe(0);
      expect(await isvPage.locator('form[action$="/complete"]').count()).toBe(0);
      await screenshot(isvPage, SUITE, `01-isv-opens-its-link-${width}`);
      expect(await accessibilityProblems(isvPage)).toEqual([]);
      // Posting the page's forms by hand is refused in words, and nothing is kept.
      const token = new URL(created.body.connect_url).pathname.split('/').pop()!;
      const base = sandboxBase(t.svc);
      for (const [path, form] of [
        ['test', { kind: 'distributor', connector: 'pax8', base_url: base.pax8, cred_clientId: PAX8.clientId, cred_clientSecret: PAX8.clientSecret }],
        ['complete', { owner_name: 'Mallory', owner_email: 'mallory@isv.example' }],
      ] as const) {
        const res = await isvPage.request.post(`${t.svc.url}/connect/${token}/${path}`, { form: form as Record<string, string>, maxRedirects: 0 });
        expect(res.status()).toBe(403);
      }
      const kept: { state: string; draft_sealed: string | null }[] = await t.svc.services.ds.query('SELECT state, draft_sealed FROM connect_sessions WHERE id = $1', [created.body.id]);
      expect(kept).toEqual([{ state: 'pending', draft_sealed: null }]);
      expect(await connectionsOfAlpha()).toEqual(before);
      expect((await isvContext.cookies()).map((c) => c.name)).not.toContain('session');
      await isvContext.close();

      // The MSP's owner, in their own t.browser, opens the same link and signs in on it.
      const mspContext = await newContext(t.browser, viewport);
      const mspAnswers = recordAnswers(mspContext);
      const page = await mspContext.newPage();
      await page.goto(created.body.connect_url);
      await signInOnThePage(page, ALPHA_OWNER);
      await page.waitForURL(`**/connect/${token}`);
      await page.getByRole('heading', { name: 'Connected now' }).waitFor();
      await screenshot(page, SUITE, `02-owner-signed-in-on-the-link-${width}`);
      expect(await accessibilityProblems(page)).toEqual([]);

      const card = page.locator('#distributor-pax8-card');
      if (!(await card.evaluate((d) => (d as unknown as { open: boolean }).open))) await card.locator('summary').click();
      await page.fill('#distributor-pax8-base_url', base.pax8);
      await page.fill('#distributor-pax8-clientId', PAX8.clientId);
      await page.fill('#distributor-pax8-clientSecret', PAX8.clientSecret);
      await card.getByRole('button', { name: /^Test / }).click();
      await page.locator('#tested-distributor').waitFor();
      // Alpha has a Pax8 already: the page asks where this one goes, nothing is replaced silently.
      const existingPax8 = (await t.svc.services.ds.query(`SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'distributor'`, [t.svc.alphaId]))[0].id as string;
      await page.locator(`#place_distributor-${existingPax8}`).check();
      await screenshot(page, SUITE, `03-owner-tested-and-placed-${width}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByRole('button', { name: 'Connect' }).click();
      await page.getByRole('heading', { name: /^Connected to / }).waitFor();
      await screenshot(page, SUITE, `04-owner-completed-${width}`);
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(await page.locator('#msp-key-value').count()).toBe(0);

      const session = (await t.svc.api(`/connect-sessions/${created.body.id}`)).body;
      expect(session.state).toBe('completed');
      // The same Pax8 was repaired in place: no connection added, none removed.
      expect(await connectionsOfAlpha()).toEqual(before);
      const completed: { detail: { actor: { kind: string; email: string }; via: string } }[] = await t.svc.services.ds.query(
        `SELECT detail FROM audit_entries WHERE tenant_id = $1 AND action = 'connect.session.completed' AND detail->>'session_id' = $2`, [t.svc.alphaId, created.body.id]);
      expect(completed).toHaveLength(1);
      expect(completed[0].detail).toMatchObject({ via: 'connect', actor: { kind: 'person', email: ALPHA_OWNER } });

      await new Promise((r) => setTimeout(r, 200)); // the last bodies are read asynchronously
      for (const body of [...isvAnswers, ...mspAnswers]) expect(body).not.toContain('/console/link/');
      await mspContext.close();
    }, 120_000);
  }
});
