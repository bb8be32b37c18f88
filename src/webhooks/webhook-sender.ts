/**
 * One signed POST to a receiver, connected to the address the SSRF guard checked. No redirects are
 * followed (neither client here follows them; the caller treats 3xx as a failure), and the whole exchange
 * is bounded by a timeout. Webhook lanes reuse connections only through ReceiverPools, which keeps one
 * keep-alive pool per (origin, checked address): every connection it opens goes to that address, and a
 * try reaches a pool only after the guard passed the address for it, so a reused connection is never one
 * to an address the guard now refuses. Import endpoints (postToReceiver) get a connection per request.
 *
 * The pools are undici's (already the vendor client, src/connectors/vendor-http.ts): for a small POST it
 * spends well under half the CPU of node:http, which was most of a webhook try's cost.
 */
import http from 'node:http';
import https from 'node:https';
import { Pool, type Dispatcher } from 'undici';
import { bareHostname, pinnedLookup, type CheckedReceiver } from './ssrf-guard';

export interface SendResult {
  /** Null when no HTTP answer came (network error, timeout). */
  statusCode: number | null;
  retryAfter: string | null;
  /** Why the attempt failed without an answer. Never contains the secret or the body. */
  error: string | null;
  /** The receiver's answer, up to 64 KiB (import endpoints answer the new customer's ref). */
  body?: string;
}

const MAX_RESPONSE_BYTES = 64 * 1024;
/** An idle kept-alive connection is closed after this long (sooner when the receiver says so). */
const KEEP_ALIVE_MS = 30_000;

/**
 * Keep-alive pools, one per receiver origin and checked address; at most `connections()` connections
 * each (asked when the pool is made: the lanes' window).
 */
export class ReceiverPools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly connections: () => number, private readonly maxPools = 1_000) {}

  /** The pool for this checked target; its connections all go to `target.address`. */
  for(target: CheckedReceiver): Pool {
    const key = `${target.url.origin}|${target.address}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Most recently used last: the oldest pool is the one dropped when there are too many.
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    pool = new Pool(target.url.origin, {
      connections: this.connections(), pipelining: 1, keepAliveTimeout: KEEP_ALIVE_MS,
      // Every connection goes to the checked address whatever the name resolves to now; TLS still checks the name.
      connect: { lookup: pinnedLookup(target.address, target.family) },
    });
    if (this.pools.size >= this.maxPools) {
      const [oldestKey, oldest] = this.pools.entries().next().value!;
      this.pools.delete(oldestKey);
      oldest.destroy().catch(() => undefined);
    }
    this.pools.set(key, pool);
    return pool;
  }

  close(): void {
    for (const pool of this.pools.values()) pool.destroy().catch(() => undefined);
    this.pools.clear();
  }
}

/**
 * One POST over a pool from ReceiverPools.for(target). `onWritten` is called once: when the request
 * (headers and body) has been handed in full to its connection, or when the exchange ended without that.
 */
export function postToPool(
  pool: Dispatcher, target: CheckedReceiver, body: string, headers: Record<string, string>, timeoutMs: number, onWritten: () => void = () => undefined,
): Promise<SendResult> {
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let handedOver = false;
    const written = () => {
      if (handedOver) return;
      handedOver = true;
      onWritten();
    };
    let abort: ((err: Error) => void) | null = null;
    let statusCode: number | null = null;
    let retryAfter: string | null = null;
    const chunks: Buffer[] = [];
    let seen = 0;
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      written();
      resolve(r);
    };
    const timer = setTimeout(() => {
      finish({ statusCode: null, retryAfter: null, error: `timeout after ${Math.round(timeoutMs / 100) / 10} s` });
      abort?.(new Error('timeout'));
    }, timeoutMs);
    pool.dispatch({ method: 'POST', path: `${target.url.pathname}${target.url.search}`, headers, body }, {
      onConnect(a) {
        abort = a;
        // Timed out while waiting for a connection: never sent.
        if (settled) a(new Error('timeout'));
      },
      onHeaders(code, rawHeaders) {
        statusCode = code;
        retryAfter = rawHeaderValue(rawHeaders, 'retry-after');
        return true;
      },
      onData(chunk) {
        // Keep at most 64 KiB of the answer; a receiver cannot make us buffer more.
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) {
          finish({ statusCode, retryAfter, error: null });
          abort?.(new Error('answer too large'));
          return false;
        }
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        finish({ statusCode, retryAfter, error: null, body: chunks.length ? Buffer.concat(chunks).toString('utf8') : '' });
      },
      onError(err) {
        // An answer whose body broke off still answered.
        finish(statusCode !== null ? { statusCode, retryAfter, error: null } : { statusCode: null, retryAfter: null, error: networkError(err as NodeJS.ErrnoException) });
      },
      onRequestSent() {
        written();
      },
    } as Dispatcher.DispatchHandler);
  });
}

function rawHeaderValue(raw: Buffer[] | string[] | null | undefined, name: string): string | null {
  if (!raw) return null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === name) return String(raw[i + 1]);
  }
  return null;
}

/** One POST on a connection of its own (import endpoints). */
export function postToReceiver(
  target: CheckedReceiver, body: string, headers: Record<string, string>, timeoutMs: number,
): Promise<SendResult> {
  const { url } = target;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = client.request({
      method: 'POST',
      protocol: url.protocol,
      hostname: bareHostname(url),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(target.address, target.family),
      agent: false,
    }, (res) => {
      const result: SendResult = { statusCode: res.statusCode ?? null, retryAfter: headerValue(res.headers['retry-after']), error: null };
      // Keep at most 64 KiB of the answer; a receiver cannot make us buffer more.
      const chunks: Buffer[] = [];
      let seen = 0;
      res.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen > MAX_RESPONSE_BYTES) { res.destroy(); finish(result); return; }
        chunks.push(chunk);
      });
      res.on('end', () => finish({ ...result, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('close', () => finish(result));
      res.on('error', () => finish(result));
    });
    const timer = setTimeout(() => {
      finish({ statusCode: null, retryAfter: null, error: `timeout after ${Math.round(timeoutMs / 100) / 10} s` });
      req.destroy();
    }, timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ statusCode: null, retryAfter: null, error: networkError(err) }));
    req.end(body);
  });
}

function headerValue(v: string | string[] | undefined): string | null {
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

function networkError(err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  // undici names a connection the receiver closed under a request UND_ERR_SOCKET.
  if (err.code === 'ECONNRESET' || err.code === 'UND_ERR_SOCKET') return 'connection reset';
  if (err.code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(err.code)) return `tls error: ${err.code}`;
  return `network error: ${err.code ?? err.message}`;
}
