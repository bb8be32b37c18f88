/**
 * One POST over a receiver pool (webhook-sender.ts) against real local HTTP servers: the request is
 * handed over in full before the answer is read, the answer's status and Retry-After come back, a
 * redirect is not followed, an answer is read up to 64 KiB, a silent receiver times out, a closed port
 * is refused, and a pool keeps at most its connections and reuses them.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postToPool, ReceiverPools } from './webhook-sender';
import type { CheckedReceiver } from './ssrf-guard';

interface Server { url: string; connections: number; bodies: string[]; close(): Promise<void> }

async function serve(handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void): Promise<Server> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { const body = Buffer.concat(chunks).toString('utf8'); bodies.push(body); handler(req, res, body); });
  });
  const s: Server = {
    url: '', connections: 0, bodies,
    close: () => { server.closeAllConnections(); return new Promise<void>((r) => server.close(() => r())); },
  };
  server.on('connection', () => { s.connections++; });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?x=1`;
  return s;
}

const target = (url: string): CheckedReceiver => ({ url: new URL(url), address: '127.0.0.1', family: 4 });
let pools: ReceiverPools;
beforeEach(() => { pools = new ReceiverPools(() => 4); });
afterEach(() => pools.close());

describe('a POST over a receiver pool', () => {
  it('hands the request over in full before the answer, and answers status, Retry-After and body', async () => {
    const order: string[] = [];
    const server = await serve((req, res, body) => {
      order.push(`received ${req.method} ${req.url} ${body}`);
      res.writeHead(503, { 'retry-after': '120' }).end('busy');
    });
    try {
      const t = target(server.url);
      const result = await postToPool(pools.for(t), t, '{"a":1}', { 'content-type': 'application/json', 'webhook-id': 'e1' }, 5_000, () => order.push('written'));
      order.push('answered');
      expect(result).toEqual({ statusCode: 503, retryAfter: '120', error: null, body: 'busy' });
      expect(order).toEqual(['written', 'received POST /hook?x=1 {"a":1}', 'answered']);
    } finally {
      await server.close();
    }
  });

  it('does not follow a redirect, and reads at most 64 KiB of an answer', async () => {
    const server = await serve((req, res) => {
      if (req.url?.startsWith('/hook')) res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(200).end('x'.repeat(200 * 1024));
    });
    try {
      const t = target(server.url);
      expect(await postToPool(pools.for(t), t, '{}', {}, 5_000)).toMatchObject({ statusCode: 302, error: null });
      expect(server.bodies).toHaveLength(1);
      const big = target(server.url.replace('/hook', '/big'));
      const answer = await postToPool(pools.for(big), big, '{}', {}, 5_000);
      expect(answer.statusCode).toBe(200);
      expect(answer.body?.length ?? 0).toBeLessThanOrEqual(64 * 1024);
    } finally {
      await server.close();
    }
  });

  it('gives up on a receiver that does not answer, and names a refused connection', async () => {
    const server = await serve(() => undefined);
    try {
      const t = target(server.url);
      let written = 0;
      expect(await postToPool(pools.for(t), t, '{}', {}, 200, () => { written++; })).toEqual({ statusCode: null, retryAfter: null, error: 'timeout after 0.2 s' });
      expect(written).toBe(1);
    } finally {
      await server.close();
    }
    const closed = target(server.url);
    expect(await postToPool(pools.for(closed), closed, '{}', {}, 5_000)).toMatchObject({ statusCode: null, error: 'connection refused' });
  });

  it('keeps at most its connections, and reuses them', async () => {
    let open = 0;
    let most = 0;
    const server = await serve((_req, res) => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => { open--; res.writeHead(204).end(); }, 5);
    });
    try {
      const t = target(server.url);
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => postToPool(pools.for(t), t, `{"i":${i}}`, {}, 5_000)));
      expect(results.every((r) => r.statusCode === 204)).toBe(true);
      expect(server.bodies).toHaveLength(40);
      expect(most).toBeLessThanOrEqual(4);
      expect(server.connections).toBeLessThanOrEqual(4);
      await postToPool(pools.for(t), t, '{}', {}, 5_000);
      expect(server.connections).toBeLessThanOrEqual(4);
    } finally {
      await server.close();
    }
  });
});
