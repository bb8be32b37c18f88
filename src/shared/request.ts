/**
 * The request pieces every operation shares, in one place: ids, safe text, the page size (`limit`; the
 * rest of the list contract is src/shared/paging.ts; dates are src/shared/dates.ts) and Retry-After parsing. A rule written here is
 * written nowhere else.
 */
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

extendZodWithOpenApi(z);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}

// Text PostgreSQL cannot hold (NUL) or that is not valid UTF-16 (a lone surrogate) is refused at the door.
// eslint-disable-next-line no-control-regex
const UNSAFE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isSafeText(value: string): boolean {
  return !UNSAFE_TEXT.test(value);
}

/** A request string: no NUL, no lone surrogate, at most `max` characters. */
export function text(max = 10_000) {
  return z.string().max(max).refine(isSafeText, { message: 'must not contain NUL characters or unpaired surrogates' });
}

/**
 * A path id: any text. A value that names nothing visible (a malformed one included) is 404, never
 * 422 (docs/architecture.md, Reads), so the services look it up and answer not_found.
 */
export function pathId(name: string, description?: string) {
  return z.string().openapi({ param: { name, in: 'path' }, description });
}

export const PAGE_LIMIT = { min: 1, max: 500, default: 100 } as const;

/** A whole number from a query string ("100") or a graph argument (100); "0x10", "1e2", " 5" are refused. */
export function wholeNumber(min: number, max: number) {
  return z.union([
    z.number().int(),
    z.string().regex(/^(0|[1-9]\d{0,8})$/, 'must be a whole number in decimal digits').transform(Number),
  ]).pipe(z.number().int().min(min).max(max));
}

export const limitParam = wholeNumber(PAGE_LIMIT.min, PAGE_LIMIT.max).default(PAGE_LIMIT.default)
  .openapi({ type: 'integer', minimum: PAGE_LIMIT.min, maximum: PAGE_LIMIT.max, default: PAGE_LIMIT.default, description: `Page size, ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max} (default ${PAGE_LIMIT.default}).` });

/** Retry-After in milliseconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfterMs(value: string | null | undefined, now: number = Date.now()): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export { z };

/** The path of every tenant-scoped operation. */
export const TenantPath = z.object({ tenant_id: pathId('tenant_id', 'Tenant id, from GET /tenants.') }).strict();
