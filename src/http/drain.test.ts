import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { drainable } from './drain';

/**
 * A server whose answers take `delayMs` (or never end, when null), behind our keep-alive setting;
 * `headFirst`: the head and a first chunk go out at once, the rest after the delay.
 */
async function serve(delayMs: number | null, headFirst = false) {
  const server = http.createServer((_req, res) => {
    if (delayMs === null) { res.write('never ends'); return; }
    if (headFirst) res.write('o');
    setTimeout(() => res.end(headFirst ? 'k' : 'ok'), delayMs);
  });
  server.keepAliveTimeout = 65_000;
  const inbound = drainable(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, inbound, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([
  p.then(() => 'closed' as const),
  new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), ms).unref()),
]);

test('a request under way at shutdown is answered, and its keep-alive connection does not hold the close', async () => {
  const { inbound, url } = await serve(300);
  const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
  try {
    const answer = request(url, { dispatcher: agent }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));
    await new Promise((r) => setTimeout(r, 100));
    // Without draining, this close waited for the client's keep-alive timeout (64 s with undici).
    expect(await within(inbound.drain(30_000), 5_000)).toBe('closed');
    expect(await answer).toEqual({ status: 200, body: 'ok' });
  } finally { await agent.close(); }
});

test('an answer whose head was out when draining started does not hold the close by its keep-alive connection', async () => {
  const { inbound, url } = await serve(300, true);
  const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 600_000 });
  try {
    const res = await request(url, { dispatcher: agent });
    // Too late to say Connection: close: the connection is closed once the answer ends instead.
    expect(res.headers.connection).toBe('keep-alive');
    const body = res.body.text();
    expect(await within(inbound.drain(30_000), 5_000)).toBe('closed');
    expect(await body).toBe('ok');
  } finally { await agent.close(); }
});

test('a request under way when draining starts is answered with Connection: close', async () => {
  const { server, inbound, url } = await serve(200);
  const agent = new Agent({ keepAliveTimeout: 60_000, pipelining: 1, connections: 1 });
  try {
    await (await request(url, { dispatcher: agent })).body.text(); // opens the kept-alive connection
    const first = request(url, { dispatcher: agent });
    await new Promise((r) => setTimeout(r, 50));
    const closing = inbound.drain(30_000);
    const res = await first;
    await res.body.text();
    // The close stops listening, so no new connection comes in; the one that answered says it ends.
    expect(res.headers.connection).toBe('close');
    expect(server.listening).toBe(false);
    expect(await within(closing, 5_000)).toBe('closed');
  } finally { await agent.close(); }
});

test('an answer that never ends is cut after the grace', async () => {
  const { inbound, url } = await serve(null);
  const agent = new Agent();
  try {
    const res = await request(url, { dispatcher: agent });
    const body = res.body.text().then(() => 'ended', () => 'cut');
    expect(await within(inbound.drain(300), 5_000)).toBe('closed');
    expect(await body).toBe('cut');
  } finally { await agent.destroy(); }
});
