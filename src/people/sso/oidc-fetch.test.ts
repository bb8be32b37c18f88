/**
 * The guarded fetch every identity-provider call goes through, against a real HTTP server on loopback:
 * loopback only under the local-testing flag, plain http never otherwise, a private address never, no
 * redirect followed, the request body sent as given, and an oversized answer refused.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from './oidc-fetch';

let server: http.Server;
let base: string;
const seen: { method: string; body: string; auth?: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, body: Buffer.concat(chunks).toString('utf8'), auth: req.headers.authorization });
      if (req.url === '/redirect') { res.writeHead(302, { location: 'http://10.0.0.7/steal' }); return res.end(); }
      if (req.url === '/huge') { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(Buffer.alloc(600 * 1024, 0x20)); }
      res.writeHead(200, { 'content-type': 'application/json', 'x-two': ['a', 'b'] });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const loopback = guardedFetch({ allowLoopback: true, timeoutMs: 5000 });
const strict = guardedFetch({ allowLoopback: false, timeoutMs: 5000 });

it('reaches a loopback provider only under the local-testing flag', async () => {
  await expect(strict(`${base}/token`, { method: 'GET', headers: {} })).rejects.toThrow(/private address|https/);
  const res = await loopback(`${base}/token`, { method: 'GET', headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true });
  expect(res.headers.get('x-two')).toBe('a, b');
});

it('never reaches a private address, nor plain http on a public name', async () => {
  await expect(loopback('http://10.0.0.7/.well-known/openid-configuration', { method: 'GET', headers: {} })).rejects.toThrow('private address');
  await expect(strict('http://idp.example.com/.well-known/openid-configuration', { method: 'GET', headers: {} })).rejects.toThrow('https');
});

it('sends the body as given and follows no redirect', async () => {
  seen.length = 0;
  const body = new URLSearchParams({ grant_type: 'authorization_code', code: 'abc' });
  const res = await loopback(`${base}/redirect`, { method: 'POST', headers: { authorization: 'Basic eDp5', 'content-type': 'application/x-www-form-urlencoded' }, body });
  expect(res.status).toBe(302);
  expect(seen).toEqual([{ method: 'POST', body: 'grant_type=authorization_code&code=abc', auth: 'Basic eDp5' }]);
});

it('refuses an answer larger than a provider ever needs', async () => {
  await expect(loopback(`${base}/huge`, { method: 'GET', headers: {} })).rejects.toThrow('too large');
});
