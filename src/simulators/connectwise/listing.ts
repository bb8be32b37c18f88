/**
 * ConnectWise list semantics: `conditions`, `orderBy` (default `id asc`), 1-based `page`,
 * `pageSize` (default 25, at most 1000: larger values are clamped), `fields` projection, and the
 * RFC 5988 `Link` header (`first`, `prev`, `next`, `last`) built from the request's own URL.
 */
import { badRequest } from './errors';
import { fieldGetter, parseConditions } from './conditions';
import type { CwRecord } from './store';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 1000;

export type Query = Record<string, unknown>;

function param(query: Query, name: string): string | undefined {
  // ConnectWise query parameter names are case-insensitive (`pageSize`, `pagesize`, `PageSize`).
  const key = Object.keys(query).find((k) => k.toLowerCase() === name.toLowerCase());
  const v = key ? query[key] : undefined;
  if (Array.isArray(v)) return v.length ? String(v[v.length - 1]) : undefined;
  return v == null ? undefined : String(v);
}

function positiveInt(query: Query, name: string, fallback: number): number {
  const raw = param(query, name);
  if (raw == null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw badRequest(`${name} must be a positive integer`);
  return n;
}

/** The records matching `conditions`; `checkField` refuses names the resource does not have. */
export function filterRows(rows: readonly CwRecord[], query: Query, checkField?: (path: string) => void): CwRecord[] {
  const pred = parseConditions(param(query, 'conditions'), checkField);
  return pred ? rows.filter(pred) : rows.slice();
}

function sortKey(v: unknown): number | string | null {
  if (v == null) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  const s = String(v);
  // ISO timestamps sort as text correctly; other text sorts case-insensitively.
  return s.toLowerCase();
}

function sortRows(rows: CwRecord[], orderBy: string | undefined): CwRecord[] {
  if (!orderBy || /^\s*id(\s+asc)?\s*$/i.test(orderBy)) return rows; // tables are kept in id order
  const keys = orderBy.split(',').map((part) => {
    const [field, dir = 'asc'] = part.trim().split(/\s+/);
    if (!field || !/^(asc|desc)$/i.test(dir)) throw badRequest(`Invalid orderBy '${orderBy}'`);
    return { get: fieldGetter(field), sign: dir.toLowerCase() === 'desc' ? -1 : 1 };
  });
  return rows
    .map((rec) => ({ rec, k: keys.map((key) => sortKey(key.get(rec))) }))
    .sort((a, b) => {
      for (let i = 0; i < keys.length; i++) {
        const x = a.k[i];
        const y = b.k[i];
        if (x === y) continue;
        if (x == null) return -keys[i].sign; // nulls first ascending, as SQL Server does
        if (y == null) return keys[i].sign;
        return (x < y ? -1 : 1) * keys[i].sign;
      }
      return a.rec.id - b.rec.id;
    })
    .map((x) => x.rec);
}

/** `fields=id,summary,board/name`: keep only those paths. */
function project(rec: CwRecord, fields: string[]): CwRecord {
  const out: CwRecord = {};
  for (const f of fields) {
    const parts = f.split('/');
    let src: unknown = rec;
    let dst: CwRecord = out;
    for (let i = 0; i < parts.length; i++) {
      if (src == null || typeof src !== 'object') break;
      const v = (src as CwRecord)[parts[i]];
      if (v === undefined) break;
      if (i === parts.length - 1) dst[parts[i]] = v;
      else {
        dst[parts[i]] = dst[parts[i]] ?? {};
        dst = dst[parts[i]];
      }
      src = v;
    }
  }
  return out;
}

export interface ListPage {
  items: CwRecord[];
  /** Link header value, or null when everything fits on one page. */
  link: string | null;
}

/**
 * One page of `rows` for this request. `selfUrl` is the absolute URL of the request; the Link
 * header repeats it with only `page` changed.
 */
export function listPage(rows: readonly CwRecord[], query: Query, selfUrl: URL, checkField?: (path: string) => void): ListPage {
  const pageSize = Math.min(positiveInt(query, 'pageSize', DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  const page = positiveInt(query, 'page', 1);
  const sorted = sortRows(filterRows(rows, query, checkField), param(query, 'orderBy'));
  const lastPage = Math.max(1, Math.ceil(sorted.length / pageSize));
  const slice = sorted.slice((page - 1) * pageSize, page * pageSize);
  const fields = param(query, 'fields')?.split(',').map((f) => f.trim()).filter(Boolean);
  const items = fields?.length ? slice.map((r) => project(r, fields)) : slice;

  if (lastPage === 1) return { items, link: null };
  const pageUrl = (n: number) => {
    const u = new URL(selfUrl);
    for (const k of [...u.searchParams.keys()]) if (k.toLowerCase() === 'page' || k.toLowerCase() === 'pagesize') u.searchParams.delete(k);
    u.searchParams.set('pageSize', String(pageSize));
    u.searchParams.set('page', String(n));
    return u.toString();
  };
  const links: string[] = [];
  if (page > 1) links.push(`<${pageUrl(1)}>; rel="first"`, `<${pageUrl(Math.min(page - 1, lastPage))}>; rel="prev"`);
  if (page < lastPage) links.push(`<${pageUrl(page + 1)}>; rel="next"`, `<${pageUrl(lastPage)}>; rel="last"`);
  return { items, link: links.length ? links.join(', ') : null };
}

export function countRows(rows: readonly CwRecord[], query: Query, checkField?: (path: string) => void): number {
  return filterRows(rows, query, checkField).length;
}
