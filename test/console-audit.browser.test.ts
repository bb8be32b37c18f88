/**
 * The console's audit page in Chromium (docs/architecture.md, Connect sessions and console): a person turns
 * a grant off on the grants page, then reads in the audit log, filtered by kind and actor, which ISV's
 * grant on which system changed, from what to what, and which finding kind's routing; the subject shows the ISV's name beside its id;
 * previews are hidden unless asked for. axe finds nothing at laptop and phone width; screenshots in
 * docs/images/console-audit-*.png.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { accessibilityProblems, describeInBrowser, LAPTOP, PHONE, serviceAndBrowser, signedInToConsole } from './support/browser';

const IMAGES = path.join(__dirname, '..', 'docs', 'images');

describeInBrowser('the console audit page in Chromium', () => {
  const t = serviceAndBrowser();
  const A = (p: string) => `/tenants/${t.svc.alphaId}${p}`;

  const signedIn = (viewport: { width: number; height: number }): Promise<Page> => signedInToConsole(t, viewport);

  it('shows who changed which grant from what to what, filtered by kind and actor', async () => {
    const page = await signedIn(LAPTOP);
    await page.goto(`${t.svc.url}/console/grants`);
    const form = page.locator('form', { has: page.locator('legend', { hasText: 'ConnectWise PSA' }) });
    await form.getByRole('checkbox', { name: /Create tickets/ }).uncheck();
    await form.getByRole('button', { name: /Save grants for/ }).click();
    await page.waitForURL('**/console/grants?done=saved**');

    const entry = (await t.svc.api(A('/audit?action=grants.'), { key: t.svc.alphaMspKey })).body.audit[0];
    expect(entry.detail.subject_label).toBe('Sandbox ISV');
    expect(entry.detail.changes).toHaveLength(1);
    expect(entry.detail.changes[0].before).toContain('psa.ticket.create');
    expect(entry.detail.changes[0].after).not.toContain('psa.ticket.create');

    await page.goto(`${t.svc.url}/console/audit`);
    await page.selectOption('#action', 'grants.');
    await page.fill('#actor', 'msp_key');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/console/audit?**');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBeGreaterThan(0);
    const row = (await rows.first().textContent())!;
    expect(row).toContain('grants.update');
    expect(row).toContain('Sandbox ISV');
    expect(row).toContain('ConnectWise PSA');
    expect(row).toMatch(/turned off Create tickets/);
    expect(row).toMatch(/Before: [^.]*Create tickets/);
    // The whole lists are folded under the change; opening them shows them.
    const folded = rows.first().locator('details');
    expect(await folded.locator('.lists').isVisible()).toBe(false);
    await folded.locator('summary').click();
    expect(await folded.locator('.lists').isVisible()).toBe(true);
    expect(row).toContain('by the MSP key');
    for (const text of await rows.allTextContents()) expect(text).toContain('grants.');

    // Another actor's filter finds none of these.
    await page.fill('#actor', 'someone@example.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**actor=someone**');
    expect(await page.locator('main').textContent()).toContain('No entries match.');

    // Back on, through the same page.
    await page.goto(`${t.svc.url}/console/grants`);
    await page.locator('form', { has: page.locator('legend', { hasText: 'ConnectWise PSA' }) }).getByRole('checkbox', { name: /Create tickets/ }).check();
    await page.locator('form', { has: page.locator('legend', { hasText: 'ConnectWise PSA' }) }).getByRole('button', { name: /Save grants for/ }).click();
    await page.waitForURL('**/console/grants?done=saved**');
    await page.context().close();
  });

  it("shows a routing change from what to what, under the ISV's name", async () => {
    const before = (await t.svc.api(A('/routing'))).body;
    const set = await t.svc.api(A('/routing'), { method: 'PUT', json: { overrides: { technical: before.effective.technical === 'project' ? 'service_ticket' : 'project' } } });
    expect(set.status).toBe(200);
    const entry = (await t.svc.api(A('/audit?action=routing.'), { key: t.svc.alphaMspKey })).body.audit[0];
    expect(entry).toMatchObject({ action: 'routing.update', detail: { subject_label: 'Sandbox ISV', before: before.overrides, after: set.body.overrides } });
    const page = await signedIn(LAPTOP);
    await page.goto(`${t.svc.url}/console/audit`);
    await page.selectOption('#action', 'routing.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL('**/console/audit?**');
    const row = (await page.locator('tbody tr').first().textContent())!;
    expect(row).toContain('Sandbox ISV');
    const words = (v: string | undefined) => (v === 'project' ? 'a project' : v === 'service_ticket' ? 'a service ticket' : 'the recommended target');
    expect(row).toContain(`technical findings: from ${words(before.overrides.technical)} to ${words(set.body.overrides.technical)}`);
    await page.context().close();
    // Back as it was.
    expect((await t.svc.api(A('/routing'), { method: 'PUT', json: { overrides: { technical: before.overrides.technical ?? null } } })).status).toBe(200);
  });

  it("labels a ticket write's subject with the ticket's summary, on the page and in list_audit", async () => {
    const ticket = (await t.svc.api(A('/tickets?limit=1'))).body.tickets[0];
    const note = await t.svc.api(A('/tickets/write'), { method: 'POST', json: { ticket_ref: ticket.source_id, action: 'note', note: { text: 'Audit label test.' }, dry_run: true } });
    expect(note.status).toBeLessThan(500);
    const entry = (await t.svc.api(A(`/audit?subject=${encodeURIComponent(ticket.source_id)}`), { key: t.svc.alphaMspKey })).body.audit[0];
    expect(entry).toMatchObject({ action: expect.stringMatching(/^ticket\.write\./), subject_ref: ticket.source_id, detail: { subject_label: ticket.summary } });
    const page = await signedIn(LAPTOP);
    await page.goto(`${t.svc.url}/console/audit?previews=include&subject=${encodeURIComponent(ticket.source_id)}`);
    expect(await page.locator('tbody tr').first().textContent()).toContain(ticket.summary);
    await page.context().close();
  });

  it('hides previews unless asked for; no accessibility problems at laptop and phone width', async () => {
    const preview = await t.svc.api(A('/tickets'), { method: 'POST', json: { company_name: 'Contoso Ltd', summary: 'Printer jam', description: 'Audit page test.', priority: 'low', board: '1', dry_run: true } });
    expect(preview.status).toBe(200);
    for (const [name, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      const page = await signedIn(viewport);
      await page.goto(`${t.svc.url}/console/audit`);
      expect(await page.locator('tbody').textContent()).not.toContain('.preview');
      await page.goto(`${t.svc.url}/console/audit?previews=include`);
      expect(await page.locator('tbody').textContent()).toContain('.preview');
      await page.goto(`${t.svc.url}/console/audit?action=grants.`);
      expect(await accessibilityProblems(page)).toEqual([]);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
      expect(overflow).toBeLessThanOrEqual(1);
      await page.screenshot({ path: path.join(IMAGES, `console-audit-${name}.png`), fullPage: true });
      await page.context().close();
    }
  });
});
