/**
 * The ISV's webhooks page in Chromium (design: the ISV's console and its API twins, "Webhooks page"): the
 * sandbox ISV's owner signs in by magic link (the outbox), adds an ISV-wide endpoint (its secret shown
 * once with a Copy button; a reload makes no second endpoint), sees a delivery with its response and
 * latency, sends a test event, retries a delivery (the receiver gets the same webhook-id again), rotates
 * the secret with an overlap and pauses the endpoint. Every delivery verifies with the `standardwebhooks`
 * library. axe at laptop and phone width; screenshots in docs/images/isv-webhooks-*.png and
 * test-output/isv-webhooks/.
 */
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Connection, EventRecord, Webhook } from '../entities';
import { SANDBOX_ISV_OWNER } from '../src/people/sandbox-people';
import { accessibilityProblems, describeInBrowser, LAPTOP, newContext, PHONE, screenshot, serviceAndBrowser, signInToApp } from './support/browser';
import { deliveryWhen } from './support/webhook-deliveries';
import { startTestService } from './support/service';

const SUITE = 'isv-webhooks';
const IMAGES = path.join(__dirname, '..', 'docs', 'images');

interface Received { headers: http.IncomingHttpHeaders; body: string }

describeInBrowser('the ISV webhooks page in Chromium', () => {
  const t = serviceAndBrowser(() => startTestService({ webhookAllowLoopback: true }));
  const received: Received[] = [];
  let server: http.Server;
  let receiverUrl: string;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => { received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }); res.writeHead(200).end('{}'); });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  const signIn = (page: Page, email: string) => signInToApp(page, t.svc.url, email);

  /** axe finds nothing serious at laptop and phone width, and nothing scrolls sideways on the phone. */
  async function checked(page: Page, step: string, image?: string): Promise<void> {
    for (const [width, viewport] of [['laptop', LAPTOP], ['phone', PHONE]] as const) {
      await page.setViewportSize(viewport);
      await screenshot(page, SUITE, `${step}-${width}`);
      if (image) await page.screenshot({ path: path.join(IMAGES, `isv-webhooks-${image}-${width}.png`), fullPage: true });
      expect([step, width, await accessibilityProblems(page)]).toEqual([step, width, []]);
      const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
      expect([step, width, overflow <= 1]).toEqual([step, width, true]);
    }
    await page.setViewportSize(LAPTOP);
  }

  /** The requests carrying `webhook-id` `id`, once there are `n` (bounded wait). */
  async function deliveriesOf(id: string, n = 1): Promise<Received[]> {
    const until = Date.now() + 20_000;
    for (;;) {
      const got = received.filter((r) => r.headers['webhook-id'] === id);
      if (got.length >= n) return got;
      if (Date.now() > until) throw new Error(`no ${n} deliveries of ${id}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const verify = (r: Received, secret: string) => new StandardWebhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']),
  });

  it('an owner adds an ISV-wide endpoint, tests it, retries a delivery, rotates its secret and pauses it', async () => {
    const page = await (await newContext(t.browser, LAPTOP)).newPage();
    await signIn(page, SANDBOX_ISV_OWNER);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.waitForURL(/\/app\/webhooks$/);
    await checked(page, 'empty');

    await page.getByLabel('Receiver URL').fill(receiverUrl);
    await page.getByLabel('Kinds (optional)').fill('ticket, sandbox_reset');
    await page.getByRole('button', { name: 'Add the endpoint' }).click();
    await page.getByRole('heading', { name: 'Endpoint added' }).waitFor();
    const secret = (await page.locator('#new-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await expect(page.getByRole('button', { name: 'Copy the secret' }).isVisible()).resolves.toBe(true);
    await checked(page, 'secret', 'secret');
    // A reload sends the form again: the same secret, no second endpoint.
    await page.reload();
    await expect(page.locator('#new-secret').textContent()).resolves.toBe(secret);
    const hooks = await t.svc.services.ds.getRepository(Webhook).find({ where: { url: receiverUrl } });
    expect(hooks).toHaveLength(1);
    const hook = hooks[0];
    expect(hook.tenantId).toBeNull();

    // A ticket event of alpha reaches it, signed with that secret.
    const psa = (await t.svc.services.ds.getRepository(Connection).findOneByOrFail({ tenantId: t.svc.alphaId, kind: 'psa' })).id;
    const repo = t.svc.services.ds.getRepository(EventRecord);
    const event = await repo.save(repo.create({
      tenantId: t.svc.alphaId, connectionId: psa, kind: 'ticket.updated', type: null, dedupeKey: `test:${randomUUID()}`, occurredAt: new Date('2026-11-22T10:00:00Z'), summary: 'Printer offline', detail: {},
    }));
    await t.svc.services.events.emitCommitted(t.svc.alphaId, [event.id]);
    verify((await deliveriesOf(event.id))[0], secret);
    await deliveryWhen(t.svc.services.ds, { webhookId: hook.id, eventId: event.id }, (d) => d.status === 'delivered', 'delivered');

    await page.getByRole('link', { name: 'Done' }).click();
    await page.waitForURL(new RegExp(`/app/webhooks/${hook.id}$`));
    await page.getByRole('cell', { name: /^ticket\.updated/ }).waitFor();
    await checked(page, 'endpoint', 'endpoint');

    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText(/Test event .* delivered: HTTP 200/).waitFor();
    const test = received.find((r) => JSON.parse(r.body).kind === 'webhook.test')!;
    verify(test, secret);

    await page.getByRole('button', { name: /^Retry the ticket\.updated delivery/ }).click();
    await page.getByText('Sent again').waitFor();
    const twice = await deliveriesOf(event.id, 2);
    verify(twice[1], secret);
    await checked(page, 'retried');

    await page.getByLabel('Keep the old secret signing for').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByRole('heading', { name: 'Secret rotated' }).waitFor();
    const rotated = (await page.locator('#new-secret').textContent())!.trim();
    expect(rotated).not.toBe(secret);
    await checked(page, 'rotated');
    // During the overlap a test event verifies with either secret.
    const res = await t.svc.api(`/webhooks/${hook.id}/test`, { method: 'POST' });
    const both = (await deliveriesOf(res.body.webhook_id))[0];
    verify(both, secret);
    verify(both, rotated);

    await page.getByRole('link', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Pause' }).click();
    await page.getByText('Paused: nothing is delivered').waitFor();
    await expect(page.getByRole('button', { name: 'Resume' }).isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: 'All endpoints' }).click();
    await page.getByRole('cell', { name: 'paused' }).waitFor();
    await checked(page, 'list', 'list');
  });
});
