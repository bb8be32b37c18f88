/**
 * /metrics after a sandbox sync shows syncs (duration, records, errors, lag), jobs,
 * webhook deliveries, vendor calls (status class, 429s) and the API budget, per connector, with labels
 * of low cardinality: no tenant or connection id, no vendor path of the simulators.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { WebhookDelivery } from '../entities';
import { settledDelivery } from './support/webhook-deliveries';
import { startTestService, type TestService } from './support/service';

interface Sample { name: string; labels: Record<string, string>; value: number }

/** The Prometheus text format, one sample a line (label values here never hold a quote or comma). */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

const sum = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((n, s) => n + s.value, 0);
const has = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe('/metrics', () => {
  let svc: TestService;
  let receiver: http.Server;
  let receiverUrl: string;
  let samples: Sample[];
  /** Before the failure this test injects (the sandbox's first start has one recovered distributor sync failure of its own). */
  let started: Sample[];
  let families: Set<string>;

  beforeAll(async () => {
    receiver = http.createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    svc = await startTestService({ webhookAllowLoopback: true });

    // A webhook, then an MSP-side change: the sync it runs writes an event that is delivered.
    const hook = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: receiverUrl } });
    expect(hook.status).toBe(201);
    const simulated = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.alphaId, change: { kind: 'ticket_note', text: 'Metrics test note' } } });
    expect(simulated.status).toBe(200);
    const deliveries = await svc.services.ds.getRepository(WebhookDelivery).findBy({ webhookId: hook.body.id });
    expect(deliveries.length).toBeGreaterThan(0);
    for (const d of deliveries) expect((await settledDelivery(svc.services.ds, d.id, 20_000)).status).toBe('delivered');

    // The vendor throttles once: the sync waits and retries (a 429 counted, the sync still whole).
    (svc.services.simulators!.connectwise as any).faults.inject({ status: 429, times: 1, retryAfterSeconds: 0, method: 'GET' });
    expect((await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} })).status).toBe(200);
    started = parse(await (await fetch(`${svc.url}/metrics`)).text());
    // The distributor refuses a read once: that connection's sync fails (an error, a failed job).
    (svc.services.simulators!.pax8 as any).faults.inject({ status: 400, times: 1, method: 'GET' });
    const failed = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    expect(JSON.stringify(failed.body)).toContain('"ok":false');

    const res = await fetch(`${svc.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    samples = parse(text);
    families = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
  }, 120_000);

  afterAll(async () => {
    await svc?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  it('shows the sandbox syncs per connection kind and connector: duration, records, lag', () => {
    for (const [kind, connector] of [['psa', 'connectwise'], ['rmm', 'ninjaone'], ['distributor', 'pax8'], ['psa', 'halopsa']]) {
      expect([connector, sum(samples, 'msp_sync_duration_seconds_count', { kind, connector, outcome: 'ok' }) > 0]).toEqual([connector, true]);
      expect([connector, sum(samples, 'msp_sync_records_total', { kind, connector, change: 'fetched' }) > 0]).toEqual([connector, true]);
      expect([connector, has(samples, 'msp_sync_lag_seconds', { kind, connector })]).toEqual([connector, true]);
    }
    expect(sum(samples, 'msp_sync_errors_total', { kind: 'psa', connector: 'connectwise' })).toBe(0);
    const failures = (name: string, labels: Record<string, string>) => sum(samples, name, labels) - sum(started, name, labels);
    expect(failures('msp_sync_errors_total', { kind: 'distributor', connector: 'pax8' })).toBe(1);
    expect(failures('msp_sync_duration_seconds_count', { connector: 'pax8', outcome: 'failed' })).toBe(1);
  });

  it('shows jobs per queue: tries by outcome and the queue depth by state', () => {
    expect(sum(samples, 'msp_job_attempts_total', { queue: 'sync.connection', outcome: 'completed' })).toBeGreaterThan(0);
    expect(sum(samples, 'msp_job_attempts_total', { queue: 'webhook.deliver', outcome: 'completed' })).toBeGreaterThan(0);
    expect(sum(samples, 'msp_job_attempts_total', { queue: 'sync.connection', outcome: 'failed' }) - sum(started, 'msp_job_attempts_total', { queue: 'sync.connection', outcome: 'failed' })).toBe(1);
    for (const queue of ['sync.connection', 'vendor.write', 'webhook.deliver']) {
      for (const state of ['waiting', 'delayed', 'active', 'failed']) expect([queue, state, has(samples, 'msp_jobs', { queue, state })]).toEqual([queue, state, true]);
    }
  });

  it('shows webhook deliveries by outcome with their latency', () => {
    expect(sum(samples, 'msp_webhook_deliveries_total', { outcome: 'delivered' })).toBeGreaterThan(0);
    expect(sum(samples, 'msp_webhook_delivery_duration_seconds_count', { outcome: 'delivered' })).toBeGreaterThan(0);
  });

  it('shows vendor calls by status class, the 429s, and the budget used and left per connector', () => {
    expect(sum(samples, 'msp_vendor_requests_total', { connector: 'connectwise', status_class: '2xx' })).toBeGreaterThan(0);
    expect(sum(samples, 'msp_vendor_requests_total', { connector: 'connectwise', status_class: '4xx' })).toBeGreaterThan(0);
    expect(sum(samples, 'msp_vendor_throttled_total', { connector: 'connectwise' })).toBeGreaterThanOrEqual(1);
    for (const connector of ['connectwise', 'ninjaone', 'pax8', 'halopsa']) {
      expect([connector, sum(samples, 'msp_vendor_budget_used_requests', { connector }) > 0]).toEqual([connector, true]);
      expect([connector, sum(samples, 'msp_vendor_budget_left_requests', { connector }) > 0]).toEqual([connector, true]);
      const ratio = sum(samples, 'msp_vendor_budget_left_ratio_min', { connector });
      expect(ratio > 0 && ratio <= 1).toBe(true);
    }
  });

  it('labels nothing with a tenant, an id or a simulator path', () => {
    const ours = samples.filter((s) => s.name.startsWith('msp_') || s.name.startsWith('http_request'));
    const values = ours.flatMap((s) => Object.values(s.labels));
    for (const id of [svc.alphaId, svc.betaId]) expect(values).not.toContain(id);
    expect(values.filter((v) => /[0-9a-f]{8}-[0-9a-f]{4}-/i.test(v))).toEqual([]);
    // The sandbox's calls to its simulators are one route; vendor paths (with ids) never become labels.
    const routes = new Set(samples.filter((s) => s.name === 'http_requests_total').map((s) => s.labels.route));
    expect(routes.has('/sandbox-vendors')).toBe(true);
    expect([...routes].filter((r) => r.startsWith('/sandbox-vendors/') || /\/v4_6_release|\/api\/v2|\/v1\//.test(r))).toEqual([]);
    expect(routes.has('/tenants/:tenant_id/ticket-events/webhook')).toBe(true);
  });

  it('has a Grafana dashboard that charts every series of the service and only series that exist', () => {
    const dashboard = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'docs', 'grafana-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr));
    const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:msp|http)_[a-z_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, ''))));
    expect([...used].filter((name) => !families.has(name))).toEqual([]);
    expect([...families].filter((name) => name.startsWith('msp_') && !used.has(name))).toEqual([]);
  });
});

