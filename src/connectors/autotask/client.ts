/**
 * The Autotask REST calls the connector makes, through the vendor session (vendor-session.ts; reads are
 * retried on 429/503 with Retry-After by vendor-http.ts).
 *
 * - Auth: headers ApiIntegrationCode, UserName, Secret on every call (credentials {username, secret,
 *   integrationCode}). ctx.baseUrl is the zone's `.../atservicesrest/v1.0`. Autotask hosts each
 *   database in a zone; `GET zoneInformation?user=<username>` names it (Autotask REST swagger,
 *   ZoneInformationApiIntegration_QueryZoneInformation -> {zoneName, url, webUrl, ci}; the same call
 *   @apigrate/autotask-restapi makes first). The connection test (probe, run when a connection is
 *   created or its settings change: src/tenants/connection-checks.ts) asks it and refuses a base URL
 *   that is not the user's zone, naming the right one; syncs do not ask again.
 * - Queries: POST <Entity>/query with {filter, MaxRecords: 500} (Autotask's largest page), then GET of
 *   each pageDetails.nextPageUrl (it carries the paging state and the search; its path and query are kept
 *   on the connection's origin), past an empty page too, until there is none; a link already read fails.
 *   Queries are reads, so they are retried like GETs.
 * - Requests are sequential: Autotask allows 3 concurrent requests per entity endpoint and integration.
 */
import type { SyncContext } from '../types';
import { fieldNamedIn } from '../vendor-errors';
import type { VendorDialect } from '../writer-http';
import { vendorSession, type VendorProfile } from '../vendor-session';
import { autotaskErrorMessages } from './errors';

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

/** Matches every record: Autotask refuses a query without a condition, and ids start at 0. */
export const ALL: FilterItem[] = [{ op: 'exist', field: 'id' }];

/** The three auth headers of every Autotask call, read and write side alike. */
export function autotaskHeaders(credentials: Record<string, string>): Record<string, string> {
  const { username, secret, integrationCode } = credentials;
  if (!username || !secret || !integrationCode) throw new Error('autotask credentials need username, secret and integrationCode');
  return { ApiIntegrationCode: integrationCode, UserName: username, Secret: secret };
}

const headers = (ctx: SyncContext) => autotaskHeaders(ctx.credentials);

/** Autotask's API user: the same three headers on every call, nothing to renew. */
export const autotaskProfile: VendorProfile = { connector: 'autotask', auth: { kind: 'headers', headers: autotaskHeaders } };

/**
 * How Autotask's writers call it (writer-http.ts): its refusal is a 500 or 400 whose body carries an
 * `errors` list (errors.ts); one without the list is a fault, not a refusal.
 */
export const autotaskDialect: VendorDialect = {
  connector: 'autotask',
  profile: autotaskProfile,
  refusedStatuses: [500, 400],
  problems: (body, fields, fallback) => autotaskErrorMessages(body).map((message) => ({ field: fieldNamedIn(message, fields, fallback), message })),
};

export interface ZoneInformation {
  zoneName?: string;
  /** The zone's REST root, e.g. `https://webservices2.autotask.net/ATServicesRest/` (the version follows). */
  url: string;
  webUrl?: string;
  ci?: number;
}

/** A base URL that is not the API user's zone: the connection must be saved with the zone's. */
export class WrongZoneError extends Error {
  /** The connection setting to fix. */
  readonly field = 'base_url';
  constructor(readonly zoneName: string | null, readonly zoneBaseUrl: string) {
    super(`the API user's database is in Autotask zone ${zoneName ?? '(unnamed)'}: base_url must be ${zoneBaseUrl}`);
  }
}

/** The zone of the connection's API user: GET zoneInformation?user=<username>. */
export async function zoneInformation(ctx: SyncContext): Promise<ZoneInformation> {
  const body = await vendorSession(autotaskProfile, ctx).send<Partial<ZoneInformation>>({
    path: '/zoneInformation', query: { user: headers(ctx).UserName }, read: false,
  });
  if (!body || typeof body.url !== 'string' || !body.url) throw new Error('autotask zoneInformation: expected {url} in the answer');
  return body as ZoneInformation;
}

/** The zone's API base for this client's version (`<url>v1.0`), as a connection's base_url holds it. */
export function zoneBaseUrl(zone: ZoneInformation): string {
  return `${zone.url.replace(/\/+$/, '')}/v1.0`;
}

/**
 * The connection test: the user's zone must be the base URL's (else a refusal naming the zone's URL),
 * then a zero-result query (POST Companies/query with `id eq -1`, MaxRecords 1): Autotask documents no
 * cheaper authenticated call on the zone's base URL, and a query needs a condition.
 */
export async function probeQuery(ctx: SyncContext): Promise<void> {
  const zone = await zoneInformation(ctx);
  const expected = zoneBaseUrl(zone);
  if (expected.toLowerCase() !== ctx.baseUrl.replace(/\/+$/, '').toLowerCase()) {
    throw new WrongZoneError(zone.zoneName ?? null, expected);
  }
  await vendorSession(autotaskProfile, ctx).send({
    method: 'POST', path: '/Companies/query', json: { filter: [{ op: 'eq', field: 'id', value: -1 }], MaxRecords: 1 },
  });
}

/**
 * Every page of a query, in Autotask's (id) order: the POST, then each `pageDetails.nextPageUrl` as given
 * (it carries the paging state and the search), kept on the connection's origin so the secret goes nowhere else.
 */
export function queryPages(
  ctx: SyncContext,
  entity: string,
  filter: FilterItem[],
  includeFields?: string[],
): AsyncGenerator<Native[]> {
  const search = { filter, MaxRecords: AUTOTASK_PAGE_SIZE, ...(includeFields ? { IncludeFields: includeFields } : {}) };
  return vendorSession(autotaskProfile, ctx).pages<Native>(
    { method: 'POST', path: `/${entity}/query`, json: search, read: true },
    { style: 'next-url', items: 'items', next: 'pageDetails.nextPageUrl', offOrigin: 'rebase' },
  );
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
  const body = await vendorSession(autotaskProfile, ctx).get<{ fields?: FieldInfo[] }>(`/${entity}/entityInformation/fields`);
  if (!body || !Array.isArray(body.fields)) throw new Error(`autotask ${entity}/entityInformation/fields: expected {fields}`);
  return body.fields;
}

/** Active picklist values of a field, and the value whose label first matches one of `labels` (in order). */
export function pickByLabel(fields: FieldInfo[], name: string, labels: RegExp[]): PicklistValue | undefined {
  const values = [...picklist(fields, name).values()].filter((p) => p.isActive !== false);
  for (const re of labels) {
    const hit = values.find((p) => re.test(String(p.label ?? '')));
    if (hit) return hit;
  }
  return undefined;
}

/** A picklist value as Autotask's JSON takes it: a number when it is numeric. */
export const picklistId = (p: PicklistValue): number | string => (/^\d+$/.test(String(p.value)) ? Number(p.value) : String(p.value));

/** The picklist of a field, by value (as a string). Empty when the field has none. */
export function picklist(fields: FieldInfo[], name: string): Map<string, PicklistValue> {
  const f = fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
  return new Map((f?.picklistValues ?? []).map((p) => [String(p.value), p]));
}

/** GET <Entity>/entityInformation: whether the API user can create, update and query the entity (read-only). */
export async function entityInformation(ctx: SyncContext, entity: string): Promise<{ canCreate?: boolean; canUpdate?: boolean; canQuery?: boolean }> {
  const body = await vendorSession(autotaskProfile, ctx).send<{ info?: { canCreate?: boolean; canUpdate?: boolean; canQuery?: boolean } }>({ path: `/${entity}/entityInformation`, read: false });
  return body?.info ?? {};
}
