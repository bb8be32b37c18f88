/**
 * The request log's statements (docs/architecture.md, Request log): rows written in batches by the
 * recorder (one multi-row INSERT), read newest first per ISV, pruned by age and by count.
 */
import type { DataSource } from 'typeorm';
import { afterKey, keysetAfter, listCursor, rowsToFetch, toPage, type Page, type PageRequest } from '../shared/paging';

/** Newest first: the time of the request, then the order it was written in. */
export const REQUESTS_CURSOR = listCursor('requests', ['time', 'int']);

export interface RequestLogRow {
  id: string;
  isvId: string;
  apiKeyId: string | null;
  keyPrefix: string | null;
  at: Date;
  method: string;
  path: string;
  route: string | null;
  tenantId: string | null;
  status: number;
  durationMs: number;
  errorCode: string | null;
  surface: 'rest' | 'mcp' | 'graphql';
  query: string | null;
  requestHeaders: { name: string; value: string }[];
  requestBody: string | null;
  requestBodyTruncated: boolean;
  responseHeaders: { name: string; value: string }[];
  responseBody: string | null;
  responseBodyTruncated: boolean;
}

export interface StoredRequest extends RequestLogRow { seq: string }

export interface RequestFilter {
  /** One status (`422`) or a class (`4xx`). */
  status?: string | null;
  route?: string | null;
  tenantId?: string | null;
  since?: string | null;
}

/** The ISV key a request came with (the recorder learns it from the key's hash). */
export interface KeyOwner { apiKeyId: string; isvId: string; keyPrefix: string }

const COLUMNS = [
  'id', 'isv_id', 'api_key_id', 'key_prefix', 'at', 'method', 'path', 'route', 'tenant_id', 'status', 'duration_ms', 'error_code', 'surface',
  'query', 'request_headers', 'request_body', 'request_body_truncated', 'response_headers', 'response_body', 'response_body_truncated',
] as const;

const LIST_COLUMNS = 'seq::text AS seq, id, isv_id, api_key_id, key_prefix, at, method, path, route, tenant_id, status, duration_ms, error_code, surface';

function rowOf(r: Record<string, any>): StoredRequest {
  return {
    seq: String(r.seq), id: r.id, isvId: r.isv_id, apiKeyId: r.api_key_id, keyPrefix: r.key_prefix, at: new Date(r.at),
    method: r.method, path: r.path, route: r.route, tenantId: r.tenant_id, status: Number(r.status), durationMs: Number(r.duration_ms),
    errorCode: r.error_code, surface: r.surface, query: r.query ?? null,
    requestHeaders: r.request_headers ?? [], requestBody: r.request_body ?? null, requestBodyTruncated: r.request_body_truncated === true,
    responseHeaders: r.response_headers ?? [], responseBody: r.response_body ?? null, responseBodyTruncated: r.response_body_truncated === true,
  };
}

export class RequestLogStore {
  constructor(private readonly ds: DataSource) {}

  /** One statement for the whole batch. */
  async insertMany(rows: RequestLogRow[]): Promise<void> {
    if (!rows.length) return;
    const params: unknown[] = [];
    const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
    const tuples = rows.map((r) => `(${[
      bind(r.id), bind(r.isvId), bind(r.apiKeyId), bind(r.keyPrefix), bind(r.at.toISOString()), bind(r.method), bind(r.path), bind(r.route),
      bind(r.tenantId), bind(r.status), bind(Math.round(r.durationMs)), bind(r.errorCode), bind(r.surface), bind(r.query),
      `${bind(JSON.stringify(r.requestHeaders))}::jsonb`, bind(r.requestBody), bind(r.requestBodyTruncated),
      `${bind(JSON.stringify(r.responseHeaders))}::jsonb`, bind(r.responseBody), bind(r.responseBodyTruncated),
    ].join(', ')})`);
    await this.ds.query(`INSERT INTO request_log (${COLUMNS.join(', ')}) VALUES ${tuples.join(', ')}`, params);
  }

  /** The ISV keys of these hashes, revoked ones included (a revoked key's 401 is still its ISV's). */
  async keyOwners(hashes: string[]): Promise<Map<string, KeyOwner>> {
    const owners = new Map<string, KeyOwner>();
    if (!hashes.length) return owners;
    const rows: { key_hash: string; id: string; isv_id: string; prefix: string }[] = await this.ds.query(
      `SELECT key_hash, id, isv_id, prefix FROM api_keys WHERE key_hash = ANY($1::text[]) AND kind = 'isv' AND isv_id IS NOT NULL`, [hashes]);
    for (const r of rows) owners.set(r.key_hash, { apiKeyId: r.id, isvId: r.isv_id, keyPrefix: r.prefix });
    return owners;
  }

  /** One page, newest first; `isvId` null: every ISV's (internal tooling). */
  async list(isvId: string | null, filter: RequestFilter, q: PageRequest): Promise<Page<StoredRequest>> {
    const params: unknown[] = [];
    const bind = (v: unknown) => { params.push(v); return `$${params.length}`; };
    const where: string[] = [];
    if (isvId !== null) where.push(`isv_id = ${bind(isvId)}::uuid`);
    if (filter.status) {
      const cls = /^([1-5])xx$/.exec(filter.status);
      if (cls) where.push(`status BETWEEN ${bind(Number(cls[1]) * 100)} AND ${bind(Number(cls[1]) * 100 + 99)}`);
      else where.push(`status = ${bind(Number(filter.status))}`);
    }
    if (filter.route) where.push(`route = ${bind(filter.route)}`);
    if (filter.tenantId) where.push(`tenant_id = ${bind(filter.tenantId)}`);
    if (filter.since) where.push(`at >= ${bind(filter.since)}::timestamptz`);
    const after = afterKey(REQUESTS_CURSOR, q);
    if (after) where.push(keysetAfter([{ sql: 'at', desc: true, cast: 'timestamptz' }, { sql: 'seq', desc: true, cast: 'bigint' }], after, bind));
    const rows: Record<string, any>[] = await this.ds.query(
      `SELECT ${LIST_COLUMNS} FROM request_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY at DESC, seq DESC LIMIT ${bind(rowsToFetch(q.limit))}`, params);
    return toPage(rows.map(rowOf), q.limit, REQUESTS_CURSOR, (r) => [r.at.toISOString(), r.seq]);
  }

  /** The newest entry of this request id (a caller may send its own X-Request-Id twice). */
  async get(isvId: string | null, requestId: string): Promise<StoredRequest | null> {
    const rows: Record<string, any>[] = await this.ds.query(
      `SELECT * FROM request_log WHERE id = $1 AND ($2::uuid IS NULL OR isv_id = $2::uuid) ORDER BY at DESC, seq DESC LIMIT 1`, [requestId, isvId]);
    return rows[0] ? rowOf(rows[0]) : null;
  }

  /**
   * Removes entries older than `cutoff`, then the oldest past `maxRows`, in slices (no long lock on a big
   * table). Answers how many went.
   */
  async prune(cutoff: Date, maxRows: number, slice = 5000): Promise<number> {
    let removed = 0;
    for (;;) {
      const rows: unknown[] = await this.ds.query(
        `DELETE FROM request_log WHERE seq IN (SELECT seq FROM request_log WHERE at < $1::timestamptz LIMIT $2) RETURNING 1`, [cutoff.toISOString(), slice]);
      removed += rows.length;
      if (rows.length < slice) break;
    }
    const [edge]: { seq: string }[] = await this.ds.query('SELECT seq::text AS seq FROM request_log ORDER BY seq DESC OFFSET $1 LIMIT 1', [maxRows]);
    if (edge) {
      const rows: unknown[] = await this.ds.query('DELETE FROM request_log WHERE seq <= $1::bigint RETURNING 1', [edge.seq]);
      removed += rows.length;
    }
    return removed;
  }
}
