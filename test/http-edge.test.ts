/**
 * The HTTP edge (docs/architecture.md, Errors): 413 over the body limit, 405 with Allow for a known path and a
 * wrong method, every problem of a request-schema failure, the request id in every error body, our own
 * per-key rate limit with its headers, and the per-address limit on failed authentications.
 */
import net from 'node:net';
import { startTestService, type TestService } from './support/service';

/** Sends raw bytes and reads the whole answer (the server closes the connection after these errors). */
function rawRequest(url: string, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.end(bytes));
    let data = '';
    socket.on('data', (d) => { data += d; });
    socket.on('error', reject);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: rest.join('\r\n\r\n') });
    });
  });
}

let svc: TestService;
let limited: TestService;
beforeAll(async () => {
  svc = await startTestService();
  limited = await startTestService({}, { env: { RATE_LIMIT_PER_MINUTE: '5', AUTH_FAILURES_PER_MINUTE: '3' } });
}, 180_000);
afterAll(async () => { await svc?.close(); await limited?.close(); });

it('a body over 1 MB is 413 payload_too_large in the Error envelope, and nothing is written', async () => {
  const before = (await svc.api(`/tenants/${svc.alphaId}/audit?limit=500`)).body.audit?.length;
  const res = await svc.api(`/tenants/${svc.alphaId}/tickets`, { method: 'POST', json: { company_name: 'Contoso Ltd', summary: 'x'.repeat(1_100_000), dry_run: false, idempotency_key: 'big-1' } });
  expect(res.status).toBe(413);
  expect(res.body).toMatchObject({ code: 'payload_too_large', status: 413 });
  expect((await svc.api(`/tenants/${svc.alphaId}/audit?limit=500`)).body.audit?.length).toBe(before);
});

it('a known path with a method it does not take is 405 with Allow; an unknown path stays 404', async () => {
  const res = await svc.api(`/tenants/${svc.alphaId}/tickets`, { method: 'DELETE' });
  expect(res.status).toBe(405);
  expect(res.body.code).toBe('method_not_allowed');
  expect(res.headers.get('allow')!.split(', ').sort()).toEqual(['GET', 'POST']);
  const put = await svc.api(`/tenants/${svc.alphaId}/tickets/30101`, { method: 'PUT', json: {} });
  expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET']);
  expect((await svc.api(`/tenants/${svc.alphaId}/no-such-list`)).status).toBe(404);
});

it('a request-schema failure lists every problem, and every error body carries the request id', async () => {
  const res = await fetch(`${svc.url}/tenants/${svc.alphaId}/tickets`, {
    method: 'POST', headers: { 'x-api-key': svc.key, 'content-type': 'application/json', 'x-request-id': 'edge-test-1' },
    body: JSON.stringify({ summary: 42, priority: ['high'], unexpected: true }),
  });
  const body = await res.json() as { detail: { loc: string[] }[]; request_id: string };
  expect(res.status).toBe(422);
  expect(body.detail.map((d) => d.loc.join('.')).sort()).toEqual(expect.arrayContaining(['body.priority', 'body.summary']));
  expect(body.detail.length).toBeGreaterThanOrEqual(3);
  expect(body.request_id).toBe('edge-test-1');
  expect(res.headers.get('x-request-id')).toBe('edge-test-1');
  const missing = await svc.api(`/tenants/${svc.alphaId}/tickets/no-such-ticket`);
  expect(missing.body.request_id).toBe(missing.headers.get('x-request-id'));
  // An id that could not go back in a header is replaced by one of ours.
  const odd = await fetch(`${svc.url}/tenants`, { headers: { 'x-request-id': 'a b\tc' } });
  expect(odd.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
});

it('every answer carries the RateLimit headers; past the limit a key gets 429 with Retry-After, another key does not', async () => {
  const seen: number[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await limited.api('/tenants');
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('5');
    seen.push(Number(res.headers.get('ratelimit-remaining')));
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
  }
  expect(seen).toEqual([4, 3, 2, 1, 0]);
  const over = await limited.api(`/tenants/${limited.alphaId}/tickets`);
  expect(over.status).toBe(429);
  expect(over.body.code).toBe('rate_limited');
  expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(over.headers.get('ratelimit-remaining')).toBe('0');
  const other = await limited.api('/tenants', { key: limited.alphaMspKey });
  expect(other.status).toBe(200);
});

it('failed authentications from one address are limited: past the limit, 429 instead of 401', async () => {
  for (let i = 0; i < 3; i++) expect((await limited.api('/tenants', { key: `sk_live_random_${i}_${Date.now()}` })).status).toBe(401);
  const res = await limited.api('/tenants', { key: 'sk_live_random_next' });
  expect(res.status).toBe(429);
  expect(res.body.code).toBe('rate_limited');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
});

it("the HTTP server's own 400, 431 and 417 answers carry the Error envelope", async () => {
  const bad = await rawRequest(svc.url, 'GARBAGE / HTTP/1.1\r\n\r\n');
  expect(bad.status).toBe(400);
  expect(JSON.parse(bad.body)).toMatchObject({ code: 'bad_request', status: 400 });
  const big = await rawRequest(svc.url, `GET /tenants HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  expect(big.status).toBe(431);
  expect(JSON.parse(big.body)).toMatchObject({ code: 'headers_too_large', status: 431 });
  const expectation = await rawRequest(svc.url, 'POST /tenants HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}');
  expect(expectation.status).toBe(417);
  expect(JSON.parse(expectation.body)).toMatchObject({ code: 'expectation_failed', status: 417 });
  expect(expectation.headers.toLowerCase()).toContain('content-type: application/json');
});
