/**
 * A quiet start. At `info`, the sandbox's own calls to its simulators are not logged; headers never are.
 * An error line means an operator must act: a 501 is info without a stack, and a dead webhook receiver
 * writes one warning, not one per try.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { WebhookDelivery } from '../entities';
import { createLogger } from '../src/shared/logger';
import { DeliveryFailureLog } from '../src/webhooks/delivery-log';
import { DELIVERY_ATTEMPTS } from '../src/webhooks/retry-schedule';
import { settledDelivery } from './support/webhook-deliveries';
import { startTestService, type TestService } from './support/service';

function capture(): { lines: Array<Record<string, any>>; stream: Writable } {
  const lines: Array<Record<string, any>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

describe('request logs', () => {
  const info = capture();
  const debug = capture();
  let svc: TestService;
  let debugSvc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ webhookAllowLoopback: true }, { logger: createLogger('info', info.stream) });
    debugSvc = await startTestService({}, { logger: createLogger('debug', debug.stream) });
  });
  afterAll(async () => { await svc?.close(); await debugSvc?.close(); });

  // The test harness itself fetches /openapi.json from outside once it has started: that line belongs.
  const requestLines = (lines: Array<Record<string, any>>) => lines.filter((l) => l.req && l.req.path !== '/openapi.json');

  it('logs no request line at info while the sandbox starts and syncs from its simulators', () => {
    expect(requestLines(info.lines)).toEqual([]);
    expect(info.lines.filter((l) => l.req).map((l) => l.req.path)).toEqual(['/openapi.json']);
  });

  it('logs the sandbox\'s own simulator calls at debug, so they are there when asked for', () => {
    const internal = requestLines(debug.lines).filter((l) => String(l.req.path).startsWith('/sandbox-vendors/'));
    expect(internal.length).toBeGreaterThan(0);
    expect(internal.every((l) => l.level === 20)).toBe(true);
  });

  it('logs a request from outside at info, with method, path and status but no headers', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`, { headers: { authorization: 'Bearer should-not-appear' } });
    expect(res.status).toBe(200);
    const lines = requestLines(info.lines);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 30, req: { method: 'GET', path: `/tenants/${svc.alphaId}/tickets` }, res: { statusCode: 200 } });
    const text = JSON.stringify(info.lines);
    expect(text).not.toContain(svc.key);
    expect(text).not.toContain('should-not-appear');
    expect(text).not.toMatch(/"headers"/);
  });

  it('logs a 501 (a refusal the service means to give) at info, without an error or a stack', async () => {
    const res = await svc.api(`/tenants/${svc.betaId}/agreements`);
    expect(res.status).toBe(501);
    const line = info.lines.find((l) => l.req?.path === `/tenants/${svc.betaId}/agreements`);
    expect(line).toMatchObject({ level: 30, res: { statusCode: 501 }, msg: 'request completed' });
    expect(line).not.toHaveProperty('err');
    expect(JSON.stringify(info.lines)).not.toContain('failed with status code');
  });

  it('logs no error and no "sync failed" line on a first start; the sandbox\'s rehearsed failure is recorded all the same', async () => {
    expect(info.lines.filter((l) => l.level >= 50)).toEqual([]);
    expect(info.lines.filter((l) => /sync failed/.test(String(l.msg)))).toEqual([]);
    // The rehearsal (fixtures/sandbox.json, first_sync_failure) still leaves its failure in alpha's audit log.
    const audit = await svc.api(`/tenants/${svc.alphaId}/audit?limit=100`);
    expect(audit.body.audit.filter((e: any) => e.action === 'sync.failed').map((e: any) => e.detail)).toEqual([
      expect.objectContaining({ connector: 'pax8', resource: 'subscriptions', error: expect.stringMatching(/400/) }),
    ]);
  });
});

describe('a dead webhook receiver', () => {
  const info = capture();
  let svc: TestService;
  let receiver: http.Server;
  let tries = 0;
  beforeAll(async () => {
    receiver = http.createServer((req, res) => { tries++; req.resume(); req.on('end', () => res.writeHead(500).end('{}')); });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    svc = await startTestService({ webhookAllowLoopback: true }, { logger: createLogger('info', info.stream) });
    svc.services.webhooks.retryScale = 0.00001; // the whole schedule (24 h at its end) in about 3 s
  });
  afterAll(async () => {
    await svc?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  it('writes one warning for it, not one per failed try, and no error', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/gone`;
    const hook = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url } });
    expect(hook.status).toBe(201);
    for (let i = 0; i < 3; i++) {
      const r = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.alphaId, change: { kind: 'ticket_note', text: `Dead receiver note ${i}` } } });
      expect(r.status).toBe(200);
    }
    const deliveries = await svc.services.ds.getRepository(WebhookDelivery).findBy({ webhookId: hook.body.id });
    expect(deliveries.length).toBeGreaterThanOrEqual(3);
    for (const d of deliveries) {
      // A delivery left pending says where its lane's wake-up went (seen once in CI on PostgreSQL + Redis, not reproduced since).
      const settled = await settledDelivery(svc.services.ds, d.id, 60_000).catch(async (err: Error) => {
        const wakes = (await svc.services.queue.counts()).find((c) => c.name === 'webhook.deliver');
        throw new Error(`${err.message}; webhook.deliver jobs: ${JSON.stringify(wakes)}`);
      });
      expect(settled.status).toBe('gave_up');
    }
    // Every try was made and is in the delivery log...
    expect(tries).toBe(deliveries.length * DELIVERY_ATTEMPTS);
    const log = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook/${hook.body.id}/deliveries`);
    expect(log.status).toBe(200);
    // ...and the service log has one line about it.
    const serious = info.lines.filter((l) => l.level >= 40);
    expect(serious.map((l) => l.msg)).toEqual([expect.stringContaining('webhook delivery failed')]);
    expect(serious[0]).toMatchObject({ level: 40, webhookId: hook.body.id, tenantId: svc.alphaId });
    expect(JSON.stringify(serious[0])).not.toContain('/gone');
  }, 120_000);

  it('logs a still-failing webhook again at most once an hour, and its recovery once', () => {
    const lines = capture();
    let now = 0;
    const log = new DeliveryFailureLog(createLogger('info', lines.stream), 60 * 60_000, () => now);
    const hook = { webhookId: 'w1', tenantId: 't1' };
    log.failed(hook, 'retry', 'HTTP 500');
    for (now = 60_000; now < 60 * 60_000; now += 60_000) log.failed(hook, 'retry', 'HTTP 500');
    now = 60 * 60_000;
    log.failed(hook, 'gave_up', 'HTTP 500');
    log.delivered(hook);
    log.delivered(hook);
    log.failed({ webhookId: 'w2', tenantId: 't1' }, 'retry', 'no answer');
    expect(lines.lines.map((l) => [l.level, l.webhookId, l.failuresSinceLastLine])).toEqual([
      [40, 'w1', undefined], [40, 'w1', 60], [30, 'w1', undefined], [40, 'w2', undefined],
    ]);
  });
});
