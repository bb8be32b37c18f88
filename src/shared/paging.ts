/**
 * The one list contract (docs/architecture.md, Reads), in one module: the page query (`limit`, `cursor`,
 * `updated_since`), the cursor codec, the "fetch one more than the page" rule and the envelope with its
 * items field. Every list of the service pages through here; no list truncates.
 *
 * Cursors are keyset positions (the sort key of the last item of the page, on a unique order), never
 * offsets, so a page neither skips nor repeats an item while others are inserted. On the wire a cursor
 * is opaque: base64url of `[list, ...key, seal]`, where the seal is a server-keyed digest binding the
 * position to the operation that issued it (with its path), the tenant and the caller (the key's ISV or
 * MSP tenant; see CursorBinding). Decoding checks the list, the type of every key part and the seal, so a
 * cursor that was edited, cut, or taken from another list, tenant or caller is a 422 naming `cursor`,
 * never a 500, a wrong page or a look at another caller's positions.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { timingSafeEqual } from 'node:crypto';
import type { ZodRawShape, ZodType } from 'zod';
import { parseInstant, rfc3339 } from './dates';
import { isUuid, limitParam, z } from './request';

/** One part of a sort key: our uuid, a whole number (bigint-safe, as a decimal string), text or an RFC 3339 time. */
export type KeyPart = 'uuid' | 'int' | 'text' | 'time';
export type Key = string[];

// Room for keys of long names (a reconciliation row's company and product names): a cursor is never cut.
const MAX_CURSOR = 4096;

export interface ListCursor {
  readonly list: string;
  encode(key: Key): string;
  /** The key, or null when the cursor is not one this list issued. */
  decode(cursor: string): Key | null;
}

const validPart: Record<KeyPart, (v: string) => boolean> = {
  uuid: isUuid,
  int: (v) => /^-?\d{1,19}$/.test(v),
  text: (v) => v.length <= 2000,
  time: (v) => parseInstant(v).ok,
};

/**
 * What the cursors of one call are bound to: set by the runner (src/operations/runner.ts) around a call's
 * request schemas and handler, so every list pages with it without passing it along.
 */
export interface CursorBinding {
  /** The operation and the values of its path but the tenant (a webhook's deliveries are not another's). */
  list: string;
  /** The tenant of the path ('' for a list of no tenant). */
  tenant: string;
  /** The caller: the key's ISV, the MSP's tenant, the admin. */
  caller: string;
  /** The server's keyed digest of a text (src/security/secret-box.ts). */
  seal: (text: string) => string;
}

const bindings = new AsyncLocalStorage<CursorBinding>();

/** Runs `fn` with the cursors it issues and reads bound to `binding`. */
export function withCursorBinding<T>(binding: CursorBinding, fn: () => T): T {
  return bindings.run(binding, fn);
}

function sealOf(b: CursorBinding, position: unknown[]): string {
  return b.seal(JSON.stringify([b.list, b.tenant, b.caller, ...position]));
}

function sameSeal(given: unknown, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const [x, y] = [Buffer.from(given, 'utf8'), Buffer.from(expected, 'utf8')];
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The cursor of one list, whose items sort by `parts` (the last part makes the order unique). Outside a
 * binding (a service's own paging in a unit test, the MCP's check of a tool's arguments before it runs
 * the operation) cursors are issued without a seal and read with or without one: only the shape is
 * checked there, and the runner reads the cursor again, seal and all, before any list uses it.
 */
export function listCursor(list: string, parts: KeyPart[]): ListCursor {
  return {
    list,
    encode: (key) => {
      const b = bindings.getStore();
      const position = [list, ...key];
      return Buffer.from(JSON.stringify(b ? [...position, sealOf(b, position)] : position), 'utf8').toString('base64url');
    },
    decode: (cursor) => {
      if (cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) return null;
      // Only the text we issued: base64url also decodes a cursor with a character added or changed in its last bits.
      const bytes = Buffer.from(cursor, 'base64url');
      if (bytes.toString('base64url') !== cursor) return null;
      let value: unknown;
      try { value = JSON.parse(bytes.toString('utf8')); } catch { return null; }
      const b = bindings.getStore();
      if (!Array.isArray(value) || value[0] !== list) return null;
      if (b ? value.length !== parts.length + 2 : value.length !== parts.length + 1 && value.length !== parts.length + 2) return null;
      const key = value.slice(1, parts.length + 1);
      if (!key.every((v, i) => typeof v === 'string' && validPart[parts[i]](v))) return null;
      if (value.length === parts.length + 2 && typeof value[parts.length + 1] !== 'string') return null;
      return !b || sameSeal(value[parts.length + 1], sealOf(b, value.slice(0, parts.length + 1))) ? key as Key : null;
    },
  };
}

/** The `cursor` parameter: a `next_cursor` this list issued to this caller on this tenant (anything else is 422 naming `cursor`). */
export function cursorParam(codec: ListCursor) {
  return z.string().min(1).max(MAX_CURSOR).refine((c) => codec.decode(c) !== null, { message: 'is not a next_cursor this list issued' })
    .nullable().optional().openapi({ description: 'Opaque: the `next_cursor` of the previous page.' });
}

export const updatedSinceParam = rfc3339.nullable().optional()
  .openapi({ description: 'Only items updated (or, for items that never change, created) at or after this time (RFC 3339).' });

/**
 * The query of a list: `limit` (1-500, default 100), `cursor`, `updated_since` when the items have a
 * time, and the list's own filters. Unknown parameters are refused (422).
 */
export function pageQuery<E extends ZodRawShape = Record<never, never>>(codec: ListCursor, opts: { updatedSince: boolean }, filters?: E) {
  const shape = {
    ...(filters ?? ({} as E)),
    limit: limitParam,
    cursor: cursorParam(codec),
    updated_since: updatedSinceParam,
  };
  if (!opts.updatedSince) delete (shape as Partial<typeof shape>).updated_since;
  return z.object(shape).strict();
}

/** The page query as a handler reads it. */
export interface PageRequest {
  limit: number;
  cursor?: string | null;
  updated_since?: string | null;
}

/** The decoded position of a page request (null: the first page). Validated already by the schema. */
export function afterKey(codec: ListCursor, q: PageRequest): Key | null {
  return q.cursor ? codec.decode(q.cursor) : null;
}

/** How many rows a page reads: one more than it shows, to know whether there is a next page. */
export function rowsToFetch(limit: number): number {
  return limit + 1;
}

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** Rows read with `rowsToFetch` become the page and its `next_cursor` (the key of its last item). */
export function toPage<T>(rows: T[], limit: number, codec: ListCursor, keyOf: (row: T) => Key): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items, next_cursor: more ? codec.encode(keyOf(items[items.length - 1])) : null };
}

/** A column of a keyset order: its SQL, its direction, and the cast of its bound value. */
export interface KeyColumn {
  sql: string;
  desc?: boolean;
  cast?: string;
}

/**
 * The SQL condition "after this key" in the order of `columns` (each ascending or descending; the
 * last makes the order unique). `bind` adds a parameter and answers its placeholder.
 */
export function keysetAfter(columns: KeyColumn[], key: Key, bind: (value: string) => string): string {
  const values = key.map((v, i) => `${bind(v)}${columns[i].cast ? `::${columns[i].cast}` : ''}`);
  const alternatives = columns.map((c, i) => [
    ...columns.slice(0, i).map((e, j) => `${e.sql} = ${values[j]}`),
    `${c.sql} ${c.desc ? '<' : '>'} ${values[i]}`,
  ].join(' AND '));
  return `(${alternatives.map((a) => `(${a})`).join(' OR ')})`;
}

/** Compares two keys part by part (whole numbers as numbers, times as instants, the rest as text). */
function compareKeys(parts: KeyPart[], a: Key, b: Key): number {
  for (let i = 0; i < parts.length; i++) {
    let c: number;
    if (parts[i] === 'int') { const x = BigInt(a[i]); const y = BigInt(b[i]); c = x < y ? -1 : x > y ? 1 : 0; }
    else if (parts[i] === 'time') c = Date.parse(a[i]) - Date.parse(b[i]);
    else c = a[i] < b[i] ? -1 : a[i] > b[i] ? 1 : 0;
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * A page of a list the service computes rather than reads in one query (tenants, grants, identity
 * leftovers, reconciliation rows…): sorted on the same unique key, started after the cursor's key, so
 * it pages as a stored list does (stable under inserts).
 */
export function pageOfAll<T>(all: T[], q: PageRequest, codec: ListCursor, order: KeyPart[] | ((a: Key, b: Key) => number), keyOf: (item: T) => Key): Page<T> {
  const compare = typeof order === 'function' ? order : (a: Key, b: Key) => compareKeys(order, a, b);
  const after = afterKey(codec, q);
  const keyed = all.map((item) => ({ item, key: keyOf(item) }));
  // A list its service already answers in this order (the reconciliation's rows) is not sorted again.
  const inOrder = keyed.every((x, i) => i === 0 || compare(keyed[i - 1].key, x.key) < 0);
  const sorted = inOrder ? keyed : keyed.sort((a, b) => compare(a.key, b.key));
  const rest = after === null ? sorted : sorted.filter((x) => compare(x.key, after) > 0);
  return toPage(rest.slice(0, rowsToFetch(q.limit)).map((x) => x.item), q.limit, codec, keyOf);
}

/** Keeps the items updated at or after `updated_since` (for lists computed in memory). */
export function updatedSince<T>(all: T[], q: PageRequest, timeOf: (item: T) => string | Date | null | undefined): T[] {
  if (!q.updated_since) return all;
  const since = Date.parse(q.updated_since);
  return all.filter((item) => { const t = timeOf(item); return t != null && new Date(t).getTime() >= since; });
}

type Snake<S extends string> = S extends `${infer A}-${infer B}` ? `${A}_${Snake<B>}` : S;
type LastSegment<P extends string> = P extends `${string}/${infer Rest}` ? LastSegment<Rest> : P;
/** The items field of the list at path P, as a type (the same rule as `itemsFieldOf`). */
export type ItemsField<P extends string> = Snake<LastSegment<P>>;

/**
 * The items field of a list: the last segment of its path in snake case (`ticket-boards` →
 * `ticket_boards`, `identity/unmapped` → `unmapped`). The interface's own names (`tickets`,
 * `agreements`, `devices`, `members`, `events`) follow the same rule.
 */
export function itemsFieldOf<P extends string>(path: P): ItemsField<P> {
  const segments = path.split('/').filter((s) => s && !s.startsWith('{'));
  return segments[segments.length - 1].replace(/-/g, '_') as ItemsField<P>;
}

const nextCursorField = z.string().nullable().openapi({ description: 'Pass as `cursor` for the next page; null when there is no further page.' });
const storeFields = {
  last_synced_at: z.string().nullable().openapi({ description: 'Oldest successful sync among the connections that fed this list (RFC 3339); null if one has not synced yet.' }),
  served_from: z.string().nullable().openapi({ description: '`store`: served from the synchronised store, never from the vendor.' }),
};

/**
 * The envelope schema of the list at `path`: its items field, `sandbox` (true on sandbox tenants),
 * `next_cursor`, `last_synced_at` and `served_from` for store-served lists, and `extra` fields the
 * list documents besides (totals of a report).
 */
export function listEnvelope<P extends string, I extends ZodType, E extends ZodRawShape = Record<never, never>>(name: string, path: P, item: I, opts: { store?: boolean; extra?: E } = {}) {
  const shape = {
    [itemsFieldOf(path)]: z.array(item),
    sandbox: z.boolean().openapi({ description: 'True on sandbox tenants.' }),
    next_cursor: nextCursorField,
    ...(opts.store ? storeFields : {}),
    ...(opts.extra ?? ({} as E)),
  } as { [K in ItemsField<P>]: z.ZodArray<I> } & { sandbox: z.ZodBoolean; next_cursor: typeof nextCursorField } & Partial<typeof storeFields> & E;
  return z.object(shape).strict().openapi(name);
}

/** What a store-served list adds to its envelope. */
export interface StoreFacts {
  lastSyncedAt: string | null;
}

/** The answer of the list at `path`: one page in its items field, with `sandbox` and `next_cursor`. */
export function envelopeOf<T>(path: string, page: Page<T>, sandbox: boolean, store?: StoreFacts): Record<string, unknown> {
  return {
    [itemsFieldOf(path)]: page.items,
    sandbox,
    next_cursor: page.next_cursor,
    ...(store ? { last_synced_at: store.lastSyncedAt, served_from: 'store' } : {}),
  };
}
