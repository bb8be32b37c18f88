/**
 * The writers' one call helper (writer-http.ts) over real loopback HTTP: a token vendor's call is sent once
 * more with a fresh token after a 401 (and only once), a vendor without tokens is not; a refusal of the
 * vendor's kind becomes field problems, anything else stays a VendorHttpError; a write answered 503 is
 * sent once, a read is retried.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VendorHttpClient, VendorHttpError } from './vendor-http';
import { VendorValidationError } from './vendor-errors';
import { writerCall, type VendorDialect } from './writer-http';
import { clearSessionTokens } from './vendor-session';
import type { WriteContext } from './write-types';

let server: http.Server;
let base: string;
let tokens = 0;
const seen: { method: string; url: string; auth: string }[] = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    // The token endpoint answers a stale token first, then a fresh one.
    if (req.url === '/token') {
      tokens += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: tokens === 1 ? 'stale' : 'fresh', expires_in: 3600 }));
      return;
    }
    seen.push({ method: req.method ?? '', url: req.url ?? '', auth: String(req.headers.authorization ?? '') });
    const [, status] = /^\/(\d+)/.exec(req.url ?? '') ?? [];
    // A fresh token is accepted where a stale one is refused.
    const code = req.url?.startsWith('/401') && req.headers.authorization === 'Bearer fresh' ? 200 : Number(status);
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(code === 200 ? '{"id":1}' : '{"message":"summary is too long"}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });
beforeEach(() => { seen.length = 0; tokens = 0; clearSessionTokens(); });

const dialect = (withTokens: boolean): VendorDialect => ({
  connector: 'halopsa',
  profile: withTokens
    ? { connector: 'halopsa', auth: { kind: 'oauth-client-credentials', tokenUrl: '/token', defaultLifetimeS: 3600 } }
    : { connector: 'halopsa', auth: { kind: 'headers', headers: () => ({ authorization: 'Bearer stale' }) } },
  refusedStatuses: [400],
  problems: (body, fields, fallback) => [{ field: fields.summary ?? fallback, message: String((body as { message?: string }).message) }],
});
const ctx = (): WriteContext => ({ baseUrl: base, credentials: { clientId: 'i', clientSecret: 's' }, http: new VendorHttpClient({ timeoutMs: 2000, maxRetries: 2, baseDelayMs: 1, maxDelayMs: 1 }) });

it('sends a token vendor\'s call once more with a fresh token after a 401, a POST included', async () => {
  expect(await writerCall(dialect(true))(ctx(), { method: 'POST', path: '/401', body: {} }, {}, 'body')).toEqual({ id: 1 });
  expect(seen.map((s) => s.auth)).toEqual(['Bearer stale', 'Bearer fresh']);
  // One token at first, one more after the 401: the resend asks for no third.
  expect(tokens).toBe(2);
});

it('does not renew for a vendor without tokens: the 401 stays a VendorHttpError', async () => {
  await expect(writerCall(dialect(false))(ctx(), { method: 'POST', path: '/401', body: {} }, {}, 'body')).rejects.toBeInstanceOf(VendorHttpError);
  expect(seen).toHaveLength(1);
});

it('turns the vendor\'s refusal into field problems named after our request, and only its refusal statuses', async () => {
  const err = await writerCall(dialect(false))(ctx(), { method: 'POST', path: '/400', body: {} }, { summary: 'summary' }, 'body').catch((e) => e);
  expect(err).toBeInstanceOf(VendorValidationError);
  expect((err as VendorValidationError).problems).toEqual([{ field: 'summary', message: 'summary is too long' }]);
  expect(await writerCall(dialect(false), [404])(ctx(), { method: 'POST', path: '/400', body: {} }, {}, 'body').catch((e) => e)).toBeInstanceOf(VendorHttpError);
  expect(await writerCall(dialect(false), [404])(ctx(), { method: 'POST', path: '/404', body: {} }, {}, 'body').catch((e) => e)).toBeInstanceOf(VendorValidationError);
});

it('sends a write once and retries a read', async () => {
  await writerCall(dialect(false))(ctx(), { method: 'POST', path: '/503', body: {} }, {}, 'body').catch(() => undefined);
  expect(seen).toHaveLength(1);
  seen.length = 0;
  await writerCall(dialect(false))(ctx(), { method: 'POST', path: '/503/query', body: {}, read: true }, {}, 'body').catch(() => undefined);
  expect(seen.length).toBeGreaterThan(1);
});
