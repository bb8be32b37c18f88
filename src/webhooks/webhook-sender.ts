/**
 * One signed POST to a receiver, connected to the address the SSRF guard checked. No redirects are
 * followed (Node's http never follows them; the caller treats 3xx as a failure), no connection is
 * reused, and the whole exchange is bounded by a timeout.
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
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code && /^(ERR_TLS|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(err.code)) return `tls error: ${err.code}`;
  return `network error: ${err.code ?? err.message}`;
}
