/**
 * Records every request made with an ISV's key (docs/architecture.md, Request log), on REST, MCP and the
 * graph, without ever slowing or failing it: the middleware only keeps what it saw (the answer's bytes
 * as they were written, up to CAPTURE_BYTES) in a bounded in-memory buffer when the answer has gone; a
 * timer writes the buffer in batches (one multi-row INSERT every FLUSH_MS, or sooner at BATCH entries).
 * Whose key it was, the redaction and the cut at 64 KiB are done there, off the request's path. A full
 * buffer, or a store that refuses the batch, drops entries and counts them
 * (`msp_request_log_dropped_total` in /metrics); nothing is retried and nothing waits. `stop()` writes
 * what is left (shutdown).
 *
 * What is recorded: any request with an `X-API-Key` header that names an ISV key (revoked or expired
 * included), whatever its answer (401, 422, 429 too). A key that names nothing (a guess, a typo) belongs to
 * nobody and is not recorded; MSP keys, console sessions and the admin token are not ISV keys. The log's
 * own reads (`GET /requests...`) are not recorded: reading the log would fill it.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { hashApiKey } from '../security/api-keys';
import { recordRequestLogDropped } from '../http/metrics';
import { isInternalRequest } from '../http/request-log';
import type { Operation } from '../operations/operation';
import { KnownSecrets, keptBody, keptHeaders, keptQuery, redactValue, BODY_LIMIT } from './redaction';
import type { KeyOwner, RequestLogRow, RequestLogStore } from './requests.store';

/**
 * How much of an answer is held for the log: what it keeps. A longer answer (a page of records) is kept
 * cut, redacted as text (by name, by value, and a secret cut in two at its end); an answer that mints a
 * secret is small, and read whole as JSON.
 */
const CAPTURE_BYTES = BODY_LIMIT;
/** The most one INSERT carries (the entries' estimated sizes), so no single statement holds the store for long. */
const BATCH_BYTES = 2 * 1024 * 1024;

export interface RecorderOptions {
  /** REQUEST_LOG=off: nothing is recorded. */
  enabled: boolean;
  flushMs: number;
  /** A batch is written at once when this many entries wait. */
  batch: number;
  /** The buffer's bounds: entries, and bytes held (bodies). */
  maxEntries: number;
  maxBytes: number;
}

export const DEFAULT_RECORDER: Omit<RecorderOptions, 'enabled'> = { flushMs: 1000, batch: 200, maxEntries: 5000, maxBytes: 32 * 1024 * 1024 };

type Surface = RequestLogRow['surface'];

/** What the middleware keeps of one request; turned into a row (owner, redaction, cut) at flush. */
interface Seen {
  id: string;
  at: Date;
  method: string;
  path: string;
  query: string;
  route: string | null;
  tenantId: string | null;
  status: number;
  durationMs: number;
  surface: Surface;
  key: string;
  keyHash: string;
  requestHeaders: Record<string, unknown>;
  requestBody: unknown;
  responseHeaders: Record<string, unknown>;
  response: Buffer;
  responseComplete: boolean;
  bytes: number;
}

interface Template { method: string; route: string; regex: RegExp; tenantAt: number | null; literals: number }

/** The operations' paths as templates, the most literal first (`/identity/book` before `/identity/{ref}`). */
function templatesOf(operations: Operation[]): Template[] {
  return operations.filter((op) => op.http).map((op) => {
    const route = op.http!.path;
    const segments = route.split('/').filter(Boolean);
    const tenantIndex = segments.indexOf('{tenant_id}');
    return {
      method: op.http!.method.toUpperCase(), route,
      regex: new RegExp(`^/${segments.map((s) => (s.startsWith('{') ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`),
      tenantAt: tenantIndex < 0 ? null : segments.slice(0, tenantIndex).filter((s) => s.startsWith('{')).length + 1,
      literals: segments.filter((s) => !s.startsWith('{')).length,
    };
  }).sort((a, b) => b.literals - a.literals);
}

const isUuidText = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-fA-F-]{36}$/.test(v);

export class RequestRecorder {
  private buffer: Seen[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private templates: Template[] = [];
  private readonly owners = new Map<string, KeyOwner>();
  /** Entries dropped since start (also in /metrics). */
  dropped = 0;
  /** Set false at run time to measure the service without it (the bench); REQUEST_LOG=off sets it at start. */
  enabled: boolean;
  private readonly opts: Omit<RecorderOptions, 'enabled'>;

  constructor(private readonly store: RequestLogStore, private readonly logger: Logger, opts: Partial<RecorderOptions> & { enabled: boolean }) {
    this.opts = { ...DEFAULT_RECORDER, ...opts };
    this.enabled = opts.enabled;
  }

  /** Mounted before every route (src/app.ts), after the request id is given. */
  middleware(operations: Operation[]): RequestHandler {
    this.templates = templatesOf(operations);
    return (req: Request, res: Response, next: NextFunction) => {
      const key = req.header('x-api-key');
      if (!this.enabled || !key || isInternalRequest(req) || /^\/requests(\/|$)/.test(req.path)) return next();
      this.watch(req, res, key);
      next();
    };
  }

  private watch(req: Request, res: Response, key: string): void {
    const started = performance.now();
    const at = new Date();
    const chunks: Buffer[] = [];
    let held = 0;
    let complete = true;
    const take = (chunk: unknown, encoding?: unknown) => {
      if (chunk == null || typeof chunk === 'function') return;
      const room = CAPTURE_BYTES - held;
      if (room <= 0) { complete = false; return; }
      // Only what is kept is copied: a page of records (hundreds of KB) is cut before it is encoded, since a
      // character is at least one byte (room characters hold at least room bytes); the answer itself is untouched.
      let buf: Buffer;
      if (typeof chunk === 'string') {
        const enc = typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8';
        buf = Buffer.from(enc === 'utf8' && chunk.length > room ? chunk.slice(0, room + 1) : chunk, enc);
        if (chunk.length > room + 1 && enc === 'utf8') complete = false;
      } else {
        const bytes = chunk as Uint8Array;
        buf = Buffer.from(bytes.subarray(0, Math.min(bytes.length, room + 1)));
        if (bytes.length > room + 1) complete = false;
      }
      if (buf.length > room) {
        complete = false;
        buf = buf.subarray(0, room);
      }
      chunks.push(buf);
      held += buf.length;
    };
    const write = res.write;
    const end = res.end;
    res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof res.write;
    res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
      take(chunk, rest[0]);
      return (end as (...a: unknown[]) => Response).call(this, chunk, ...rest);
    } as typeof res.end;
    res.once('finish', () => {
      try {
        this.seen(req, res, key, at, performance.now() - started, Buffer.concat(chunks), complete);
      } catch (err) {
        this.logger.warn({ err: (err as Error).message }, 'request log: an entry could not be kept');
      }
    });
  }

  private seen(req: Request, res: Response, key: string, at: Date, durationMs: number, response: Buffer, responseComplete: boolean): void {
    const path = (req.originalUrl ?? req.url).split('?')[0];
    const q = (req.originalUrl ?? req.url).indexOf('?');
    const surface: Surface = path === '/' ? 'mcp' : path === '/graphql' || path.startsWith('/graphql/') ? 'graphql' : 'rest';
    const { route, tenantId } = this.routeOf(req.method, path, surface, req.body);
    const contentLength = Number(req.headers['content-length'] ?? 0) || 0;
    const entry: Seen = {
      id: String((req as { id?: unknown }).id ?? res.getHeader('x-request-id') ?? ''),
      at, method: req.method, path: path.slice(0, 2000), query: q >= 0 ? (req.originalUrl ?? req.url).slice(q + 1) : '',
      route, tenantId, status: res.statusCode, durationMs, surface, key, keyHash: hashApiKey(key),
      requestHeaders: { ...req.headers }, requestBody: req.body, responseHeaders: { ...res.getHeaders() },
      response, responseComplete, bytes: response.length + Math.min(contentLength, 1024 * 1024) + 2048,
    };
    if (this.buffer.length >= this.opts.maxEntries || this.bytes + entry.bytes > this.opts.maxBytes) {
      this.dropped++;
      recordRequestLogDropped('full', 1);
      return;
    }
    this.buffer.push(entry);
    this.bytes += entry.bytes;
    if (this.buffer.length >= this.opts.batch) void this.flush();
    else this.timer ??= setTimeout(() => { this.timer = null; void this.flush(); }, this.opts.flushMs).unref();
  }

  /** The operation's template and the tenant it names; MCP and the graph name their tenant in their arguments. */
  private routeOf(method: string, path: string, surface: Surface, body: unknown): { route: string | null; tenantId: string | null } {
    if (surface !== 'rest') {
      const b = body as { params?: { arguments?: { tenant_id?: unknown } }; variables?: { tenant_id?: unknown; tenantId?: unknown } } | undefined;
      const t = surface === 'mcp' ? b?.params?.arguments?.tenant_id : b?.variables?.tenant_id ?? b?.variables?.tenantId;
      return { route: surface === 'mcp' ? '/' : '/graphql', tenantId: isUuidText(t) ? t : null };
    }
    const matching = this.templates.filter((t) => t.regex.test(path));
    const hit = matching.find((t) => t.method === method) ?? matching[0];
    if (!hit) return { route: null, tenantId: null };
    const tenant = hit.tenantAt ? hit.regex.exec(path)?.[hit.tenantAt] : undefined;
    let tenantId: string | null = null;
    if (tenant) { try { tenantId = decodeURIComponent(tenant).slice(0, 100); } catch { tenantId = tenant.slice(0, 100); } }
    return { route: hit.route, tenantId };
  }

  /** Writes what waits, in batches; a batch the store refuses is dropped and counted. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.buffer.length ? this.flush() : undefined));
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    if (!this.buffer.length) return Promise.resolve();
    this.flushing = (async () => {
      while (this.buffer.length) {
        // A batch is bounded in bytes as well as entries: on the embedded store the INSERT runs on this very
        // thread, and 200 answers of 64 KiB in one statement would hold every request waiting behind it.
        let take = 0;
        let size = 0;
        while (take < this.buffer.length && take < this.opts.batch && (take === 0 || size + this.buffer[take].bytes <= BATCH_BYTES)) size += this.buffer[take++].bytes;
        const batch = this.buffer.splice(0, take);
        for (const e of batch) this.bytes -= e.bytes;
        try {
          const rows = await this.rowsOf(batch);
          await this.store.insertMany(rows);
        } catch (err) {
          this.dropped += batch.length;
          recordRequestLogDropped('store', batch.length);
          this.logger.warn({ err: (err as Error).message, dropped: batch.length }, 'request log: a batch could not be written; dropped');
        }
        // Requests waiting meanwhile are served between two batches.
        if (this.buffer.length) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    })().finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** Writes what is left; later requests are no longer recorded. */
  async stop(): Promise<void> {
    await this.flush();
    this.enabled = false;
  }

  private async rowsOf(batch: Seen[]): Promise<RequestLogRow[]> {
    const unknown = [...new Set(batch.map((e) => e.keyHash).filter((h) => !this.owners.has(h)))];
    if (unknown.length) {
      const found = await this.store.keyOwners(unknown);
      if (this.owners.size + found.size > 10_000) this.owners.clear();
      for (const [hash, owner] of found) this.owners.set(hash, owner);
    }
    const rows: RequestLogRow[] = [];
    for (const e of batch) {
      const owner = this.owners.get(e.keyHash);
      if (owner) rows.push(this.rowOf(e, owner));
    }
    return rows;
  }

  private rowOf(e: Seen, owner: KeyOwner): RequestLogRow {
    const known = new KnownSecrets();
    known.add(e.key);
    const raw = e.response.toString('utf8');
    let answer: unknown;
    try { answer = e.responseComplete ? JSON.parse(raw) : undefined; } catch { answer = undefined; }
    // Both bodies are redacted by name first, which learns their secrets, so each is scrubbed from the other too;
    // each is parsed and walked once.
    const request = e.requestBody === undefined ? undefined : redactValue(e.requestBody, known);
    const redactedAnswer = answer === undefined ? undefined : redactValue(answer, known);
    const requestBody = request === undefined || (typeof request === 'object' && request !== null && !Array.isArray(request) && !Object.keys(request).length && !e.requestHeaders['content-length'])
      ? { text: null, truncated: false } : keptBody({ redacted: request }, known);
    const responseBody = redactedAnswer !== undefined ? keptBody({ redacted: redactedAnswer }, known) : keptBody({ raw, complete: e.responseComplete }, known);
    return {
      id: e.id.slice(0, 200), isvId: owner.isvId, apiKeyId: owner.apiKeyId, keyPrefix: owner.keyPrefix, at: e.at,
      method: e.method, path: known.scrub(e.path), route: e.route, tenantId: e.tenantId, status: e.status, durationMs: e.durationMs,
      errorCode: errorCodeOf(e.surface, e.status, answer), surface: e.surface, query: keptQuery(e.query, known),
      requestHeaders: keptHeaders(e.requestHeaders, known), requestBody: requestBody.text, requestBodyTruncated: requestBody.truncated,
      responseHeaders: keptHeaders(e.responseHeaders, known), responseBody: responseBody.text, responseBodyTruncated: responseBody.truncated,
    };
  }
}

/** The code an answer refused with: the Error envelope's, a request-schema failure's, the graph's or the MCP tool's. */
export function errorCodeOf(surface: Surface, status: number, answer: unknown): string | null {
  if (!answer || typeof answer !== 'object') return status >= 400 ? `http_${status}` : null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- an answer's JSON in any of four shapes, read defensively below
  const a = answer as Record<string, any>;
  if (surface === 'graphql') {
    const code = Array.isArray(a.errors) ? a.errors[0]?.extensions?.code : undefined;
    return typeof code === 'string' ? code : status >= 400 ? `http_${status}` : null;
  }
  if (surface === 'mcp' && a.jsonrpc) {
    if (a.error && typeof a.error.code === 'number') return `jsonrpc_${a.error.code}`;
    if (a.result?.isError && Array.isArray(a.result.content)) {
      try { const body = JSON.parse(a.result.content[0]?.text ?? ''); if (typeof body?.code === 'string') return body.code; } catch { /* not the envelope */ }
      return 'tool_error';
    }
    return null;
  }
  if (status < 400) return null;
  if (typeof a.code === 'string') return a.code;
  if (status === 422 && Array.isArray(a.detail)) return 'request_invalid';
  return `http_${status}`;
}
