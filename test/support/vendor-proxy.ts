/**
 * A small loopback HTTP proxy in front of a vendor simulator, for the crash tests of the write fence
 * (docs/architecture.md, Writes): it can hold a ticket create before forwarding it (a slow vendor: the request reaches the
 * vendor after the service that sent it has died), or forward it and answer 502 the way a gateway does
 * (the vendor created the ticket; the caller never sees its answer). Everything else passes through.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface VendorProxy {
  url: string;
  /** What the next ticket creates (POST ending in `createPath`) meet; `pass` by default. */
  mode: { kind: 'pass' } | { kind: 'hold'; until: Promise<void> } | { kind: 'gateway502' };
  /** Ticket creates received so far. */
  creates: number;
  /** Resolves once `count` creates have been received, or rejects after `withinMs` (a bounded wait). */
  createsReached(count: number, withinMs: number): Promise<void>;
  /** How long each held create was held before it was forwarded (ms). */
  held: number[];
  /** Resolves once every held create has reached the vendor and been answered there. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export async function startVendorProxy(upstreamOrigin: string, createPath: string): Promise<VendorProxy> {
  const upstream = new URL(upstreamOrigin);
  const inFlight = new Set<Promise<void>>();
  const waiting = new Set<{ count: number; done: () => void }>();
  const forward = (req: http.IncomingMessage, body: Buffer) => new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    const out = http.request({
      host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: upstream.host, connection: 'close', 'content-length': String(body.length) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });

  const proxy: VendorProxy = {
    url: '',
    mode: { kind: 'pass' },
    creates: 0,
    createsReached(count, withinMs) {
      if (proxy.creates >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const waiter = { count, done: () => { clearTimeout(timer); waiting.delete(waiter); resolve(); } };
        const timer = setTimeout(() => { waiting.delete(waiter); reject(new Error(`${proxy.creates} creates after ${withinMs} ms, ${count} expected`)); }, withinMs);
        waiting.add(waiter);
      });
    },
    held: [],
    async settled() { while (inFlight.size) await Promise.all([...inFlight]); },
    close: async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const isCreate = req.method === 'POST' && (req.url ?? '').split('?')[0].endsWith(createPath);
      const mode = isCreate ? proxy.mode : { kind: 'pass' as const };
      if (isCreate) {
        proxy.creates += 1;
        for (const w of [...waiting]) if (proxy.creates >= w.count) w.done();
      }
      // The whole exchange with the vendor runs even when our caller has gone (killed): the vendor does the work.
      const work = (async () => {
        if (mode.kind === 'hold') {
          const since = Date.now();
          await mode.until;
          proxy.held.push(Date.now() - since);
        }
        const answer = await forward(req, body).catch(() => null);
        if (res.destroyed || res.writableEnded) return;
        if (!answer) { res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>'); return; }
        if (mode.kind === 'gateway502') {
          res.writeHead(502, { 'content-type': 'text/html' }).end('<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>');
          return;
        }
        const headers = { ...answer.headers };
        delete headers['transfer-encoding'];
        delete headers.connection;
        res.writeHead(answer.status, { ...headers, 'content-length': String(answer.body.length) }).end(answer.body);
      })();
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
