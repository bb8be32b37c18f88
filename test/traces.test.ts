/**
 * OpenTelemetry traces over OTLP/HTTP (docs/architecture.md, Operations): the service started with
 * OTEL_EXPORTER_OTLP_ENDPOINT pointing at a collector on 127.0.0.1 (this file's receiver of POST /v1/traces,
 * JSON as the exporter sends it). A ticket commit is one trace, request -> operation -> vendor.write job ->
 * vendor call; a change simulated in the sandbox is synced by a job whose trace links to the request and
 * holds the webhook's delivery; the request id is on every span; no attribute carries a secret or a vendor
 * payload. `PRINT_TRACE=1` prints the commit's trace as a table.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { startTestService, type TestService } from './support/service';

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values: OtlpValue[] } }
interface OtlpKeyValue { key: string; value: OtlpValue }
interface OtlpSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number;
  startTimeUnixNano: string; endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  links?: { traceId: string; spanId: string; attributes?: OtlpKeyValue[] }[];
  events?: { name: string; attributes?: OtlpKeyValue[] }[];
}
interface ExportRequest { resourceSpans: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

/** A span as the assertions read it: attributes flattened to plain values. */
interface Span { traceId: string; spanId: string; parentSpanId: string | null; name: string; ms: number; attrs: Record<string, unknown>; links: { traceId: string; spanId: string }[] }

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? v.arrayValue?.values.map(valueOf);
const attrsOf = (kvs: OtlpKeyValue[] = []) => Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));

/** The collector: every export request kept as it came (JSON). */
class OtlpReceiver {
  readonly requests: ExportRequest[] = [];
  readonly contentTypes: string[] = [];
  private server!: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') { res.writeHead(404).end(); return; }
        this.contentTypes.push(String(req.headers['content-type']));
        this.requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  spans(): Span[] {
    return this.requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))).map((s) => ({
      traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || null, name: s.name,
      ms: Number(BigInt(s.endTimeUnixNano) - BigInt(s.startTimeUnixNano)) / 1e6,
      attrs: attrsOf(s.attributes), links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
    }));
  }

  /** Every string the exports carry outside ids and times: names, attribute keys and values, events, resource. */
  texts(): string[] {
    const out: string[] = [];
    const kv = (kvs: OtlpKeyValue[] = []) => { for (const a of kvs) out.push(a.key, JSON.stringify(a.value)); };
    for (const r of this.requests) {
      for (const rs of r.resourceSpans) {
        kv(rs.resource?.attributes);
        for (const ss of rs.scopeSpans) for (const s of ss.spans) {
          out.push(s.name);
          kv(s.attributes);
          for (const e of s.events ?? []) { out.push(e.name); kv(e.attributes); }
          for (const l of s.links ?? []) kv(l.attributes);
        }
      }
    }
    return out;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A webhook receiver answering 200, keeping each body. */
async function webhookReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { bodies.push(Buffer.concat(chunks).toString('utf8')); res.writeHead(200).end('{}'); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: async () => { server.closeAllConnections(); await new Promise<void>((resolve) => server.close(() => resolve())); },
  };
}

const SUMMARY = 'Trace check: plotter jams on tray 2';

let collector: OtlpReceiver;
let hooks: Awaited<ReturnType<typeof webhookReceiver>>;
let svc: TestService;
let commit: { requestId: string; ticketRef: string; company: string };
let simulated: { requestId: string; eventId: string };
let webhookSecret: string;
let spans: Span[];

beforeAll(async () => {
  collector = await new OtlpReceiver().start();
  hooks = await webhookReceiver();
  svc = await startTestService({}, { env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: 'msp-traces-test', WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const alpha = (path: string) => `/tenants/${svc.alphaId}${path}`;

  const hook = await svc.api(alpha('/ticket-events/webhook'), { method: 'POST', json: { url: `${hooks.url}/hook` } });
  expect(hook.status).toBe(201);
  webhookSecret = hook.body.secret;

  // A company named once in the PSA, so the ticket create resolves it.
  const counts = new Map<string, number>();
  const psa = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  for (const c of psa.list('sandbox-alpha', 'companies') as { name: string }[]) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const company = [...counts.entries()].find(([, n]) => n === 1)![0];
  const created = await svc.api(alpha('/tickets'), { method: 'POST', json: { company_name: company, summary: SUMMARY, dry_run: false, idempotency_key: 'trace-commit-1' } });
  expect(created.status).toBe(201);
  commit = { requestId: created.headers.get('x-request-id')!, ticketRef: created.body.ticket_ref, company };

  // The commit's refresh sync ends first: a sync asked for while another runs joins it, and its spans
  // would then carry the commit's request id, not the simulate's.
  expect((await svc.api(alpha('/sync'), { method: 'POST', json: {} })).status).toBe(200);
  const sim = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.alphaId, change: { kind: 'ticket_status' } } });
  expect(sim.status).toBe(200);
  // The ticket the commit created may be picked up by this sync too (ticket.created): the status change is ours.
  simulated = { requestId: sim.headers.get('x-request-id')!, eventId: sim.body.events.find((e: { kind: string }) => e.kind === 'ticket.updated').id };
  // The delivery is a job: wait (bounded) until the receiver has it.
  for (let i = 0; i < 400 && !hooks.bodies.some((b) => b.includes(simulated.eventId)); i++) await new Promise((r) => setTimeout(r, 25));
  expect(hooks.bodies.some((b) => b.includes(simulated.eventId))).toBe(true);

  // The commit asked for a refresh sync of tickets 2 s later: wait (bounded) until its span was exported.
  const refreshed = () => collector.spans().some((s) => s.name === 'job sync.connection' && s.attrs['msp.request_id'] === commit.requestId);
  for (let i = 0; i < 300 && !refreshed(); i++) await new Promise((r) => setTimeout(r, 50));
  // Shutdown flushes what is still batched: after it, the collector has every span.
  await svc.close();
  spans = collector.spans();
}, 180_000);

afterAll(async () => {
  await svc?.close();
  await hooks?.close();
  await collector?.close();
});

const byId = (id: string | null) => spans.find((s) => s.spanId === id) ?? null;
const inTrace = (traceId: string) => spans.filter((s) => s.traceId === traceId);
const parentName = (s: Span) => byId(s.parentSpanId)?.name ?? null;

/** The commit's trace, depth first from its root, as rows of a table. */
function traceTable(traceId: string): string {
  const all = inTrace(traceId);
  const rows: string[] = ['| span | parent | ms |', '|---|---|---|'];
  const walk = (s: Span, depth: number) => {
    rows.push(`| ${'  '.repeat(depth)}${s.name} | ${parentName(s) ?? '(root)'} | ${s.ms.toFixed(1)} |`);
    for (const child of all.filter((c) => c.parentSpanId === s.spanId)) walk(child, depth + 1);
  };
  for (const root of all.filter((s) => !byId(s.parentSpanId))) walk(root, 0);
  return rows.join('\n');
}

describe('traces over OTLP', () => {
  it('are exported as OTLP JSON under the configured service name', () => {
    expect(collector.contentTypes.length).toBeGreaterThan(0);
    expect(collector.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
    const names = collector.requests.flatMap((r) => r.resourceSpans.map((rs) => attrsOf(rs.resource?.attributes)['service.name']));
    expect(new Set(names)).toEqual(new Set(['msp-traces-test']));
  });

  it('follow a ticket commit: request -> operation -> vendor.write job -> vendor call, the request id on every span', () => {
    const request = spans.find((s) => s.attrs['msp.request_id'] === commit.requestId && s.name === 'POST /tenants/:tenant_id/tickets');
    expect(request).toBeDefined();
    expect(request!.parentSpanId).toBeNull();
    expect(request!.attrs).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/tenants/:tenant_id/tickets', 'http.response.status_code': 201 });

    const trace = inTrace(request!.traceId);
    const operation = trace.find((s) => s.name.startsWith('operation ') && s.parentSpanId === request!.spanId);
    expect(operation).toBeDefined();
    expect(operation!.attrs['msp.tenant_id']).toBe(svc.alphaId);
    const job = trace.find((s) => s.name === 'job vendor.write');
    expect(job).toBeDefined();
    // The job hangs under the operation (through whatever the operation does in between).
    let up: Span | null = job!;
    while (up && up.spanId !== operation!.spanId) up = byId(up.parentSpanId);
    expect(up).not.toBeNull();
    expect(job!.attrs).toMatchObject({ 'msp.job.name': 'vendor.write', 'msp.tenant_id': svc.alphaId });
    const vendor = trace.filter((s) => s.name.startsWith('vendor ') && s.parentSpanId === job!.spanId);
    expect(vendor.map((s) => [s.name, s.attrs['msp.connector'], s.attrs['http.response.status_code']])).toContainEqual(['vendor POST', 'connectwise', 201]);
    // Every span of the request's trace says which request it served, and for whom past the routing.
    for (const s of trace) expect([s.name, s.attrs['msp.request_id']]).toEqual([s.name, commit.requestId]);
    for (const s of trace.filter((x) => x !== request)) expect([s.name, s.attrs['msp.tenant_id']]).toEqual([s.name, svc.alphaId]);
    if (process.env.PRINT_TRACE) console.log(`trace of a ticket commit (${svc.config.databaseUrl ? 'postgres+redis' : 'embedded'}):\n${traceTable(request!.traceId)}`);
  });

  it('the refresh sync a commit asks for is a trace of its own, linked to the commit', () => {
    const request = spans.find((s) => s.attrs['msp.request_id'] === commit.requestId && !s.parentSpanId)!;
    const syncs = spans.filter((s) => s.name === 'job sync.connection' && s.links.some((l) => l.traceId === request.traceId));
    expect(syncs.length).toBeGreaterThan(0);
    for (const s of syncs) expect([s.parentSpanId, s.traceId === request.traceId, s.attrs['msp.request_id']]).toEqual([null, false, commit.requestId]);
  });

  it('follow a simulated change: its sync job links to the request, and holds the webhook delivery', () => {
    const request = spans.find((s) => s.attrs['msp.request_id'] === simulated.requestId && s.name === 'POST /sandbox/simulate');
    expect(request).toBeDefined();
    const delivery = spans.find((s) => s.name === 'webhook delivery' && s.attrs['msp.event.id'] === simulated.eventId);
    expect(delivery).toBeDefined();
    expect(delivery!.attrs).toMatchObject({ 'msp.webhook.outcome': 'delivered', 'http.response.status_code': 200, 'msp.event.kind': 'ticket.updated', 'server.address': '127.0.0.1', 'msp.request_id': simulated.requestId });
    expect(parentName(delivery!)).toBe('job webhook.deliver');
    // Up the delivery's trace to its root: the sync job, which links to a span of the simulate request's trace.
    let root = delivery!;
    while (root.parentSpanId) root = byId(root.parentSpanId)!;
    expect(root.name).toBe('job sync.connection');
    expect(root.links.map((l) => l.traceId)).toContain(request!.traceId);
    const syncTrace = inTrace(root.traceId);
    expect(syncTrace.some((s) => s.name === 'vendor GET' && s.attrs['msp.connector'] === 'connectwise')).toBe(true);
    for (const s of syncTrace) expect([s.name, s.attrs['msp.request_id']]).toEqual([s.name, simulated.requestId]);
    if (process.env.PRINT_TRACE) console.log(`trace of the simulated change's sync:\n${traceTable(root.traceId)}`);
  });

  it('carry no secret and no vendor payload', () => {
    const texts = collector.texts().join('\n');
    const secrets = [svc.key, svc.config.adminToken, 'sandbox-secret', 'sandbox-private', 'sandbox-refresh-token', webhookSecret, webhookSecret.replace(/^whsec_/, '')];
    for (const secret of secrets) expect(texts.includes(secret) ? secret : null).toBeNull();
    // The commit's payload (its summary and company) and the webhook body's fields.
    for (const payload of [SUMMARY, commit.company, '"summary"', 'previous_status', 'new_status']) expect(texts.includes(payload) ? payload : null).toBeNull();
    // Only the attributes the service sets: no payload field became one.
    const ours = /^(http\.request\.method|http\.route|http\.response\.status_code|server\.address|url\.path|error\.type|msp\.[a-z_.]+)$/;
    expect([...new Set(spans.flatMap((s) => Object.keys(s.attrs)))].filter((k) => !ours.test(k))).toEqual([]);
    // No query string: a vendor filter (and any token a vendor takes there) stays out.
    for (const s of spans) for (const v of Object.values(s.attrs)) if (typeof v === 'string') expect(v.includes('?') ? v : null).toBeNull();
  });
});
