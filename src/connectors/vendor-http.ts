/**
 * The one HTTP client every connector uses to reach a vendor. It retries 429 and 503 with
 * exponential backoff and full jitter, honouring Retry-After (seconds or HTTP date), and gives up
 * with a VendorHttpError that carries the vendor's status, body and Retry-After so the caller can
 * answer 429 `rate_limited` / 503 `vendor_unavailable` truthfully.
 */
import { randomUUID } from 'node:crypto';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { parseRetryAfterMs } from '../shared/request';
import type { BudgetGate, BudgetLease } from '../budget/budget';
import { recordVendorCall } from '../http/metrics';
import { inVendorCallSpan } from '../telemetry/vendor-spans';

export interface VendorHttpOptions {
  /** Retries after the first try for 429/503 and network errors on safe requests. */
  maxRetries?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
  /** Longest Retry-After we are willing to wait inside one call; above it we give up at once. */
  maxRetryAfterMs?: number;
  /** For tests of the schedule itself. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface VendorRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined | null>;
  /** JSON body (serialised here) */
  json?: unknown;
  /** application/x-www-form-urlencoded body */
  form?: Record<string, string>;
  /** multipart/form-data body of text fields (RFC 7578), for an operation that documents only that */
  multipart?: Record<string, string>;
  /** text/plain body (a token some vendors take as the whole body) */
  text?: string;
  /** Retry 429/503 on a non-GET too. Writes pass false unless they are safe to repeat. */
  retry?: boolean;
  /**
   * Resend a write the vendor answered 429, within the same limits as a read's retries: for vendors whose
   * 429 refuses a request before any processing (the write cannot have landed). 503 and no answer stay unsent.
   */
  resendThrottled?: boolean;
  /** The vendor's own waits before each retry where it documents them (seconds 2, 5, 10: [2000, 5000, 10000]; the last repeats), instead of the jittered backoff; Retry-After still wins. */
  backoffScheduleMs?: readonly number[];
}

export interface VendorResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  /** Number of attempts it took. */
  attempts: number;
}

/**
 * What a failed vendor call says about the write it carried: the one classification every writer and the
 * vendor.write job use (docs/architecture.md, Writes).
 * - `not_sent`: nothing reached the vendor (connection refused, no address, or our own send deadline).
 * - `throttled`: 429, refused before any processing.
 * - `unavailable`: 503 in the vendor's own error body, refused before any processing.
 * - `refused`: a definite answer of the vendor: a 4xx, or another 5xx in the vendor's own error body.
 * - `unknown`: the write may have landed or may still land: no answer (timeout, connection reset after
 *   sending), a gateway's 502 or 504, or a 5xx without the vendor's own (JSON) error body.
 */
export type VendorOutcome = 'not_sent' | 'throttled' | 'unavailable' | 'refused' | 'unknown';

/** Errors of a connection that never opened: the request cannot have reached the vendor. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Text fields as one multipart/form-data body (RFC 7578 section 4): a part per field, then the closing boundary. */
function multipartBody(fields: Record<string, string>, boundary: string): string {
  const quoted = (name: string) => name.replace(/[\r\n"]/g, (c) => encodeURIComponent(c));
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`);
  return `${parts.join('')}--${boundary}--\r\n`;
}

/** The vendor's own error body: a JSON object (gateways and proxies answer HTML, text or nothing). */
function isVendorErrorBody(body: unknown): boolean {
  return body != null && typeof body === 'object';
}

export function classifyVendorFailure(status: number, body: unknown, network: boolean, notSent: boolean): VendorOutcome {
  if (notSent) return 'not_sent';
  if (network) return 'unknown';
  if (status === 429) return 'throttled';
  if (status === 502 || status === 504) return 'unknown';
  if (status >= 500) return isVendorErrorBody(body) ? (status === 503 ? 'unavailable' : 'refused') : 'unknown';
  return 'refused';
}

export class VendorHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body: unknown,
    readonly retryAfterMs: number | null,
    readonly attempts: number,
    /** True when no response was received at all (timeout, connection reset). */
    readonly network = false,
    /** True when the request cannot have reached the vendor (see VendorOutcome `not_sent`). */
    readonly notSent = false,
  ) {
    super(message);
    this.name = 'VendorHttpError';
  }
  get outcome(): VendorOutcome {
    return classifyVendorFailure(this.status, this.body, this.network, this.notSent);
  }
  /** Worth another try of a read: throttled, unavailable, or no answer. */
  get retryable(): boolean {
    return this.network || this.status === 429 || this.status === 503;
  }
}

/**
 * The fence of one vendor.write job around its calls (write-fence.ts): a write request (one not safe to
 * repeat) starts only once `beforeSend` says so (false: it is not sent), and each write whose outcome is
 * unknown is reported with when it was sent.
 */
export interface SendFence {
  beforeSend(): Promise<boolean>;
  unknown(sentAt: number): void;
}

function networkCode(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  return e?.code ?? e?.cause?.code;
}

/** Exponential backoff with full jitter: a random delay in [base*2^attempt/2, base*2^attempt]. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const cap = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(cap / 2 + random() * (cap / 2));
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A call's budget slot given back without holding its answer: on Redis the release is a round trip of its
 * own (about 0.3 ms of every commit). A release still under way admits fewer, never more; the store's
 * commands go in order on its one connection, so the next attempt's acquire sees it (and a 429's throttle);
 * and a release that fails leaves a lease that expires (src/budget/budget.ts, in flight).
 */
function releaseLater(lease: BudgetLease | null, outcome?: { throttled?: boolean }): void {
  lease?.release(outcome).catch(() => undefined);
}

/**
 * One HTTP exchange: undici's request() (the library behind Node's fetch, without the WHATWG stream
 * layer: 0.11 ms a call against fetch's 0.32 ms on loopback, measured on this machine). It follows no
 * redirect (a 3xx comes back as it is), and `timeoutMs` bounds the whole exchange, headers and body.
 */
async function exchange(url: URL, init: { method: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string }, timeoutMs: number): Promise<{ status: number; headers: Headers; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  try {
    const res = await undiciRequest(url, { method: init.method, headers: init.headers, body: init.body, signal: abort.signal });
    const text = await res.body.text();
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value != null) headers.set(name, value);
    }
    return { status: res.statusCode, headers, text };
  } finally {
    clearTimeout(timer);
  }
}

export class VendorHttpClient {
  readonly opts: Required<VendorHttpOptions>;
  /** The connection's API budget every attempt waits on (docs/architecture.md, Vendor API budget); none in unit tests of connectors. */
  readonly budget: BudgetGate | null;
  /** The vendor.write job's send deadline and record of unknown outcomes; none outside writes. */
  readonly fence: SendFence | null;
  constructor(opts: VendorHttpOptions = {}, budget: BudgetGate | null = null, fence: SendFence | null = null) {
    this.budget = budget;
    this.fence = fence;
    this.opts = {
      maxRetries: opts.maxRetries ?? 5,
      baseDelayMs: opts.baseDelayMs ?? 250,
      maxDelayMs: opts.maxDelayMs ?? 15_000,
      timeoutMs: opts.timeoutMs ?? 30_000,
      maxRetryAfterMs: opts.maxRetryAfterMs ?? 60_000,
      sleep: opts.sleep ?? defaultSleep,
      random: opts.random ?? Math.random,
    };
  }

  /** The same client, every call of it inside `gate` (one connection's budget at one priority). */
  withBudget(gate: BudgetGate): VendorHttpClient {
    return new VendorHttpClient(this.opts, gate, this.fence);
  }

  /** The same client under a write job's fence (SendFence). */
  withFence(fence: SendFence): VendorHttpClient {
    return new VendorHttpClient(this.opts, this.budget, fence);
  }

  /** One call, its retries included, as one span of the trace it is made in (src/telemetry/vendor-spans.ts). */
  async request<T = unknown>(req: VendorRequest): Promise<VendorResponse<T>> {
    const url = new URL(req.url);
    return inVendorCallSpan(req.method ?? 'GET', url, this.budget?.connector, () => this.send<T>(req, url));
  }

  private backoff(req: VendorRequest, attempt: number): number {
    const schedule = req.backoffScheduleMs;
    if (schedule?.length) return schedule[Math.min(attempt, schedule.length - 1)];
    return backoffDelay(attempt, this.opts.baseDelayMs, this.opts.maxDelayMs, this.opts.random);
  }

  private async send<T>(req: VendorRequest, url: URL): Promise<VendorResponse<T>> {
    const method = req.method ?? 'GET';
    const retry = req.retry ?? method === 'GET';
    for (const [k, v] of Object.entries(req.query ?? {})) if (v != null) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { accept: 'application/json', ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(req.json);
    } else if (req.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(req.form).toString();
    } else if (req.multipart) {
      const boundary = `----vendor-http-${randomUUID()}`;
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`;
      body = multipartBody(req.multipart, boundary);
    } else if (req.text !== undefined) {
      headers['content-type'] = 'text/plain';
      body = req.text;
    }

    for (let attempt = 0; ; attempt++) {
      let res: { status: number; headers: Headers; text: string };
      // One budget slot per attempt, held for the call only (never across a backoff sleep).
      const lease = this.budget ? await this.budget.acquire() : null;
      // A write starts only before the job's send deadline: a take-over waits for that deadline plus the
      // timeout and the vendor's margin (write-fence.ts), and so may trust the marker look-up after it.
      if (!retry && this.fence && !(await this.fence.beforeSend())) {
        releaseLater(lease);
        throw new VendorHttpError(`not sent: the write's send deadline has passed (${method} ${url.pathname})`, 0, null, null, attempt + 1, true, true);
      }
      const sentAt = Date.now();
      try {
        res = await exchange(url, { method, headers, body }, this.opts.timeoutMs);
        recordVendorCall(this.budget?.connector, res.status, sentAt);
        releaseLater(lease, { throttled: res.status === 429 });
      } catch (err) {
        recordVendorCall(this.budget?.connector, null, sentAt);
        releaseLater(lease);
        const notSent = NOT_SENT_CODES.has(networkCode(err) ?? '');
        if (!retry && !notSent) this.fence?.unknown(sentAt);
        const e = new VendorHttpError(`vendor request failed: ${(err as Error).message}`, 0, null, null, attempt + 1, true, notSent);
        if (retry && attempt < this.opts.maxRetries) {
          await this.opts.sleep(this.backoff(req, attempt));
          continue;
        }
        throw e;
      }
      let parsed: unknown = res.text;
      if (res.text && (res.headers.get('content-type') ?? '').includes('json')) {
        try { parsed = JSON.parse(res.text); } catch { /* keep text */ }
      }
      if (res.status >= 200 && res.status < 300) return { status: res.status, headers: res.headers, body: parsed as T, attempts: attempt + 1 };

      const retryAfterMs = parseRetryAfterMs(res.headers.get('retry-after'));
      const retryable = retry ? res.status === 429 || res.status === 503 : req.resendThrottled === true && res.status === 429;
      if (retryable && attempt < this.opts.maxRetries && (retryAfterMs ?? 0) <= this.opts.maxRetryAfterMs) {
        const backoff = this.backoff(req, attempt);
        await this.opts.sleep(Math.max(retryAfterMs ?? 0, retryAfterMs != null ? 0 : backoff));
        continue;
      }
      const failed = new VendorHttpError(
        `vendor answered ${res.status} to ${method} ${url.pathname}`, res.status, parsed, retryAfterMs, attempt + 1,
      );
      if (!retry && failed.outcome === 'unknown') this.fence?.unknown(sentAt);
      throw failed;
    }
  }
}
