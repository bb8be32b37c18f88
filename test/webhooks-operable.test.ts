/**
 * Webhooks an ISV can operate (design: the ISV's console and its API twins, "Webhooks page"): an ISV-wide
 * endpoint registered before a tenant connects receives that tenant's events with no new registration,
 * filtered by the ISV's grants there; a kinds filter; pause and resume; secret rotation with an overlap
 * (both secrets verify during it, only the new one after); a delivery's replay keeps its `webhook-id`; a
 * test event. Every delivery is verified with the `standardwebhooks` reference library. Receivers are
 * on 127.0.0.1 (WEBHOOK_ALLOW_LOOPBACK). Events are written as sync writes them and announced through
 * EventsService.emitCommitted, except the connect session's, which the connect page makes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Connection, EventRecord, Webhook, WebhookDelivery } from '../entities';
import { KIND_FILTERS } from '../src/access/event-kinds';
import { ConnectPageClient, CW_CREDENTIALS, sandboxBase } from './support/connect-page';
import { deliveryWhen } from './support/webhook-deliveries';
import { startTestService, type TestService } from './support/service';

interface Received { path: string; headers: http.IncomingHttpHeaders; body: string }

/** Receives every POST and answers 200. */
class Receiver {
  readonly requests: Received[] = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The requests to `path` carrying `webhook-id` `id`, once there are at least `n` (bounded wait). */
  async received(path: string, id: string, n = 1): Promise<Received[]> {
    const until = Date.now() + 20_000;
    for (;;) {
      const got = this.requests.filter((r) => r.path === path && r.headers['webhook-id'] === id);
      if (got.length >= n) return got;
      if (Date.now() > until) throw new Error(`no ${n} deliveries of ${id} to ${path} (got ${got.length})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let svc: TestService;
let receiver: Receiver;
let alphaPsa: string;

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  svc.services.webhooks.retryScale = 0.0001;
  receiver = await new Receiver().start();
  alphaPsa = (await svc.services.ds.getRepository(Connection).findOneByOrFail({ tenantId: svc.alphaId, kind: 'psa' })).id;
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

/** Writes one event the way sync does and announces its commit; returns its id. */
async function emit(tenantId: string, connectionId: string | null, kind: string): Promise<string> {
  const repo = svc.services.ds.getRepository(EventRecord);
  const saved = await repo.save(repo.create({
    tenantId, connectionId, kind, type: null, dedupeKey: `test:${randomUUID()}`, occurredAt: new Date('2026-11-22T10:00:00Z'),
    summary: 'Printer offline on 3rd floor', subjectRef: 'ticket:4711', detail: {},
  }));
  await svc.services.events.emitCommitted(tenantId, [saved.id]);
  return saved.id;
}

/** Throws unless the request verifies with `secret` under the reference library. */
function verify(r: Received, secret: string): Record<string, unknown> {
  return new StandardWebhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']),
  }) as Record<string, unknown>;
}

const deliveryOf = (webhookId: string, eventId: string) => svc.services.ds.getRepository(WebhookDelivery).findOneBy({ webhookId, eventId });
const delivered = (webhookId: string, eventId: string) => deliveryWhen(svc.services.ds, { webhookId, eventId }, (d) => d.status === 'delivered', 'delivered');

describe('ISV-wide endpoints', () => {
  it('receive the events of a tenant that connects after registration, with no new registration, filtered by the grants there', async () => {
    const reg = await svc.api('/webhooks', { method: 'POST', json: { url: `${receiver.url}/all` } });
    expect(reg.status).toBe(201);
    expect(reg.body).toMatchObject({ url: `${receiver.url}/all`, secret: expect.stringMatching(/^whsec_/), enabled: true, kinds: null });
    const hook = reg.body as { id: string; secret: string };

    // An MSP connects its PSA through a connect link, granting ticket events only.
    const session = await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Later MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create', 'psa.ticket.events'] } });
    expect(session.status).toBe(201);
    const page = ConnectPageClient.fromUrl(session.body.connect_url);
    expect((await page.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS)).status).toBe(303);
    expect((await page.complete({ psa: ['psa.ticket.create', 'psa.ticket.events'] })).status).toBe(200);
    const tenantId = (await svc.api(`/connect-sessions/${session.body.id}`)).body.tenant_id as string;
    const psa = (await svc.services.ds.getRepository(Connection).findOneByOrFail({ tenantId, kind: 'psa' })).id;

    const ticket = await emit(tenantId, psa, 'ticket.created');
    const [got] = await receiver.received('/all', ticket);
    expect(verify(got, hook.secret)).toMatchObject({ id: ticket, tenant_id: tenantId, kind: 'ticket.created' });
    // No device grant there: a device event of that tenant makes no delivery (the fan-out is done when emit returns).
    const device = await emit(tenantId, psa, 'device.updated');
    expect(await deliveryOf(hook.id, device)).toBeNull();
    // The tenants it saw before are covered too.
    const alpha = await emit(svc.alphaId, alphaPsa, 'ticket.closed');
    expect(verify((await receiver.received('/all', alpha))[0], hook.secret)).toMatchObject({ tenant_id: svc.alphaId });

    // The connect session's completion reaches the endpoint too, once the connection events record it.
    if (KIND_FILTERS.includes('connect_session.completed')) {
      const completed = await svc.services.ds.getRepository(EventRecord).findOneBy({ tenantId, kind: 'connect_session.completed' });
      expect(completed).not.toBeNull();
      expect(verify((await receiver.received('/all', completed!.id))[0], hook.secret)).toMatchObject({ kind: 'connect_session.completed', tenant_id: tenantId });
    }

    // The delivery log names each delivery's tenant, kind, response and latency.
    const log = await svc.api(`/webhooks/${hook.id}/deliveries`);
    expect(log.status).toBe(200);
    await delivered(hook.id, ticket);
    const row = (await svc.api(`/webhooks/${hook.id}/deliveries`)).body.deliveries.find((d: { event_id: string }) => d.event_id === ticket);
    expect(row).toMatchObject({ tenant_id: tenantId, event_kind: 'ticket.created', status: 'delivered', attempts: 1, last_status_code: 200, next_attempt_at: null, latency_ms: expect.any(Number) });
  });

  it('belong to their ISV: another ISV and an MSP key see none of them', async () => {
    const mine = (await svc.api('/webhooks', { method: 'POST', json: { url: `${receiver.url}/mine` } })).body.id as string;
    const isv = await svc.graphql('mutation { create_isv(name: "Other ISV") { id } }');
    const other = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "t") { key } }', { id: isv.data.create_isv.id })).data.issue_api_key.key;
    expect((await svc.api(`/webhooks/${mine}`, { key: other })).status).toBe(404);
    expect((await svc.api('/webhooks', { key: other })).body.webhooks).toEqual([]);
    expect((await svc.api('/webhooks', { key: svc.alphaMspKey })).body.code).toBe('role_required');
    expect((await svc.api(`/webhooks/${mine}`, { method: 'DELETE' })).status).toBe(204);
  });
});

describe('operating an endpoint', () => {
  it('takes a kinds filter (an unknown kind is 422 naming it) and delivers only those kinds', async () => {
    const unknown = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiver.url}/kinds`, kinds: ['ticket.closed', 'ticket.exploded'] } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toContain('ticket.exploded');
    const reg = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiver.url}/kinds`, kinds: ['ticket.closed'] } });
    expect(reg.status).toBe(201);
    expect(reg.body.kinds).toEqual(['ticket.closed']);
    const created = await emit(svc.alphaId, alphaPsa, 'ticket.created');
    const closed = await emit(svc.alphaId, alphaPsa, 'ticket.closed');
    verify((await receiver.received('/kinds', closed))[0], reg.body.secret);
    expect(await deliveryOf(reg.body.id, created)).toBeNull();

    // Widened by PATCH (a family): ticket.created is delivered from then on; an unknown kind is refused there too.
    const path = `/tenants/${svc.alphaId}/ticket-events/webhook/${reg.body.id}`;
    expect((await svc.api(path, { method: 'PATCH', json: { kinds: ['nonsense'] } })).body.message).toContain('nonsense');
    expect((await svc.api(path, { method: 'PATCH', json: { kinds: ['ticket'] } })).body.kinds).toEqual(['ticket']);
    const later = await emit(svc.alphaId, alphaPsa, 'ticket.created');
    verify((await receiver.received('/kinds', later))[0], reg.body.secret);
  });

  it('pauses (nothing is delivered while paused) and resumes', async () => {
    const reg = (await svc.api('/webhooks', { method: 'POST', json: { url: `${receiver.url}/pause`, kinds: ['ticket'] } })).body as { id: string; secret: string };
    const paused = await svc.api(`/webhooks/${reg.id}`, { method: 'PATCH', json: { enabled: false } });
    expect(paused.body).toMatchObject({ enabled: false, disabled_reason: 'paused' });
    const during = await emit(svc.alphaId, alphaPsa, 'ticket.updated');
    expect(await deliveryOf(reg.id, during)).toBeNull();
    // Resuming does not send what happened while paused.
    expect((await svc.api(`/webhooks/${reg.id}`, { method: 'PATCH', json: { enabled: true } })).body).toMatchObject({ enabled: true, disabled_reason: null });
    const after = await emit(svc.alphaId, alphaPsa, 'ticket.updated');
    verify((await receiver.received('/pause', after))[0], reg.secret);
    expect(receiver.requests.some((r) => r.path === '/pause' && r.headers['webhook-id'] === during)).toBe(false);
  });

  it('rotates its secret with an overlap: both verify during it, only the new one after; a replay keeps its webhook-id', async () => {
    const reg = (await svc.api('/webhooks', { method: 'POST', json: { url: `${receiver.url}/rotate`, kinds: ['ticket'] } })).body as { id: string; secret: string };
    expect((await svc.api(`/webhooks/${reg.id}/rotate-secret`, { method: 'POST', json: { overlap_seconds: 7 * 86_400 + 1 } })).status).toBe(422);
    const rotated = await svc.api(`/webhooks/${reg.id}/rotate-secret`, { method: 'POST', json: { overlap_seconds: 3600 } });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(reg.secret);
    expect(rotated.body.previous_secret_expires_at).toEqual(expect.any(String));
    expect((await svc.api(`/webhooks/${reg.id}`)).body.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at);

    const during = await emit(svc.alphaId, alphaPsa, 'ticket.updated');
    const [d1] = await receiver.received('/rotate', during);
    expect(String(d1.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verify(d1, rotated.body.secret);
    verify(d1, reg.secret);

    // The overlap's end, brought forward in the store: from then on only the new secret signs.
    await svc.services.ds.getRepository(Webhook).update({ id: reg.id }, { previousSecretExpiresAt: new Date(Date.now() - 1000) });
    const after = await emit(svc.alphaId, alphaPsa, 'ticket.updated');
    const [d2] = await receiver.received('/rotate', after);
    expect(String(d2.headers['webhook-signature']).split(' ')).toHaveLength(1);
    verify(d2, rotated.body.secret);
    expect(() => verify(d2, reg.secret)).toThrow();

    // Replay: the same event again, the same webhook-id, one more try in the log.
    const first = await delivered(reg.id, after);
    const retry = await svc.api(`/webhooks/${reg.id}/deliveries/${first.id}/retry`, { method: 'POST' });
    expect(retry.status).toBe(202);
    const both = await receiver.received('/rotate', after, 2);
    expect(both[1].body).toBe(both[0].body);
    verify(both[1], rotated.body.secret);
    await deliveryWhen(svc.services.ds, { id: first.id }, (d) => d.status === 'delivered' && d.attempts === 2, 'delivered again');
    expect((await svc.api(`/webhooks/${reg.id}/deliveries/${randomUUID()}/retry`, { method: 'POST' })).status).toBe(404);
  });

  it('sends a test event, signed like every delivery, on a tenant endpoint and an ISV-wide one', async () => {
    const wide = (await svc.api('/webhooks', { method: 'POST', json: { url: `${receiver.url}/test-wide`, kinds: ['sandbox_reset'] } })).body as { id: string; secret: string };
    const tenant = (await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiver.url}/test-tenant`, kinds: ['sandbox_reset'] } })).body as { id: string; secret: string };
    for (const [path, hook, at] of [['/test-wide', wide, `/webhooks/${wide.id}/test`], ['/test-tenant', tenant, `/tenants/${svc.alphaId}/ticket-events/webhook/${tenant.id}/test`]] as const) {
      const res = await svc.api(at, { method: 'POST' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ kind: 'webhook.test', delivered: true, status_code: 200, error: null });
      const [got] = await receiver.received(path, res.body.webhook_id);
      expect(verify(got, hook.secret)).toMatchObject({ kind: 'webhook.test' });
    }
  });
});
