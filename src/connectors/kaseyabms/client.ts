/**
 * How Kaseya BMS ("BMS API 2.0") is spoken to, declared for the vendor session (vendor-session.ts keeps
 * the token, renews it and resends once after a 401, and pages):
 * - auth: POST /v2/security/authenticate, a multipart/form-data form (the only body the document gives it) of GrantType `password`, UserName, Password and Tenant
 *   (the company name under My Settings), answering TokenOutputDto (`Result.AccessToken`, its expiry as
 *   `Result.AccessTokenExpireOn`); then `Authorization: Bearer` (the document's one security scheme,
 *   `bearerAuth`). Help page "V2 BMS Rest APIs" (help.bms.kaseya.com): username, password, company name.
 * - answers: every operation declares only a 200, the envelope `{Success, Error, Result}`; a refusal is
 *   `Success: false` with `Error.Message`, at 200 (resultOf turns it into an error here).
 * - paging: `PageSize` and `PageNumber` (from 1); paged answers carry `TotalRecords`.
 */
import { VendorValidationError, fieldNamedIn, type FieldMap } from '../vendor-errors';
import { vendorSession, type Query, type SessionContext, type VendorProfile } from '../vendor-session';
import { writerCall, type VendorDialect, type WriterRequest } from '../writer-http';
import type { WriteContext } from '../write-types';

/** The page size we ask for (BMS documents no maximum; 100 keeps a page of tickets small). */
export const BMS_PAGE_SIZE = 100;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type BmsRecord = Record<string, any>;

interface Envelope { Success?: unknown; Error?: { Code?: unknown; Message?: unknown; SubErrors?: unknown } | null; Result?: unknown }

/** BMS's refusal in its envelope (Success=false at HTTP 200): its message and sub-errors. */
export class BmsRefused extends Error {
  constructor(readonly code: number | null, message: string, readonly subErrors: string[], readonly body: unknown) {
    super(message);
    this.name = 'BmsRefused';
  }
}

/** The envelope's error, or null when the body is not a refusal. */
export function envelopeError(body: unknown): BmsRefused | null {
  const e = body as Envelope | null;
  if (!e || typeof e !== 'object' || e.Success !== false) return null;
  const message = typeof e.Error?.Message === 'string' && e.Error.Message ? e.Error.Message : 'Kaseya BMS refused the request.';
  const subErrors = Array.isArray(e.Error?.SubErrors) ? e.Error!.SubErrors.filter((s): s is string => typeof s === 'string') : [];
  return new BmsRefused(typeof e.Error?.Code === 'number' ? e.Error.Code : null, message, subErrors, body);
}

/** The envelope's `Result`, or the refusal thrown. */
export function resultOf<T>(body: unknown, where: string): T {
  const refused = envelopeError(body);
  if (refused) throw refused;
  if (!body || typeof body !== 'object' || !('Result' in body)) throw new Error(`Kaseya BMS ${where} answered without its envelope`);
  return (body as Envelope).Result as T;
}

export const bmsProfile: VendorProfile = {
  connector: 'kaseyabms',
  auth: {
    kind: 'password-grant',
    tokenUrl: '/v2/security/authenticate',
    // BMS API 2.0 documents the sign-in's body as multipart/form-data only.
    encoding: 'multipart',
    username: 'username',
    password: 'password',
    // The user signs in with its own name and password: BMS has no API client id.
    clientless: true,
    credentialParams: { Tenant: 'tenant' },
    paramNames: { grant_type: 'GrantType', username: 'UserName', password: 'Password' },
    answer: { access: 'Result.AccessToken', expiresAt: 'Result.AccessTokenExpireOn', refresh: 'Result.RefreshToken' },
    refusedAnswer: (body) => envelopeError(body),
    // BMS states each token's expiry; an hour when an answer does not (unconfirmed default).
    defaultLifetimeS: 3600,
  },
};

/** The BMS writers' calls: the session's, with the envelope's refusal as field problems (422 `validation`). */
export const bmsDialect: VendorDialect = {
  connector: 'kaseyabms',
  profile: bmsProfile,
  // A body BMS cannot bind is refused in the envelope (at 200), never with an HTTP status.
  refusedStatuses: [],
  problems: () => [],
};

const call = writerCall(bmsDialect);

/** One writer call; a `Success: false` answer becomes a VendorValidationError naming our request's field. */
export async function bmsWrite<T>(ctx: WriteContext, req: WriterRequest, fields: FieldMap, fallback: string): Promise<T> {
  const body = await call<unknown>(ctx, req, fields, fallback);
  try {
    return resultOf<T>(body, `${req.method} ${req.path}`);
  } catch (err) {
    if (!(err instanceof BmsRefused)) throw err;
    const messages = err.subErrors.length ? err.subErrors : [err.message];
    throw new VendorValidationError('kaseyabms', messages.map((m) => ({ field: fieldNamedIn(m, fields, fallback), message: m })), 200, body);
  }
}

/** A GET's `Result`. */
export async function bmsGet<T>(ctx: SessionContext, path: string, query: Query = {}): Promise<T> {
  return resultOf<T>(await vendorSession(bmsProfile, ctx).get<unknown>(path, query), `GET ${path}`);
}

/** Every page of a BMS list, in BMS's order; a refusal in the envelope stops it with BMS's message. */
export async function* bmsPages(ctx: SessionContext, path: string, query: Query = {}): AsyncGenerator<BmsRecord[]> {
  const pages = vendorSession(bmsProfile, ctx).pages<BmsRecord>(
    { path, query },
    { style: 'page-number', items: 'Result', page: 'PageNumber', size: 'PageSize', pageSize: BMS_PAGE_SIZE, first: 1, totalItems: 'TotalRecords' },
  );
  try {
    yield* pages;
  } catch (err) {
    // The session names the missing `Result` of a refusal; BMS's own message says why.
    const refused = err instanceof Error && /answered without Result/.test(err.message) ? await refusalOf(ctx, path, query) : null;
    throw refused ?? err;
  }
}

/** Asks once more for the first page, to read BMS's message of a refused list. */
async function refusalOf(ctx: SessionContext, path: string, query: Query): Promise<Error | null> {
  const body = await vendorSession(bmsProfile, ctx).get<unknown>(path, { ...query, PageNumber: 1, PageSize: 1 }).catch(() => null);
  return envelopeError(body);
}

/** A BMS time as a Date (BMS answers ISO 8601; one without a zone is UTC). */
export function parseBmsTime(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const d = new Date(hasZone || !value.includes('T') ? value : `${value}Z`);
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1900 ? null : d;
}
