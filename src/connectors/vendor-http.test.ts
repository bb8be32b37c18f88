/**
 * The one classification of a failed vendor call (vendor-http.ts, VendorOutcome), over real loopback
 * HTTP: only a definite answer of the vendor is a refusal; no answer, a gateway's 502/504 and a 5xx
 * without the vendor's own error body are unknown outcomes, and a write's send deadline is kept.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VendorHttpClient, VendorHttpError, type VendorOutcome } from './vendor-http';

let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const [, status, kind] = /^\/(\d+)\/(json|html|hang|reset)/.exec(req.url ?? '') ?? [];
    if (kind === 'hang') return; // never answers
    if (kind === 'reset') { req.socket.destroy(); return; }
    if (kind === 'json') { res.writeHead(Number(status), { 'content-type': 'application/json' }); res.end('{"code":"X","message":"vendor says no"}'); return; }
    res.writeHead(Number(status), { 'content-type': 'text/html' }); res.end('<html><body>Bad Gateway</body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });

/**
 * An answer is waited for as long as a loaded test host may take to give it (a 300 ms timeout turned a
 * 503 into a timeout once, with two test runs side by side); only the call that never answers times out fast.
 */
const answered = () => new VendorHttpClient({ timeoutMs: 10_000, maxRetries: 0 });

async function outcomeOf(path: string, client = answered()): Promise<VendorOutcome> {
  try {
    await client.request({ method: 'POST', url: `${base}${path}`, json: {} });
  } catch (err) {
    if (err instanceof VendorHttpError) return err.outcome;
    throw err;
  }
  throw new Error('expected a failure');
}

it('classifies each failure once: refusal, throttle, outage, unknown, not sent', async () => {
  expect(await outcomeOf('/400/json')).toBe('refused');
  expect(await outcomeOf('/404/html')).toBe('refused');
  expect(await outcomeOf('/500/json')).toBe('refused');
  expect(await outcomeOf('/429/json')).toBe('throttled');
  expect(await outcomeOf('/503/json')).toBe('unavailable');
  expect(await outcomeOf('/502/json')).toBe('unknown');
  expect(await outcomeOf('/502/html')).toBe('unknown');
  expect(await outcomeOf('/504/html')).toBe('unknown');
  expect(await outcomeOf('/500/html')).toBe('unknown');
  expect(await outcomeOf('/503/html')).toBe('unknown');
  expect(await outcomeOf('/200/hang', new VendorHttpClient({ timeoutMs: 300, maxRetries: 0 }))).toBe('unknown');
  expect(await outcomeOf('/200/reset')).toBe('unknown');
  // Nothing listens there: the connection never opened.
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  await expect(new VendorHttpClient({ maxRetries: 0 }).request({ method: 'POST', url: `http://127.0.0.1:${port}/x`, json: {} }))
    .rejects.toMatchObject({ outcome: 'not_sent' });
});

it('a write under a fence reports when it sent a write of unknown outcome, and sends nothing after its deadline', async () => {
  const unknown: number[] = [];
  const fenced = answered().withFence({ beforeSend: async () => true, unknown: (at) => unknown.push(at) });
  expect(await outcomeOf('/502/html', fenced)).toBe('unknown');
  expect(await outcomeOf('/400/json', fenced)).toBe('refused');
  expect(unknown).toHaveLength(1);
  const late = new VendorHttpClient({ maxRetries: 0 }).withFence({ beforeSend: async () => false, unknown: (at) => unknown.push(at) });
  expect(await outcomeOf('/400/json', late)).toBe('not_sent');
  // A read (safe to repeat) is not a write: the deadline does not hold it back.
  await expect(late.request({ method: 'GET', url: `${base}/400/json` })).rejects.toMatchObject({ outcome: 'refused' });
  expect(unknown).toHaveLength(1);
});
