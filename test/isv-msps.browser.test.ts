/**
 * The ISV console's MSPs and connect links, in Chromium (design: the ISV's console and its API twins,
 * "MSPs"): the sandbox ISV's owner signs in with a magic link from the outbox, sees the sandbox tenants
 * with each system's health and the grants held there in words; creates a connect link, copies it, mails
 * it to the MSP contact typed in the form (the mail lands in the outbox, saying who asks for what), sees
 * it open, cancels it, and the cancelled link no longer opens. A viewer reads and creates nothing.
 * axe at laptop and phone width on every page; screenshots in test-output/isv-msps/.
 */
import type { Browser, Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, newContext, PHONE, screenshot, serviceAndBrowser, signInToApp } from './support/browser';
import { SANDBOX_ISV_OWNER } from '../src/people/sandbox-people';
import { GRANT_WORDS } from '../src/access/grant-words';
import { Grant } from '../src/access/caller';

const SUITE = 'isv-msps';
const CONTACT = 'ops@northwind-msp.example';

describeInBrowser('the ISV console: MSPs and connect links', () => {
  const t = serviceAndBrowser();
  const problems: string[] = [];

  async function signIn(browser: Browser, viewport: { width: number; height: number }, email = SANDBOX_ISV_OWNER): Promise<Page> {
    const context = await newContext(browser, viewport);
    const page = await context.newPage();
    await signInToApp(page, t.svc.url, email);
    return page;
  }

  /** axe and no sideways scrolling of the page, with a screenshot named after the step. */
  async function checked(page: Page, step: string): Promise<void> {
    await screenshot(page, SUITE, step);
    problems.push(...(await accessibilityProblems(page)).map((p) => `${step}: ${p}`));
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
    expect([step, overflow <= 1]).toEqual([step, true]);
  }

  it('shows every sandbox tenant the ISV sees, each system\'s health and the grants in words', async () => {
    const visible = (await t.svc.api('/tenants')).body.tenants as { id: string; name: string }[];
    expect(visible.length).toBeGreaterThan(0);
    const page = await signIn(t.browser, LAPTOP);
    await page.getByRole('link', { name: 'MSPs', exact: true }).click();
    await page.getByRole('heading', { name: 'MSPs', level: 1 }).waitFor();
    for (const tenant of visible) await page.getByRole('heading', { name: new RegExp(tenant.name) }).first().waitFor();
    const main = (await page.textContent('main'))!;
    // The sandbox has synced: its systems are OK, and the grants the sandbox ISV holds are in the MSP's words.
    expect(main).toContain('OK');
    expect(main).toContain(GRANT_WORDS[Grant.TicketCreate].title);
    expect(main).toContain('Last successful sync');
    await checked(page, '01-msps-laptop');

    await page.getByRole('link', { name: `Details of ${visible[0]!.name}` }).click();
    await page.getByRole('heading', { name: visible[0]!.name, level: 1 }).waitFor();
    expect(await page.textContent('main')).toContain(GRANT_WORDS[Grant.TicketCreate].words);
    await checked(page, '02-msp-detail-laptop');

    // A tenant the ISV does not see (or none at all) is not found, like over REST.
    const missing = await page.goto(`${t.svc.url}/app/msps/00000000-0000-4000-8000-000000000000`);
    expect(missing!.status()).toBe(404);
    await page.context().close();
  });

  it('creates a connect link, copies it, mails it to the MSP contact, and cancels it', async () => {
    const page = await signIn(t.browser, LAPTOP);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.svc.url });
    await page.goto(`${t.svc.url}/app/connect-links`);
    await checked(page, '03-connect-links-laptop');
    await page.fill('#msp_name', 'Northwind MSP');
    await page.fill('#contact_email', CONTACT);
    await page.getByLabel('Ask them to connect their RMM').check();
    await page.getByLabel(GRANT_WORDS[Grant.DeviceWrite].title).check();
    await page.fill('#redirect_url', 'https://isv.example/connected');
    await page.getByRole('button', { name: 'Create the link' }).click();
    await page.getByRole('heading', { name: 'Your connect link' }).waitFor();
    const url = (await page.locator('#connect-url').textContent())!.trim();
    expect(url).toMatch(new RegExp(`^${t.svc.config.publicUrl}/connect/[A-Za-z0-9_-]{43}$`));
    await checked(page, '04-link-created-laptop');

    await page.getByRole('button', { name: 'Copy the link' }).click();
    await page.waitForFunction("document.getElementById('connect-url-copied').textContent === 'Copied.'");
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(url);

    await page.getByRole('button', { name: `Mail it to ${CONTACT}` }).click();
    await page.getByText(`Mailed to ${CONTACT}.`).waitFor();
    const mail = (await t.svc.services.outbox.latest(20)).find((m) => m.to === CONTACT)!;
    expect(mail.subject).toContain('Northwind MSP');
    expect(mail.text).toContain(url);
    expect(mail.text).toContain(SANDBOX_ISV_OWNER);
    expect(mail.text).toContain(GRANT_WORDS[Grant.DeviceWrite].title);
    expect(mail.text).toContain('PSA, RMM');
    // A second press mails nothing more.
    await page.getByRole('button', { name: `Mail it to ${CONTACT}` }).click();
    await page.getByText(`Already mailed to ${CONTACT}`).waitFor();
    expect((await t.svc.services.outbox.latest(50)).filter((m) => m.to === CONTACT)).toHaveLength(1);

    // Listed as open, the same session the REST twin lists, with what was asked.
    await page.getByRole('link', { name: 'All connect links' }).click();
    const row = page.locator('tr', { hasText: 'Northwind MSP' });
    await row.getByText('open').waitFor();
    const rest = (await t.svc.api('/connect-sessions?limit=500')).body.connect_sessions as { id: string; msp_name: string; state: string; kinds: string[]; requested_grants: string[]; redirect_url: string }[];
    const made = rest.find((s) => s.msp_name === 'Northwind MSP')!;
    expect(made).toMatchObject({ state: 'pending', kinds: ['psa', 'rmm'], redirect_url: 'https://isv.example/connected' });
    expect(made.requested_grants).toEqual(expect.arrayContaining([Grant.TicketCreate, Grant.DeviceWrite]));

    await row.getByRole('button', { name: 'Cancel the link for Northwind MSP' }).click();
    await page.getByText('Cancelled: that link no longer works.').waitFor();
    await page.locator('tr', { hasText: 'Northwind MSP' }).getByText('cancelled').waitFor();
    expect((await t.svc.api(`/connect-sessions/${made.id}`)).body.state).toBe('cancelled');

    const opened = await page.goto(url);
    expect(opened!.status()).toBe(410);
    await page.getByRole('heading', { name: 'This link was cancelled' }).waitFor();
    await page.context().close();
  });

  it('at phone width: every page reads without sideways scrolling and passes axe', async () => {
    const page = await signIn(t.browser, PHONE);
    await page.goto(`${t.svc.url}/app/msps`);
    await checked(page, '05-msps-phone');
    await page.goto(`${t.svc.url}/app/msps/${t.svc.alphaId}`);
    await checked(page, '06-msp-detail-phone');
    await page.goto(`${t.svc.url}/app/connect-links?tenant_id=${t.svc.alphaId}`);
    await page.getByRole('heading', { name: /Ask .* for more/ }).waitFor();
    await checked(page, '07-connect-links-phone');
    await page.getByRole('button', { name: 'Create the link' }).click();
    await page.getByRole('heading', { name: 'Your connect link' }).waitFor();
    await checked(page, '08-link-created-phone');
    // A link for an existing tenant has no contact typed: nothing offers to mail it.
    expect(await page.getByRole('button', { name: /^Mail it/ }).count()).toBe(0);
    await page.context().close();
    expect(problems).toEqual([]);
  });

  it('a viewer of the ISV reads the links and creates nothing; a form from elsewhere is refused', async () => {
    const viewer = 'viewer@sandbox-isv.example';
    const person = await t.svc.services.peopleStore.ensurePerson(viewer, 'ISV viewer');
    const isvId = (await t.svc.services.ds.query('SELECT isv_id FROM grants WHERE tenant_id = $1 LIMIT 1', [t.svc.alphaId]))[0].isv_id as string;
    await t.svc.services.peopleStore.addMembership(person.id, { kind: 'isv', id: isvId }, 'viewer');
    const page = await signIn(t.browser, LAPTOP, viewer);
    await page.goto(`${t.svc.url}/app/connect-links`);
    expect(await page.getByRole('button', { name: 'Create the link' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Cancel/ }).count()).toBe(0);
    const csrf = await page.evaluate("document.querySelector('input[name=csrf]').value") as string;
    const before = ((await t.svc.api('/connect-sessions?limit=500')).body.connect_sessions as unknown[]).length;
    const posted = await page.request.post(`${t.svc.url}/app/connect-links`, { form: { csrf, idempotency_key: 'k1', msp_name: 'Sneaky', kind: 'psa' } });
    expect(posted.status()).toBe(403);
    const noCsrf = await page.request.post(`${t.svc.url}/app/connect-links`, { form: { idempotency_key: 'k2', msp_name: 'Sneaky', kind: 'psa' } });
    expect(noCsrf.status()).toBe(403);
    expect(((await t.svc.api('/connect-sessions?limit=500')).body.connect_sessions as unknown[]).length).toBe(before);
    await page.context().close();
  });
  it('a system whose vendor refuses the stored credentials shows "Credentials failing", on the list and its MSP\'s page', async () => {
    const faults = (method: string, body?: unknown) => fetch(`${t.svc.url}/sandbox-vendors/halopsa/_control/faults`, {
      method, headers: { 'content-type': 'application/json', authorization: `Bearer ${t.svc.config.adminToken}` }, ...(body ? { body: JSON.stringify(body) } : {}),
    });
    expect((await faults('POST', { status: 401, times: 1000 })).status).toBe(204);
    try {
      const synced = await t.svc.api(`/tenants/${t.svc.betaId}/sync`, { method: 'POST', json: {} });
      expect(synced.body.ok).toBe(false);
      const page = await signIn(t.browser, LAPTOP);
      await page.goto(`${t.svc.url}/app/msps`);
      await page.locator('tr', { hasText: 'HaloPSA' }).getByText('Credentials failing').waitFor();
      await page.goto(`${t.svc.url}/app/msps/${t.svc.betaId}`);
      const card = page.locator('section.card', { has: page.getByRole('heading', { name: /HaloPSA/ }) });
      await card.getByText('Credentials failing').waitFor();
      expect(await card.textContent()).toContain('send them a connect link');
      await checked(page, '09-credentials-failing-laptop');
      // What to do is one click away: a connect link for this MSP, to enter new credentials.
      await card.getByRole('link', { name: /connect link to enter new credentials/ }).click();
      await page.getByRole('heading', { name: /Ask Sandbox Beta MSP for more/ }).waitFor();
      await page.context().close();
      expect(problems).toEqual([]);
    } finally {
      await faults('DELETE');
    }
  });
});
