/**
 * Pax8 list mechanics: `page` (0-based) and `size` (default 10, max 200) answered as
 * `{content, page: {size, totalElements, totalPages, number}}`, equality filters and `sort=field,dir`.
 * Pax8 runs on Spring: out-of-range paging values fall back to the defaults and a size above the
 * maximum is capped, rather than refused.
 */
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 200;

export type Query = Record<string, unknown>;

/** First value of a query parameter as a string (Express gives string | string[] | object). */
export function param(query: Query, name: string): string | undefined {
  const v = query[name];
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

export interface PageRequest {
  page: number;
  size: number;
}

export function readPageRequest(query: Query): PageRequest {
  const page = Number(param(query, 'page'));
  const size = Number(param(query, 'size'));
  return {
    page: Number.isInteger(page) && page >= 0 ? page : 0,
    size: Number.isInteger(size) && size >= 1 ? Math.min(size, MAX_PAGE_SIZE) : DEFAULT_PAGE_SIZE,
  };
}

export interface Pax8Page<T> {
  content: T[];
  page: { size: number; totalElements: number; totalPages: number; number: number };
}

export function pageOf<T>(items: readonly T[], req: PageRequest): Pax8Page<T> {
  const start = req.page * req.size;
  return {
    content: items.slice(start, start + req.size),
    page: {
      size: req.size,
      totalElements: items.length,
      totalPages: Math.ceil(items.length / req.size),
      number: req.page,
    },
  };
}

/** Keeps items whose value (read by `get`) equals the query parameter, for each given filter. */
export function applyFilters<T>(
  items: readonly T[],
  query: Query,
  filters: Record<string, (item: T) => unknown>,
): readonly T[] {
  const active = Object.entries(filters)
    .map(([name, get]) => [param(query, name), get] as const)
    .filter(([wanted]) => wanted !== undefined);
  if (!active.length) return items;
  return items.filter((item) => active.every(([wanted, get]) => String(get(item)) === wanted));
}

export class SortError extends Error {}

/**
 * `sort=field` or `sort=field,asc|desc` over the allowed fields. Unknown fields are a bad request,
 * as Pax8's parameter is an enum.
 */
export function applySort<T>(
  items: readonly T[],
  query: Query,
  fields: Record<string, (item: T) => string | number | undefined>,
): readonly T[] {
  const spec = param(query, 'sort');
  if (!spec) return items;
  const [field, dir = 'asc'] = spec.split(',').map((s) => s.trim());
  const get = fields[field];
  if (!get || !['asc', 'desc'].includes(dir.toLowerCase())) {
    throw new SortError(`sort: ${spec} is not supported; use one of ${Object.keys(fields).join(', ')} with ,asc or ,desc`);
  }
  const sign = dir.toLowerCase() === 'desc' ? -1 : 1;
  return [...items].sort((a, b) => {
    const x = get(a);
    const y = get(b);
    if (x === y) return 0;
    if (x === undefined) return 1;
    if (y === undefined) return -1;
    return (x < y ? -1 : 1) * sign;
  });
}
