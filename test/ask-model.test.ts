/**
 * The optional ask engine against a loopback HTTP server that speaks the OpenAI chat-completions shape:
 * a good query runs (and its figure still comes from the store); a query naming a field or resource
 * that does not exist, or a malformed answer, is refused and nothing is run; the SSRF guard refuses a
 * loopback model unless WEBHOOK_ALLOW_LOOPBACK is on.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ModelEngine } from '../src/ask/model-engine';
import { loadConfig } from '../src/config/config';
import { startTestService, type TestService } from './support/service';

interface Seen { path: string; headers: http.IncomingHttpHeaders; body: any }
const seen: Seen[] = [];
const replies: { status: number; body: string }[] = [];
const API_KEY = 'sk-ask-model-test-secret-0001';

const chat = (content: string) => JSON.stringify({
  id: 'chatcmpl-test', object: 'chat.completion', created: 0, model: 'test-model',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
});

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    seen.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(body) });
    const reply = replies.shift() ?? { status: 500, body: '{"error":"no reply queued"}' };
    res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
  });
});

let svc: TestService;
let base: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  svc = await startTestService({}, { env: { ASK_MODEL_BASE_URL: base, ASK_MODEL_NAME: 'test-model', ASK_MODEL_API_KEY: API_KEY, WEBHOOK_ALLOW_LOOPBACK: 'true' } });
}, 120_000);
afterAll(async () => { await svc?.close(); server.close(); });

const offlineAlphaDevices = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures/sandbox-alpha/ninjaone/devices.json'), 'utf8'))
  .filter((d: any) => d.offline === true).map((d: any) => String(d.id)).sort();

/** Asks with one queued model reply; reports the answer and whether a record query ran. */
async function askWith(reply: { status: number; body: string }, question = 'how many devices are offline') {
  replies.push(reply);
  const spy = jest.spyOn(svc.services.ds, 'query');
  try {
    const res = await svc.api(`/tenants/${svc.alphaId}/ask`, { method: 'POST', json: { question } });
    expect(res.status).toBe(200);
    const ran = spy.mock.calls.some(([sql]) => /COUNT\(\*\)::int AS n/.test(String(sql)));
    return { answer: res.body, ran };
  } finally {
    spy.mockRestore();
  }
}

describe('ask through an OpenAI-compatible model', () => {
  it('a good structured query runs; the figure and citations come from the store', async () => {
    const before = seen.length;
    const { answer, ran } = await askWith({ status: 200, body: chat(JSON.stringify({ resource: 'devices', filters: { online: false }, aggregate: 'count' })) });
    expect(ran).toBe(true);
    expect(answer).toMatchObject({ answered: true, engine: 'model', count: offlineAlphaDevices.length });
    expect(answer.query).toMatchObject({ resource: 'devices', filters: { online: false }, aggregate: 'count' });
    expect(answer.records.map((r: any) => r.source_id).sort()).toEqual(offlineAlphaDevices);
    expect(answer.answer).toContain(String(offlineAlphaDevices.length));
    // The request: OpenAI shape, the configured model, the key as a bearer token, the schema in the prompt.
    const req = seen[before];
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.body).toMatchObject({ model: 'test-model', messages: [{ role: 'system' }, { role: 'user', content: 'how many devices are offline' }] });
    expect(req.body.messages[0].content).toContain('"patches_pending"');
  });

  it('a company the model names is matched against the store, code fences tolerated', async () => {
    const q = { resource: 'tickets', filters: { company: 'contoso ltd', status: 'open' }, aggregate: 'count' };
    const { answer } = await askWith({ status: 200, body: chat('```json\n' + JSON.stringify(q) + '\n```') });
    expect(answer.answered).toBe(true);
    expect(answer.query.filters.company).toBe('Contoso Ltd');
  });

  it.each([
    ['a filter that does not exist', { resource: 'devices', filters: { colour: 'red' }, aggregate: 'count' }],
    ['a filter the resource does not have', { resource: 'devices', filters: { priority: 'high' }, aggregate: 'count' }],
    ['a resource that does not exist', { resource: 'invoices', filters: {}, aggregate: 'count' }],
    ['an extra top-level field', { resource: 'tickets', filters: {}, aggregate: 'count', sql: 'DROP TABLE tickets' }],
    ['an aggregate that does not exist', { resource: 'tickets', filters: {}, aggregate: 'sum' }],
  ])('%s is refused and nothing runs', async (_label, q) => {
    const { answer, ran } = await askWith({ status: 200, body: chat(JSON.stringify(q)) });
    expect(ran).toBe(false);
    expect(answer).toMatchObject({ answered: false, query: null, records: [], count: null, engine: 'model' });
    expect(answer.answer).toMatch(/refused and nothing was run/);
    expect(answer.suggestions.length).toBeGreaterThan(0);
  });

  it.each([
    ['prose instead of JSON', { status: 200, body: chat('There are probably about 12 offline devices.') }],
    ['not a chat completion', { status: 200, body: JSON.stringify({ result: 'devices' }) }],
    ['not JSON at all', { status: 200, body: '<html>oops</html>' }],
    ['an HTTP error', { status: 500, body: '{"error":"overloaded"}' }],
  ])('a malformed model answer (%s) is refused and nothing runs', async (_label, reply) => {
    const { answer, ran } = await askWith(reply);
    expect(ran).toBe(false);
    expect(answer).toMatchObject({ answered: false, query: null, records: [], engine: 'model' });
    expect(answer.answer).not.toMatch(/\b12\b/);
  });

  it('a company unknown to the store is refused, not answered with zero', async () => {
    const { answer, ran } = await askWith({ status: 200, body: chat(JSON.stringify({ resource: 'tickets', filters: { company: 'Acme' }, aggregate: 'count' })) });
    expect(ran).toBe(false);
    expect(answer.answered).toBe(false);
  });

  it('the SSRF guard refuses a loopback model unless WEBHOOK_ALLOW_LOOPBACK is on, and a private one always', async () => {
    const before = seen.length;
    const guarded = new ModelEngine({ baseUrl: base, apiKey: API_KEY, model: 'test-model', timeoutMs: 2000 }, false);
    const refused = await guarded.translate('how many devices are offline');
    expect(refused).toMatchObject({ ok: false });
    const privateNet = new ModelEngine({ baseUrl: 'http://10.0.0.1/v1', apiKey: API_KEY, model: 'test-model', timeoutMs: 2000 }, true);
    expect(await privateNet.translate('x')).toMatchObject({ ok: false, reason: expect.stringMatching(/private/) });
    expect(seen.length).toBe(before);
    // The key never appears in what the caller is told.
    expect(JSON.stringify(refused)).not.toContain(API_KEY);
  });

  it('the configuration is validated: off by default, a base URL needs a model name, only http(s)', () => {
    expect(loadConfig({}, { ephemeral: true }).askModel).toBeNull();
    expect(() => loadConfig({ ASK_MODEL_BASE_URL: 'https://models.example.com/v1', ASK_MODEL_API_KEY: API_KEY }, { ephemeral: true })).toThrow(/ASK_MODEL_NAME/);
    expect(() => loadConfig({ ASK_MODEL_BASE_URL: 'ftp://models.example.com', ASK_MODEL_NAME: 'm' }, { ephemeral: true })).toThrow(/ASK_MODEL_BASE_URL/);
    expect(() => loadConfig({ ASK_MODEL_NAME: 'm', ASK_MODEL_API_KEY: API_KEY }, { ephemeral: true })).toThrow(/ASK_MODEL_BASE_URL/);
    try { loadConfig({ ASK_MODEL_BASE_URL: 'ftp://x', ASK_MODEL_NAME: 'm', ASK_MODEL_API_KEY: API_KEY }, { ephemeral: true }); } catch (e) { expect(String(e)).not.toContain(API_KEY); }
    expect(loadConfig({ ASK_MODEL_BASE_URL: 'https://models.example.com/v1/', ASK_MODEL_NAME: 'm' }, { ephemeral: true }).askModel)
      .toEqual({ baseUrl: 'https://models.example.com/v1', apiKey: null, model: 'm', timeoutMs: 20_000 });
  });

  it('the examples say which engine answers', async () => {
    expect((await svc.api(`/tenants/${svc.alphaId}/ask/examples`)).body.engine).toBe('model');
  });
});
