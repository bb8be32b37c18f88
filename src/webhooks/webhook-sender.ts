/**
 * One signed POST to a receiver, connected to the address the SSRF guard checked. No redirects are
 * followed (Node's http never follows them; the caller treats 3xx as a failure), and the whole exchange
 * is bounded by a timeout. Connections are reused only through a ReceiverAgents agent, which keeps one
 * keep-alive pool per (origin, checked address): every connection it opens goes to that address, and a
 * try reaches a pool only after the guard passed the address for it, so a reused connection is never one
 * to an address the guard now refuses. Without an agent (import endpoints) each POST has its own connection.
 */
import http from 'node:http';
import https from 'node:https';
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

/**
 * Keep-alive agents, one per receiver origin and checked address; at most `maxSockets()` connections
 * each (asked when the pool is made: the lanes' window).
 */
export class ReceiverAgents {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxSockets: () => number, private readonly maxAgents = 1_000) {}

  /** The pool for this checked target; its connections all go to `target.address`. */
  for(target: CheckedReceiver): http.Agent {
    const key = `${target.url.origin}|${target.address}`;
    let agent = this.agents.get(key);
    if (agent) {
      // Most recently used last: the oldest pool is the one dropped when there are too many.
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    const max = this.maxSockets();
    const options = { keepAlive: true, maxSockets: max, maxFreeSockets: max, timeout: 30_000, scheduling: 'lifo' as const };
    agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    if (this.agents.size >= this.maxAgents) {
      const [oldestKey, oldest] = this.agents.entries().next().value!;
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    this.agents.set(key, agent);
    return agent;
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

export interface SendOptions {
  /** A keep-alive pool from ReceiverAgents.for(target); none: a connection of its own. */
  agent?: http.Agent;
  /** Called once the request (headers and body) has been handed to the connection in full. */
  onWritten?: () => void;
}

export function postToReceiver(
  target: CheckedReceiver, body: string, headers: Record<string, string>, timeoutMs: number, opts: SendOptions = {},
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
      agent: opts.agent ?? false,
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
    req.on('error', (err: NodeJS.ErrnoException) => { opts.onWritten?.(); finish({ statusCode: null, retryAfter: null, error: networkError(err) }); });
    if (opts.onWritten) req.once('finish', opts.onWritten);
    req.end(body);
  });
}

function headerValue(v: string | string[] | undefined): string | null {
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

function networkError(err: NodeJS.ErrnoException): string {
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(err.code)) return `tls error: ${err.code}`;
  return `network error: ${err.code ?? err.message}`;
}
