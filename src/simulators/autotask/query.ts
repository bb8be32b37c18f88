/**
 * Autotask query semantics: the `filter` expression (ops eq noteq gt gte lt lte beginsWith endsWith
 * contains exist notExist in notIn, grouped with {op: and|or, items}), MaxRecords (at most 500),
 * IncludeFields, and the id-keyed paging state Autotask puts into `nextPageUrl`
 * (`<Entity>/query/next?paging={"pageSize":500,"previousIds":[-1],"nextIds":[725]}&search=<query>`).
 */
import type { EntityName } from './fields';
import { AutotaskError, type InstanceState, type Row } from './store';
import { sqlBeginsWith, sqlContains, sqlEndsWith } from '../sql-like';

export interface FilterNode {
  op: string;
  field?: string;
  value?: unknown;
  udf?: boolean;
  items?: FilterNode[];
}

export interface QuerySearch {
  filter: FilterNode[];
  MaxRecords?: number;
  IncludeFields?: string[];
}

export interface Paging {
  pageSize: number;
  /** The `afterId` of every earlier page, oldest first (for prevPageUrl). */
  previousIds: number[];
  /** `[afterId]` of the page to serve. */
  nextIds: number[];
}

export const MAX_RECORDS = 500;
const COMPARISON_OPS = new Set(['eq', 'noteq', 'gt', 'gte', 'lt', 'lte', 'beginswith', 'endswith', 'contains', 'exist', 'notexist', 'in', 'notin']);
/** Autotask caps a query at 500 OR conditions (documented for the SOAP and REST APIs). */
const MAX_CONDITIONS = 500;

/** Reads a search body whose keys Autotask accepts in any case (filter/Filter, MaxRecords/maxRecords). */
export function parseSearch(raw: unknown): QuerySearch {
  if (raw == null || typeof raw !== 'object' || Array.isArray(raw)) throw new AutotaskError(500, ['The query body must be a JSON object with a filter.']);
  const get = (key: string) => {
    const k = Object.keys(raw).find((x) => x.toLowerCase() === key.toLowerCase());
    return k ? (raw as Record<string, unknown>)[k] : undefined;
  };
  const filter = get('filter');
  // Autotask refuses a query without conditions; clients send {"op":"exist","field":"id"} to list all.
  if (!Array.isArray(filter) || filter.length === 0) throw new AutotaskError(500, ['A query must include at least one filter condition.']);
  const max = get('MaxRecords');
  let maxRecords: number | undefined;
  if (max != null) {
    maxRecords = Number(max);
    // Unconfirmed whether Autotask clamps or refuses; refusing catches a client that asks too much.
    if (!Number.isInteger(maxRecords) || maxRecords < 1 || maxRecords > MAX_RECORDS) {
      throw new AutotaskError(500, [`MaxRecords must be an integer between 1 and ${MAX_RECORDS}.`]);
    }
  }
  const include = get('IncludeFields');
  return {
    filter: filter as FilterNode[],
    ...(maxRecords != null ? { MaxRecords: maxRecords } : {}),
    ...(Array.isArray(include) && include.length ? { IncludeFields: include.map(String) } : {}),
  };
}

export function parseJsonParam(value: unknown, name: string): unknown {
  if (typeof value !== 'string' || !value) throw new AutotaskError(500, [`The ${name} parameter is required.`]);
  try {
    return JSON.parse(value);
  } catch {
    throw new AutotaskError(500, [`The ${name} parameter is not valid JSON.`]);
  }
}

export function parsePaging(raw: unknown): Paging {
  const p = raw as Partial<Paging>;
  const ok = (a: unknown): a is number[] => Array.isArray(a) && a.every((x) => Number.isFinite(x));
  if (!p || !Number.isInteger(p.pageSize) || !ok(p.previousIds) || !ok(p.nextIds) || p.nextIds.length !== 1) {
    throw new AutotaskError(500, ['The paging parameter is not valid.']);
  }
  return { pageSize: p.pageSize!, previousIds: p.previousIds, nextIds: p.nextIds };
}

type Predicate = (row: Row) => boolean;

/** Compiles a filter list (implicitly AND-ed) to a predicate; unknown fields and ops are refused. */
export function compileFilter(state: InstanceState, entity: EntityName, filter: FilterNode[]): Predicate {
  let conditions = 0;
  const compileNode = (node: FilterNode): Predicate => {
    if (!node || typeof node !== 'object' || typeof node.op !== 'string') throw new AutotaskError(500, ['Each filter item needs an op.']);
    const op = node.op.toLowerCase();
    if (op === 'and' || op === 'or') {
      if (!Array.isArray(node.items) || node.items.length === 0) throw new AutotaskError(500, [`The '${node.op}' grouping needs items.`]);
      const parts = node.items.map(compileNode);
      return op === 'and' ? (r) => parts.every((p) => p(r)) : (r) => parts.some((p) => p(r));
    }
    if (!COMPARISON_OPS.has(op)) throw new AutotaskError(500, [`The operator '${node.op}' is not supported.`]);
    if (++conditions > MAX_CONDITIONS) throw new AutotaskError(500, ['Invalid query syntax. Queries are limited to 500 or fewer conditions.']);
    if (node.udf) throw new AutotaskError(500, ['User-defined field queries are not available in the sandbox.']);
    const info = typeof node.field === 'string' ? state.field(entity, node.field) : undefined;
    if (!info) throw new AutotaskError(500, [`Unable to find ${String(node.field)} in the ${entity} entity.`]);
    if (!info.isQueryable) throw new AutotaskError(500, [`The field ${info.name} of the ${entity} entity cannot be queried.`]);
    return comparison(op, info.name, node.value);
  };
  const parts = filter.map(compileNode);
  return (r) => parts.every((p) => p(r));
}

function comparison(op: string, field: string, expected: unknown): Predicate {
  const present = (v: unknown) => v !== null && v !== undefined && v !== '';
  switch (op) {
    case 'exist': return (r) => present(r[field]);
    case 'notexist': return (r) => !present(r[field]);
    case 'in':
    case 'notin': {
      if (!Array.isArray(expected)) throw new AutotaskError(500, [`The '${op === 'in' ? 'in' : 'notIn'}' operator needs an array value.`]);
      if (expected.length > MAX_CONDITIONS) throw new AutotaskError(500, ['Invalid query syntax. Queries are limited to 500 or fewer conditions.']);
      const test = (v: unknown) => expected.some((x) => compare(v, x) === 0);
      return op === 'in' ? (r) => test(r[field]) : (r) => !test(r[field]);
    }
    // Text searches are SQL Server LIKEs at Autotask: `[` in the value opens a character class (sql-like.ts).
    case 'beginswith': { const m = sqlBeginsWith(text(expected)); return (r) => m(r[field]); }
    case 'endswith': { const m = sqlEndsWith(text(expected)); return (r) => m(r[field]); }
    case 'contains': { const m = sqlContains(text(expected)); return (r) => m(r[field]); }
    case 'eq': return (r) => compare(r[field], expected) === 0;
    case 'noteq': return (r) => compare(r[field], expected) !== 0;
    case 'gt': return (r) => ordered(r[field], expected, (c) => c > 0);
    case 'gte': return (r) => ordered(r[field], expected, (c) => c >= 0);
    case 'lt': return (r) => ordered(r[field], expected, (c) => c < 0);
    case 'lte': return (r) => ordered(r[field], expected, (c) => c <= 0);
  }
  throw new AutotaskError(500, [`The operator '${op}' is not supported.`]);
}

const text = (v: unknown) => (v == null ? '' : String(v)).toLowerCase();
const DATE_LIKE = /^\d{4}-\d{2}-\d{2}(T|$)/;

/** Treats an ISO string without a zone as UTC, as Autotask stores and returns UTC. */
function timeOf(v: string): number {
  const s = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(v) ? `${v}Z` : v;
  return Date.parse(s);
}

/** Autotask compares in SQL Server's way: numbers by value, dates by time, text case-insensitively. */
function compare(actual: unknown, expected: unknown): number | null {
  if (actual === null || actual === undefined) return expected === null || expected === undefined ? 0 : null;
  if (typeof actual === 'boolean' || typeof expected === 'boolean') {
    const a = actual === true || actual === 1 || actual === '1' || text(actual) === 'true';
    const e = expected === true || expected === 1 || expected === '1' || text(expected) === 'true';
    return a === e ? 0 : a ? 1 : -1;
  }
  if (typeof actual === 'number') {
    const e = Number(expected);
    return Number.isNaN(e) ? null : Math.sign(actual - e);
  }
  const a = String(actual);
  const e = expected == null ? '' : String(expected);
  if (DATE_LIKE.test(a) && DATE_LIKE.test(e)) {
    const ta = timeOf(a);
    const te = timeOf(e);
    if (!Number.isNaN(ta) && !Number.isNaN(te)) return Math.sign(ta - te);
  }
  const la = a.toLowerCase();
  const le = e.toLowerCase();
  return la === le ? 0 : la < le ? -1 : 1;
}

function ordered(actual: unknown, expected: unknown, test: (c: number) => boolean): boolean {
  const c = compare(actual, expected);
  return c !== null && test(c);
}

export interface Page {
  items: Row[];
  /** afterId for the page after this one, or null when this is the last page. */
  nextAfterId: number | null;
}

/** One page of matching rows with id greater than `afterId`, in id order. */
export function runPage(state: InstanceState, entity: EntityName, predicate: Predicate, afterId: number, pageSize: number): Page {
  const rows = state.table(entity).all();
  const items: Row[] = [];
  for (let i = state.table(entity).indexAfter(afterId); i < rows.length; i++) {
    if (!predicate(rows[i])) continue;
    if (items.length === pageSize) return { items, nextAfterId: items[items.length - 1].id };
    items.push(rows[i]);
  }
  return { items, nextAfterId: null };
}

export function countMatches(state: InstanceState, entity: EntityName, predicate: Predicate): number {
  let n = 0;
  for (const r of state.table(entity).all()) if (predicate(r)) n++;
  return n;
}

/**
 * Keeps only the asked fields (case-insensitive), as IncludeFields does. The row itself is returned
 * when all fields are wanted: the caller serialises it at once, which is the copy.
 */
export function project(row: Row, include: string[] | undefined): Record<string, unknown> {
  if (!include) return row;
  const wanted = new Set(include.map((f) => f.toLowerCase()));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) if (wanted.has(k.toLowerCase())) out[k] = v;
  out.userDefinedFields = row.userDefinedFields ?? [];
  return out;
}

/** The absolute URL of a page of this query, with the paging state in it. */
export function pageUrl(entityBase: string, paging: Paging, search: QuerySearch): string {
  return `${entityBase}/query/next?paging=${encodeURIComponent(JSON.stringify(paging))}&search=${encodeURIComponent(JSON.stringify(search))}`;
}
