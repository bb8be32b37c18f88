/**
 * The request log's reads and upkeep (docs/architecture.md, Request log): an ISV's own entries, newest
 * first, each answered with its bodies only in the detail; the prune that keeps REQUEST_LOG_DAYS and at most
 * REQUEST_LOG_MAX_ROWS, run where jobs run.
 */
import type { Logger } from 'pino';
import { ServiceError } from '../errors/service-error';
import type { Page, PageRequest } from '../shared/paging';
import type { RequestFilter, RequestLogStore, StoredRequest } from './requests.store';

/** How often the worker prunes. */
export const PRUNE_MS = 10 * 60_000;

export interface RequestLogEntryView {
  id: string; at: string; method: string; path: string; route: string | null; tenant_id: string | null; status: number;
  duration_ms: number; key_prefix: string | null; error_code: string | null; surface: 'rest' | 'mcp' | 'graphql';
}

export interface RequestLogDetailView extends RequestLogEntryView {
  query: string | null;
  request_headers: { name: string; value: string }[];
  request_body: string | null;
  request_body_truncated: boolean;
  response_headers: { name: string; value: string }[];
  response_body: string | null;
  response_body_truncated: boolean;
}

export function entryView(r: StoredRequest): RequestLogEntryView {
  return {
    id: r.id, at: r.at.toISOString(), method: r.method, path: r.path, route: r.route, tenant_id: r.tenantId, status: r.status,
    duration_ms: r.durationMs, key_prefix: r.keyPrefix, error_code: r.errorCode, surface: r.surface,
  };
}

export class RequestLogService {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    readonly store: RequestLogStore,
    private readonly retention: { days: number; maxRows: number },
    private readonly logger: Logger,
  ) {}

  /** One page of the ISV's requests (`isvId` null: every ISV's, for internal tooling). */
  async list(isvId: string | null, filter: RequestFilter, q: PageRequest): Promise<Page<RequestLogEntryView>> {
    const page = await this.store.list(isvId, filter, q);
    return { items: page.items.map(entryView), next_cursor: page.next_cursor };
  }

  /** One request with its bodies; another ISV's (or none) is 404. */
  async get(isvId: string | null, requestId: string): Promise<RequestLogDetailView> {
    const r = requestId.length <= 200 ? await this.store.get(isvId, requestId) : null;
    if (!r) throw ServiceError.notFound('Request');
    return {
      ...entryView(r), query: r.query, request_headers: r.requestHeaders, request_body: r.requestBody, request_body_truncated: r.requestBodyTruncated,
      response_headers: r.responseHeaders, response_body: r.responseBody, response_body_truncated: r.responseBodyTruncated,
    };
  }

  /** Removes what is older than REQUEST_LOG_DAYS before `now`, then the oldest past REQUEST_LOG_MAX_ROWS. */
  async prune(now: number = Date.now()): Promise<number> {
    const removed = await this.store.prune(new Date(now - this.retention.days * 86_400_000), this.retention.maxRows);
    if (removed) this.logger.debug({ removed }, 'request log pruned');
    return removed;
  }

  /** Prunes every PRUNE_MS where jobs run (src/server.ts). */
  startPruning(everyMs = PRUNE_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.prune()
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'request log prune failed'))
        .finally(() => { this.running = null; });
    }, everyMs);
    this.timer.unref();
  }

  async stopPruning(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
