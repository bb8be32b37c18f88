/**
 * The Autotask REST calls the connector makes, over ctx.http (which retries 429/503 with Retry-After).
 *
 * - Auth: headers ApiIntegrationCode, UserName, Secret on every call (credentials {username, secret,
 *   integrationCode}). ctx.baseUrl is the zone's `.../atservicesrest/v1.0`; zone discovery
 *   (ZoneInformation) happens when the connection is set up, not on every sync.
 * - Queries: POST <Entity>/query with {filter, MaxRecords: 500} (Autotask's largest page), then GET of
 *   pageDetails.nextPageUrl as given (it carries the paging state and the search) until it is null.
 *   Queries are reads, so they are retried like GETs.
 * - Requests are sequential: Autotask allows 3 concurrent requests per entity endpoint and integration.
 */
import type { SyncContext } from '../types';

export const AUTOTASK_PAGE_SIZE = 500;
/** Autotask caps a query at 500 conditions; an `in` list counts each value. */
const MAX_IN_VALUES = 500;

export type Native = Record<string, unknown>;
export interface FilterItem {
  op: string;
  field?: string;
  value?: unknown;
  items?: FilterItem[];
}

export interface PicklistValue {
  value: string;
  label: string;
  isActive?: boolean;
  isDefaultValue?: boolean;
  sortOrder?: number;
  [k: string]: unknown;
}
export interface FieldInfo {
  name: string;
  isPickList?: boolean;
  picklistValues?: PicklistValue[] | null;
  [k: string]: unknown;
}

interface QueryPage {
  items: Native[];
  pageDetails?: { nextPageUrl?: string | null };
}

/** Matches every record: Autotask refuses a query without a condition, and ids start at 0. */
export const ALL: FilterItem[] = [{ op: 'exist', field: 'id' }];

function headers(ctx: SyncContext): Record<string, string> {
  const { username, secret, integrationCode } = ctx.credentials;
  if (!username || !secret || !integrationCode) throw new Error('autotask credentials need username, secret and integrationCode');
  return { ApiIntegrationCode: integrationCode, UserName: username, Secret: secret };
}

/**
 * A zero-result query (POST Companies/query with `id eq -1`, MaxRecords 1): Autotask documents no
 * cheaper authenticated call on the zone's base URL, and a query needs a condition.
 */
export async function probeQuery(ctx: SyncContext): Promise<void> {
  await ctx.http.request({
    method: 'POST', url: `${ctx.baseUrl}/Companies/query`, headers: headers(ctx), retry: false,
    json: { filter: [{ op: 'eq', field: 'id', value: -1 }], MaxRecords: 1 },
  });
}

function asPage(body: unknown, what: string): QueryPage {
  const b = body as Partial<QueryPage> | null;
  if (!b || !Array.isArray(b.items)) throw new Error(`autotask ${what}: expected {items, pageDetails} in the answer`);
  return b as QueryPage;
}

/** Every page of a query, in Autotask's (id) order. */
export async function* queryPages(
  ctx: SyncContext,
  entity: string,
  filter: FilterItem[],
  includeFields?: string[],
): AsyncGenerator<Native[]> {
  const search = { filter, MaxRecords: AUTOTASK_PAGE_SIZE, ...(includeFields ? { IncludeFields: includeFields } : {}) };
  let page = asPage(
    (await ctx.http.request({ method: 'POST', url: `${ctx.baseUrl}/${entity}/query`, headers: headers(ctx), json: search, retry: true })).body,
    `${entity}/query`,
  );
  const followed = new Set<string>();
  for (;;) {
    if (page.items.length) yield page.items;
    const next = page.pageDetails?.nextPageUrl;
    if (!next) return;
    // A next page pointing back at one already read would loop forever.
    if (followed.has(next)) throw new Error(`autotask ${entity}/query: nextPageUrl repeats`);
    followed.add(next);
    page = asPage((await ctx.http.request({ url: next, headers: headers(ctx) })).body, `${entity}/query/next`);
  }
}

/** All records whose `field` is one of `values` (chunked under Autotask's condition limit). */
export async function queryIn(ctx: SyncContext, entity: string, field: string, values: readonly unknown[], includeFields?: string[]): Promise<Native[]> {
  const distinct = [...new Set(values.filter((v) => v != null))];
  const out: Native[] = [];
  for (let i = 0; i < distinct.length; i += MAX_IN_VALUES) {
    const chunk = distinct.slice(i, i + MAX_IN_VALUES);
    for await (const page of queryPages(ctx, entity, [{ op: 'in', field, value: chunk }], includeFields)) out.push(...page);
  }
  return out;
}

/** GET <Entity>/entityInformation/fields: field information with the database's picklists. */
export async function entityFields(ctx: SyncContext, entity: string): Promise<FieldInfo[]> {
  const body = (await ctx.http.request<{ fields?: FieldInfo[] }>({ url: `${ctx.baseUrl}/${entity}/entityInformation/fields`, headers: headers(ctx) })).body;
  if (!body || !Array.isArray(body.fields)) throw new Error(`autotask ${entity}/entityInformation/fields: expected {fields}`);
  return body.fields;
}

/** The picklist of a field, by value (as a string). Empty when the field has none. */
export function picklist(fields: FieldInfo[], name: string): Map<string, PicklistValue> {
  const f = fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
  return new Map((f?.picklistValues ?? []).map((p) => [String(p.value), p]));
}
