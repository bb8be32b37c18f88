/**
 * Signed webhooks end to end, against a receiver on 127.0.0.1: registration (secret shown once,
 * grants, URL guard), Standard Webhooks signatures, retries on the schedule, 410 disabling, 3xx as a
 * failure, the delivery-time address check, the delivery log and ISV isolation.
 * Events are written as sync writes them and announced through EventsService.emitCommitted.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Connection, EventRecord, WebhookDelivery } from '../entities';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { systemResolver } from '../src/webhooks/ssrf-guard';
import { deliveryWhen, settledDelivery } from './support/webhook-deliveries';
import { startTestService, type TestService } from './support/service';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Answer = { status: number; headers?: Record<string, string> } | 'hang';

/** A webhook receiver: answers each request to a path with that path's next scripted answer (then 200). */
class Receiver {
  readonly requests: Received[] = [];
  private readonly scripts = new Map<string, ((r: Received) => Promise<Answer> | Answer)[]>();
  private server!: http.Server;
  url = '';

  async start(host = '127.0.0.1'): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const r: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        this.requests.push(r);
        const next = this.scripts.get(r.path)?.shift() ?? (() => ({ status: 200 }));
        const answer: Answer = await next(r);
        if (answer === 'hang') return;
        res.writeHead(answer.status, answer.headers).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  answer(path: string, ...answers: (Answer | ((r: Received) => Promise<Answer> | Answer))[]): void {
    this.scripts.set(path, answers.map((a) => (typeof a === 'function' ? a : () => a)));
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

let svc: TestService;
let receiver: Receiver;
let otherKey: string;
const connections: Record<string, { psa: string; rmm: string }> = {};

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  // Shrink the schedule's unit: 5 s -> 0.5 ms, 5 min -> 30 ms ... so retries take no real time.
  svc.services.webhooks.retryScale = 0.0001;
  receiver = await new Receiver().start();
  for (const tenantId of [svc.alphaId, svc.betaId]) {
    const rows = await svc.services.ds.getRepository(Connection).find({ where: { tenantId } });
    connections[tenantId] = { psa: rows.find((c) => c.kind === 'psa')!.id, rmm: rows.find((c) => c.kind === 'rmm')!.id };
  }
  // A second ISV that sees alpha (a grant on its PSA) but holds no event grant.
  const isv = await svc.graphql('mutation { create_isv(name: "Hook-less ISV") { id } }');
  otherKey = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "t") { key } }', { id: isv.data.create_isv.id })).data.issue_api_key.key;
  await svc.graphql('mutation($isv: ID!, $c: ID!) { set_grant(isv_id: $isv, connection_id: $c, keys: ["psa.ticket.create"]) { id } }',
    { isv: isv.data.create_isv.id, c: connections[svc.alphaId].psa });
}, 120_000);
afterAll(async () => {
  await receiver?.close();
  await svc?.close();
});

const hookPath = (tenantId: string) => `/tenants/${tenantId}/ticket-events/webhook`;

async function register(path: string, tenantId = svc.alphaId, target = receiver) {
  const res = await svc.api(hookPath(tenantId), { method: 'POST', json: { url: `${target.url}${path}` } });
  expect(res.status).toBe(201);
  return res.body as { id: string; url: string; secret: string; kinds: string[] };
}

/** Writes one event the way sync does and announces its commit; returns the event id. */
async function emit(kind: string, tenantId = svc.alphaId, fields: Partial<EventRecord> = {}): Promise<string> {
  const conn = connections[tenantId];
  const connectionId = kind === 'sandbox_reset' ? null : kind.startsWith('device.') ? conn.rmm : conn.psa;
  const repo = svc.services.ds.getRepository(EventRecord);
  const saved = await repo.save(repo.create({
    tenantId, connectionId, kind, type: null, dedupeKey: `test:${randomUUID()}`, occurredAt: new Date('2026-11-22T10:00:00Z'),
    actor: 'Dana Whitfield', summary: 'Printer offline on 3rd floor', subjectRef: 'ticket:4711', vendor: 'connectwise', vendorId: '4711',
    previousStatus: 'new', newStatus: 'in_progress', detail: { board: 'Service Desk' }, ...fields,
  }));
  await svc.services.events.emitCommitted(tenantId, [saved.id]);
  return saved.id;
}

/** An event row nobody is told about. */
async function emitSilently(kind: string): Promise<string> {
  const repo = svc.services.ds.getRepository(EventRecord);
  const saved = await repo.save(repo.create({ tenantId: svc.alphaId, connectionId: connections[svc.alphaId].psa, kind, type: null,
    dedupeKey: `test:${randomUUID()}`, occurredAt: new Date(), detail: {} }));
  return saved.id;
}

async function deliveryOf(webhookId: string, eventId: string): Promise<WebhookDelivery | null> {
  return svc.services.ds.getRepository(WebhookDelivery).findOne({ where: { webhookId, eventId } });
}

/** Waits until the delivery has been delivered or failed for good; `outcome` as a job's would be. */
async function settled(webhookId: string, eventId: string) {
  const d = await deliveryOf(webhookId, eventId);
  expect(d).not.toBeNull();
  const delivery = await settledDelivery(svc.services.ds, d!.id, 20_000);
  return { outcome: { state: delivery.status === 'delivered' ? 'completed' : 'failed', attemptsMade: delivery.attempts }, delivery };
}

async function remove(id: string, tenantId = svc.alphaId) {
  expect((await svc.api(`${hookPath(tenantId)}/${id}`, { method: 'DELETE' })).status).toBe(204);
}

describe('registration', () => {
  it('answers 201 with a whsec_ secret shown only there; the list and the stored row never hold it', async () => {
    const hook = await register('/once');
    expect(hook).toMatchObject({ url: `${receiver.url}/once`, enabled: true });
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
    expect(hook.kinds).toEqual(expect.arrayContaining(['ticket.created', 'ticket.closed', 'device.updated', 'company.created', 'sandbox_reset']));

    const list = await svc.api(hookPath(svc.alphaId));
    expect(list.status).toBe(200);
    expect(list.body.sandbox).toBe(true);
    const mine = list.body.webhook.find((w: any) => w.id === hook.id);
    expect(mine).toEqual({ id: hook.id, url: hook.url, enabled: true, disabled_reason: null, created_at: expect.any(String),
      tenant_id: svc.alphaId, kinds: null, previous_secret_expires_at: null,
      deliveries: { delivered: 0, failed: 0, pending: 0 } });
    expect(JSON.stringify(list.body)).not.toContain(hook.secret.slice(6));

    const [row] = await svc.services.ds.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]);
    expect(row.secret_encrypted).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(hook.secret.slice(6));
    await remove(hook.id);
  });

  it.each([
    'https://10.0.0.1/hook', 'https://192.168.1.5/x', 'https://169.254.169.254/latest/meta-data', 'http://10.0.0.1/hook',
    'https://100.64.0.1/x', 'https://[fd00::1]/x', 'https://[::ffff:10.0.0.1]/x',
  ])('refuses %s with 422 validation naming url', async (url) => {
    const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url } });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation', details: { field: 'url', reason: 'blocked: private address' } });
    expect(res.body.message).toMatch(/^url /);
  });

  it('refuses http:// (a public address is no excuse) and loopback once the local-testing flag is off', async () => {
    const http = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: 'http://93.184.216.34/hook' } });
    expect(http.status).toBe(422);
    expect(http.body).toMatchObject({ code: 'validation', details: { field: 'url' } });
    // The local-testing flag (on here) admits loopback only: a public name over http, resolvable or not, is refused.
    expect(svc.services.config.webhookAllowLoopback).toBe(true);
    for (const resolve of [async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); }, async () => [{ address: '93.184.216.34', family: 4 as const }]]) {
      svc.services.webhooks.resolve = resolve;
      try {
        const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: 'http://example.com/hook' } });
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ code: 'validation', details: { field: 'url', reason: 'url must use https://.' } });
      } finally {
        svc.services.webhooks.resolve = systemResolver;
      }
    }
    svc.services.config.webhookAllowLoopback = false;
    try {
      for (const url of ['https://127.0.0.1/x', 'https://[::1]/x', `${receiver.url}/hook`]) {
        const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url } });
        expect(res.status).toBe(422);
        expect(res.body).toMatchObject({ code: 'validation', details: { field: 'url', reason: 'blocked: private address' } });
        // A developer's receiver on this machine: the refusal names the one setting that admits it.
        expect(res.body.message).toContain('WEBHOOK_ALLOW_LOOPBACK=true');
      }
      // Names that are not this machine get no such advice.
      const lan = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: 'https://10.0.0.1/hook' } });
      expect(lan.body.message).not.toContain('WEBHOOK_ALLOW_LOOPBACK');
      const localhost = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: 'http://localhost:8080/hook' } });
      expect([localhost.status, localhost.body.message]).toEqual([422, expect.stringContaining('WEBHOOK_ALLOW_LOOPBACK=true')]);
    } finally {
      svc.services.config.webhookAllowLoopback = true;
    }
    const list = await svc.api(hookPath(svc.alphaId));
    expect(list.body.webhook).toEqual([]);
  });

  it('accepts a name that does not resolve yet (the README example); each delivery resolves it again and logs why it failed', async () => {
    svc.services.webhooks.resolve = async () => { throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }); };
    svc.services.webhooks.retryScale = 0.000001; // the whole schedule (about 76 h) in well under a second
    try {
      const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: 'https://Receiver.Example.com:443/msp/events' } });
      expect(res.status).toBe(201);
      // Stored and shown normalised: lower-case host, default port dropped.
      expect(res.body.url).toBe('https://receiver.example.com/msp/events');
      const eventId = await emit('ticket.updated');
      // Not refused for good: retried on the schedule (shrunk in tests) until it gives up, each try logged.
      const { delivery } = await settled(res.body.id, eventId);
      expect(delivery).toMatchObject({ status: 'gave_up', attempts: 10, lastStatusCode: null, lastError: 'url host "receiver.example.com" does not resolve.' });
      await remove(res.body.id);
    } finally {
      svc.services.webhooks.resolve = systemResolver;
      svc.services.webhooks.retryScale = 0.0001;
    }
  });

  it.each([
    ['https://hooks.example.com/a\r\nX-Injected: 1', 'invalid'], ['https://hooks.example.com/a b', 'invalid'], ['https://hooks.example.com/\ta', 'invalid'],
    ['https://printer.local/x', 'private'], ['https://db.internal/x', 'private'], ['https://nas.home.arpa/x', 'private'], ['https://a.invalid/x', 'invalid'],
  ])('refuses %j at once, without DNS (%s)', async (url, kind) => {
    let asked = 0;
    svc.services.webhooks.resolve = async () => { asked++; return [{ address: '93.184.216.34', family: 4 }]; };
    try {
      const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url } });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation', details: { field: 'url' } });
      if (kind === 'private') expect(res.body.details.reason).toBe('blocked: private address');
      expect(asked).toBe(0);
    } finally {
      svc.services.webhooks.resolve = systemResolver;
    }
    expect((await svc.api(hookPath(svc.alphaId))).body.webhook).toEqual([]);
  });

  it('needs an event grant: grant_missing naming psa.ticket.events', async () => {
    const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', key: otherKey, json: { url: 'https://93.184.216.34/hook' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'grant_missing', needed: 'psa.ticket.events', details: { needed: 'psa.ticket.events' } });
  });

  it('another ISV can neither list, read the log of, nor delete the webhook', async () => {
    const hook = await register('/isolated');
    const list = await svc.api(hookPath(svc.alphaId), { key: otherKey });
    expect(list.status).toBe(200);
    expect(list.body.webhook).toEqual([]);
    expect((await svc.api(`${hookPath(svc.alphaId)}/${hook.id}/deliveries`, { key: otherKey })).status).toBe(404);
    const del = await svc.api(`${hookPath(svc.alphaId)}/${hook.id}`, { method: 'DELETE', key: otherKey });
    expect(del.status).toBe(404);
    expect(del.body.code).toBe('not_found');
    // Still there for its owner; then the owner deletes it and it is gone.
    expect((await svc.api(hookPath(svc.alphaId))).body.webhook.map((w: any) => w.id)).toEqual([hook.id]);
    await remove(hook.id);
    expect((await svc.api(hookPath(svc.alphaId))).body.webhook).toEqual([]);
    expect((await svc.api(`${hookPath(svc.alphaId)}/${hook.id}/deliveries`)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('POSTs the Event signed the Standard Webhooks way, with Service-Signature carrying the same value', async () => {
    const hook = await register('/signed');
    const eventId = await emit('ticket.updated');
    const { delivery } = await settled(hook.id, eventId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200, lastError: null });

    const req = receiver.requests.filter((r) => r.path === '/signed');
    expect(req).toHaveLength(1);
    const { headers, body } = req[0];
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['service-signature']).toBe(headers['webhook-signature']);
    const verified = new StandardWebhook(hook.secret).verify(body, headers as Record<string, string>);
    expect(verified).toEqual({
      id: eventId, event_id: eventId, tenant_id: svc.alphaId, connection_id: connections[svc.alphaId].psa, kind: 'ticket.updated', type: null,
      occurred_at: '2026-11-22T10:00:00Z', actor: 'Dana Whitfield', summary: 'Printer offline on 3rd floor', subject_ref: 'ticket:4711',
      incident_id: null, canonical_ticket_id: null, canonical_device_id: null, canonical_company_id: null, previous_status: 'new',
      new_status: 'in_progress', vendor: 'connectwise', vendor_id: '4711', vendor_url: null, detail: { board: 'Service Desk' }, position: expect.stringMatching(/^[0-9]+$/),
    });
    // A signature made with another secret does not verify.
    const forged = new StandardWebhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`);
    expect(() => forged.verify(body, headers as Record<string, string>)).toThrow();

    const log = await svc.api(`${hookPath(svc.alphaId)}/${hook.id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body).toEqual({ deliveries: [{ id: delivery.id, event_id: eventId, status: 'delivered', attempts: 1, last_status_code: 200,
      event_kind: 'ticket.updated', tenant_id: svc.alphaId, latency_ms: expect.any(Number), next_attempt_at: null,
      last_error: null, delivered_at: expect.any(String), created_at: expect.any(String), updated_at: expect.any(String) }], sandbox: true, next_cursor: null });
    await remove(hook.id);
  });

  it('retries a 500 and delivers on the second try with the same webhook-id; the log shows both tries', async () => {
    const hook = await register('/flaky');
    let midway: WebhookDelivery | null = null;
    receiver.answer('/flaky', { status: 500 }, async () => {
      midway = await deliveryOf(hook.id, eventId);
      return { status: 200 };
    });
    const eventId = await emit('ticket.closed');
    const { delivery } = await settled(hook.id, eventId);
    // While the retry was in flight the first failure was on record.
    expect(midway).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500' });
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200, lastError: null });
    const tries = receiver.requests.filter((r) => r.path === '/flaky');
    expect(tries).toHaveLength(2);
    expect(tries.map((t) => t.headers['webhook-id'])).toEqual([eventId, eventId]);
    for (const t of tries) expect(() => new StandardWebhook(hook.secret).verify(t.body, t.headers as Record<string, string>)).not.toThrow();
    await remove(hook.id);
  });

  it('counts a timeout as a failed try and retries it', async () => {
    svc.services.webhooks.timeoutMs = 300;
    try {
      const hook = await register('/slow');
      let midway: WebhookDelivery | null = null;
      receiver.answer('/slow', 'hang', async () => {
        midway = await deliveryOf(hook.id, eventId);
        return { status: 204 };
      });
      const eventId = await emit('ticket.noted');
      // Only the hanging try times out: once it has (the retry is 5 s later), the retry gets the usual timeout,
      // so a loaded host answering it late does not make it a timeout too.
      await deliveryWhen(svc.services.ds, { webhookId: hook.id, eventId }, (d) => d.attempts >= 1, 'tried once');
      svc.services.webhooks.timeoutMs = 15_000;
      const { delivery } = await settled(hook.id, eventId);
      expect(midway).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: 'timeout after 0.3 s' });
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 204 });
      await remove(hook.id);
    } finally {
      svc.services.webhooks.timeoutMs = 15_000;
    }
  });

  it('does not follow a redirect: 3xx fails every try until the delivery gives up after ten', async () => {
    svc.services.webhooks.retryScale = 0.000001; // the whole schedule (about 76 h) in well under a second
    try {
      const hook = await register('/moved');
      receiver.answer('/moved', ...Array.from({ length: 10 }, () => ({ status: 301, headers: { location: `${receiver.url}/elsewhere` } })));
      const eventId = await emit('ticket.created');
      const { outcome, delivery } = await settled(hook.id, eventId);
      expect(outcome.state).toBe('failed');
      expect(delivery).toMatchObject({ status: 'gave_up', attempts: 10, lastStatusCode: 301, lastError: 'redirect not followed (HTTP 301)' });
      expect(receiver.requests.filter((r) => r.path === '/moved')).toHaveLength(10);
      expect(receiver.requests.some((r) => r.path === '/elsewhere')).toBe(false);
      const list = await svc.api(hookPath(svc.alphaId));
      expect(list.body.webhook.find((w: any) => w.id === hook.id).deliveries).toEqual({ delivered: 0, failed: 1, pending: 0 });
      await remove(hook.id);
    } finally {
      svc.services.webhooks.retryScale = 0.0001;
    }
  });

  it('a 410 disables the webhook at once, without retry, and later events are not sent to it', async () => {
    const gone = await register('/gone');
    const alive = await register('/alive');
    receiver.answer('/gone', { status: 410 }, { status: 410 });
    const first = await emit('device.updated');
    const { delivery } = await settled(gone.id, first);
    expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: 410 });
    await settled(alive.id, first);

    const list = await svc.api(hookPath(svc.alphaId));
    expect(list.body.webhook.find((w: any) => w.id === gone.id)).toMatchObject({ enabled: false, disabled_reason: 'receiver answered 410' });

    const later = await emit('device.updated');
    await settled(alive.id, later);
    expect(await deliveryOf(gone.id, later)).toBeNull();
    expect(receiver.requests.filter((r) => r.path === '/gone')).toHaveLength(1);
    expect(receiver.requests.filter((r) => r.path === '/alive').map((r) => r.headers['webhook-id'])).toEqual([first, later]);
    await remove(gone.id);
    await remove(alive.id);
  });

  it('checks the address again at delivery: a receiver that is no longer allowed is refused before connecting, not retried', async () => {
    const hook = await register('/recheck');
    svc.services.config.webhookAllowLoopback = false;
    try {
      const eventId = await emit('ticket.updated');
      const { outcome, delivery } = await settled(hook.id, eventId);
      expect(outcome).toMatchObject({ state: 'failed', attemptsMade: 1 });
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, lastStatusCode: null, lastError: 'blocked: private address' });
      expect(receiver.requests.some((r) => r.path === '/recheck')).toBe(false);
    } finally {
      svc.services.config.webhookAllowLoopback = true;
    }
    await remove(hook.id);
  });

  it('connects to the address the guard checked, not to what the name resolves to later', async () => {
    // The receiver listens on 127.0.0.2 only; the guard's DNS says "localhost" is there, while the
    // system's localhost (127.0.0.1 / ::1) has nothing on that port. Delivery only works if pinned.
    const pinned = await new Receiver().start('127.0.0.2');
    const port = new URL(pinned.url).port;
    svc.services.webhooks.resolve = async (host) => (host === 'localhost' ? [{ address: '127.0.0.2', family: 4 }] : []);
    try {
      const res = await svc.api(hookPath(svc.alphaId), { method: 'POST', json: { url: `http://localhost:${port}/pinned` } });
      expect(res.status).toBe(201);
      const eventId = await emit('ticket.updated');
      const { delivery } = await settled(res.body.id, eventId);
      expect(delivery).toMatchObject({ status: 'delivered', attempts: 1 });
      expect(pinned.requests.map((r) => r.headers.host)).toEqual([`localhost:${port}`]);
      await remove(res.body.id);
    } finally {
      svc.services.webhooks.resolve = systemResolver;
      await pinned.close();
    }
  });
});

describe('after a restart', () => {
  it('a delivery left pending without a queued try (the embedded queue lost it) is picked up again', async () => {
    const hook = await register('/resumed');
    const eventId = await emit('ticket.reopened');
    await settled(hook.id, eventId);
    // As if the service had stopped with the delivery still pending and its retry held in memory only.
    const repo = svc.services.ds.getRepository(WebhookDelivery);
    const silent = await svc.services.ds.getRepository(EventRecord).findOneByOrFail({ id: await emitSilently('ticket.updated') });
    const stranded = await repo.save(repo.create({ webhookId: hook.id, tenantId: svc.alphaId, eventId: silent.id, eventSeq: silent.seq, status: 'pending', attempts: 1, lastStatusCode: 503, lastError: 'HTTP 503' }));
    expect(await svc.services.webhooks.resumePending()).toBe(1);
    const { delivery } = await settled(hook.id, stranded.eventId);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    expect(receiver.requests.filter((r) => r.path === '/resumed').map((r) => r.headers['webhook-id'])).toEqual([eventId, stranded.eventId]);
    await remove(hook.id);
  });
});

describe('a lane whose wake-up never came', () => {
  it('is woken by the overdue sweep once its delivery has been due for a while, and a lane not yet overdue is left alone', async () => {
    const hook = await register('/overdue');
    const repo = svc.services.ds.getRepository(WebhookDelivery);
    const event = await svc.services.ds.getRepository(EventRecord).findOneByOrFail({ id: await emitSilently('ticket.updated') });
    // A retry due a minute ago whose delayed wake-up was lost: nothing else would send it.
    const stranded = await repo.save(repo.create({
      webhookId: hook.id, tenantId: svc.alphaId, eventId: event.id, eventSeq: event.seq, status: 'pending', attempts: 1,
      lastStatusCode: 503, lastError: 'HTTP 503', nextAttemptAt: new Date(Date.now() - 60_000),
    }));
    // Due only just now: its wake-up may still be on its way, so the sweep leaves it.
    expect(await svc.services.webhooks.wakeOverdue(120_000)).toBe(0);
    expect((await repo.findOneByOrFail({ id: stranded.id })).status).toBe('pending');
    expect(await svc.services.webhooks.wakeOverdue(30_000)).toBe(1);
    const { delivery } = await settled(hook.id, event.id);
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    expect(receiver.requests.filter((r) => r.path === '/overdue').map((r) => r.headers['webhook-id'])).toEqual([event.id]);
    expect(await svc.services.webhooks.wakeOverdue(0)).toBe(0);
    await remove(hook.id);
  });

  it('leaves a lane held by a retry due later alone, however long the deliveries behind it have waited', async () => {
    const hook = await register('/held');
    const repo = svc.services.ds.getRepository(WebhookDelivery);
    const [first, second] = await Promise.all([emitSilently('ticket.updated'), emitSilently('ticket.updated')])
      .then((ids) => Promise.all(ids.map((id) => svc.services.ds.getRepository(EventRecord).findOneByOrFail({ id }))))
      .then((events) => events.sort((a, b) => Number(a.seq) - Number(b.seq)));
    const held = await repo.save(repo.create({
      webhookId: hook.id, tenantId: svc.alphaId, eventId: first.id, eventSeq: first.seq, status: 'pending', attempts: 3,
      lastStatusCode: 503, lastError: 'HTTP 503', nextAttemptAt: new Date(Date.now() + 3_600_000),
    }));
    const behind = await repo.save(repo.create({ webhookId: hook.id, tenantId: svc.alphaId, eventId: second.id, eventSeq: second.seq, status: 'pending', attempts: 0 }));
    await svc.services.ds.query("UPDATE webhook_deliveries SET updated_at = now() - interval '10 minutes' WHERE id = ANY($1::uuid[])", [[held.id, behind.id]]);
    // Waking it would only queue one more delayed wake-up for the retry's time, every sweep.
    expect(await svc.services.webhooks.wakeOverdue(30_000)).toBe(0);
    expect(receiver.requests.filter((r) => r.path === '/held')).toEqual([]);
    await remove(hook.id);
  });
});

describe('which events go where', () => {
  it('sends only the kinds the ISV is granted on the event\'s tenant; sandbox_reset goes to every webhook', async () => {
    // Beta's grants leave out psa.company.events.
    const hook = await register('/beta', svc.betaId);
    expect(hook.kinds).not.toContain('company.updated');
    expect(hook.kinds).toContain('ticket.updated');
    const company = await emit('company.updated', svc.betaId);
    const ticket = await emit('ticket.updated', svc.betaId);
    const reset = await emit('sandbox_reset', svc.betaId);
    const alphaEvent = await emit('ticket.updated', svc.alphaId);
    await settled(hook.id, ticket);
    await settled(hook.id, reset);
    expect(await deliveryOf(hook.id, company)).toBeNull();
    expect(await deliveryOf(hook.id, alphaEvent)).toBeNull();
    expect(receiver.requests.filter((r) => r.path === '/beta').map((r) => r.headers['webhook-id']).sort()).toEqual([ticket, reset].sort());
    // Announcing the same events again adds no delivery.
    await svc.services.events.emitCommitted(svc.betaId, [ticket, reset]);
    const log = await svc.api(`${hookPath(svc.betaId)}/${hook.id}/deliveries?limit=1`);
    expect(log.body.deliveries).toHaveLength(1);
    const next = await svc.api(`${hookPath(svc.betaId)}/${hook.id}/deliveries?limit=1&cursor=${log.body.next_cursor}`);
    expect(next.body.deliveries).toHaveLength(1);
    expect(next.body.next_cursor).toBeNull();
    expect([log.body.deliveries[0].event_id, next.body.deliveries[0].event_id].sort()).toEqual([ticket, reset].sort());
    await remove(hook.id, svc.betaId);
  });
});

describe('the fan-out follows changes at once', () => {
  it('a webhook registered or removed, and a grant taken away or given back, count from the next event on', async () => {
    const first = await register('/known');
    // The tenant's webhooks and the ISV's grants are now what the fan-out knows.
    await settled(first.id, await emit('ticket.updated'));
    const second = await register('/newcomer');
    const both = await emit('ticket.updated');
    await settled(first.id, both);
    await settled(second.id, both);
    await remove(first.id);
    const afterRemoval = await emit('ticket.updated');
    await settled(second.id, afterRemoval);
    expect(receiver.requests.filter((r) => r.path === '/known').map((r) => r.headers['webhook-id'])).not.toContain(afterRemoval);

    // The ticket grant taken away: ticket events stop at once; given back, they flow again.
    const psa = connections[svc.alphaId].psa;
    const [grant] = await svc.services.ds.query('SELECT isv_id, keys FROM grants WHERE connection_id = $1 AND keys ? $2', [psa, 'psa.ticket.events']);
    const setGrant = (keys: string[]) => svc.graphql('mutation($isv: ID!, $c: ID!, $keys: [String!]!) { set_grant(isv_id: $isv, connection_id: $c, keys: $keys) { id } }',
      { isv: grant.isv_id, c: psa, keys });
    try {
      await setGrant((grant.keys as string[]).filter((k) => k !== 'psa.ticket.events'));
      const unseen = await emit('ticket.updated');
      const reset = await emit('sandbox_reset');
      await settled(second.id, reset);
      expect(await deliveryOf(second.id, unseen)).toBeNull();
    } finally {
      await setGrant(grant.keys);
    }
    await settled(second.id, await emit('ticket.updated'));
    await remove(second.id);
  });
});

describe('from an MSP change to the receiver', () => {
  it('a ticket edited in the PSA and synced is delivered as the very Event the feed shows', async () => {
    const hook = await register('/live');
    const before = new Set<string>((await svc.api(`/tenants/${svc.alphaId}/connections/events?limit=500`)).body.events.map((e: any) => e.id));
    (svc.services.simulators!.connectwise as ConnectWiseSimulator).update('sandbox-alpha', 'tickets', 30102, { summary: 'Scanner on 2nd floor jams on duplex' });
    const synced = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    expect(synced.status).toBe(200);
    const feed = (await svc.api(`/tenants/${svc.alphaId}/connections/events?limit=500`)).body.events.filter((e: any) => !before.has(e.id));
    expect(feed.map((e: any) => e.kind)).toEqual(['ticket.updated']);
    await settled(hook.id, feed[0].id);
    const [req] = receiver.requests.filter((r) => r.path === '/live');
    expect(new StandardWebhook(hook.secret).verify(req.body, req.headers as Record<string, string>)).toEqual(feed[0]);
    await remove(hook.id);
  });
});
