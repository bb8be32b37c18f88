/**
 * Every call to an identity provider (discovery, its keys, the token endpoint) goes through here, handed
 * to openid-client as its `customFetch` (docs/architecture.md, Single sign-on): the URL must pass the
 * outbound guard of src/webhooks/ssrf-guard.ts (public https; loopback, over http too, only under
 * WEBHOOK_ALLOW_LOOPBACK, the test and sandbox setting), the connection goes to the exact address that
 * was checked (no DNS rebinding), no redirect is followed, and the answer is bounded in time and size.
 */
import http from 'node:http';
import https from 'node:https';
import { bareHostname, checkReceiverUrl, pinnedLookup, type HostResolver } from '../../webhooks/ssrf-guard';

const MAX_ANSWER_BYTES = 512 * 1024;

export interface GuardedFetchOptions {
  allowLoopback: boolean;
  timeoutMs: number;
  resolve?: HostResolver;
}

/** The options openid-client passes (its CustomFetchOptions), as much as is used here. */
interface FetchOptions {
  method: string;
  headers: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

async function bodyBytes(body: unknown): Promise<Buffer | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  // Anything else (a stream) is read through the Fetch API's own reader.
  return Buffer.from(await new Response(body as ConstructorParameters<typeof Response>[0]).arrayBuffer());
}

export function guardedFetch(opts: GuardedFetchOptions): (url: string, options: FetchOptions) => Promise<Response> {
  return async (rawUrl, options) => {
    const target = await checkReceiverUrl(rawUrl, { allowLoopback: opts.allowLoopback, resolve: opts.resolve });
    const body = await bodyBytes(options.body);
    const headers: Record<string, string> = { ...options.headers };
    if (body) headers['content-length'] = String(body.length);
    const client = target.url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        req.destroy();
        reject(err);
      };
      const onAbort = () => fail(new Error('the identity provider did not answer in time'));
      const req = client.request({
        method: options.method, protocol: target.url.protocol, hostname: bareHostname(target.url), port: target.url.port || undefined,
        path: `${target.url.pathname}${target.url.search}`, headers, lookup: pinnedLookup(target.address, target.family), agent: false,
      }, (res) => {
        const chunks: Buffer[] = [];
        let seen = 0;
        res.on('data', (chunk: Buffer) => {
          seen += chunk.length;
          if (seen > MAX_ANSWER_BYTES) return fail(new Error('the identity provider\'s answer is too large'));
          chunks.push(chunk);
        });
        res.on('error', () => fail(new Error('the identity provider\'s answer broke off')));
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          const answerHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value === undefined) continue;
            for (const v of Array.isArray(value) ? value : [value]) answerHeaders.append(name, v);
          }
          const status = res.statusCode ?? 502;
          // A Response cannot carry a body with these statuses.
          const noBody = status === 204 || status === 205 || status === 304;
          resolve(new Response(noBody ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: answerHeaders }));
        });
      });
      const timer = setTimeout(onAbort, opts.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err: NodeJS.ErrnoException) => fail(new Error(`the identity provider could not be reached (${err.code ?? 'network error'})`)));
      req.end(body);
    });
  };
}
