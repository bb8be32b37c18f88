/**
 * N-central REST API access for the connector, declared for the vendor session (vendor-session.ts owns
 * the token cache, the renewal, the 401 resend and the paging).
 *
 * Auth ("Managing Authentication", developer.n-able.com; "Set up N-central REST API access",
 * documentation.n-able.com): `POST /api/auth/authenticate` with `Authorization: Bearer <User-API Token
 * (JWT)>` answers `{tokens: {access: {token, expirySeconds}, refresh: {token, expirySeconds}}}` (access
 * 1 h, refresh 25 h by default); `POST /api/auth/refresh` with the refresh token as the text/plain body
 * answers a new pair. A server reboot forgets every token ("REST API known issues and limitations"):
 * the refused refresh makes the session exchange the JWT again.
 *
 * Paging (every list: `pageNumber` from 1, `pageSize` up to 1000; answers `{data, pageNumber, pageSize,
 * itemCount, totalItems, totalPages}`; the module PS-NCentral-RESTAPI and npycentral's `get_all` page the
 * same way).
 *
 * Throttling ("Rate limiting"): a 429 per endpoint past its requests in flight, retried by vendor-http
 * with backoff; the budget keeps us at 3 in flight (capabilities.ts).
 */
import type { SyncContext } from '../types';
import { vendorSession, type Paging, type Query, type VendorProfile, type VendorSession } from '../vendor-session';

/** `pageSize` of every list: 1000, the largest the REST API takes ("Device Filters": 1 to 1000). */
export const NCENTRAL_PAGE_SIZE = 1000;

export type NcContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;

export const ncentralProfile: VendorProfile = {
  connector: 'ncentral',
  auth: {
    kind: 'jwt-exchange',
    authenticateUrl: '/api/auth/authenticate',
    refreshUrl: '/api/auth/refresh',
    refreshSend: 'text',
    answer: { access: 'tokens.access.token', expiresIn: 'tokens.access.expirySeconds', refresh: 'tokens.refresh.token', refreshExpiresIn: 'tokens.refresh.expirySeconds' },
    defaultLifetimeS: 3600,
  },
};

const PAGING: Paging = { style: 'page-number', items: 'data', page: 'pageNumber', size: 'pageSize', pageSize: NCENTRAL_PAGE_SIZE, first: 1, totalPages: 'totalPages', totalItems: 'totalItems' };

const session = (ctx: NcContext): VendorSession => vendorSession(ncentralProfile, ctx);

/** An authenticated GET of `<baseUrl><path>`, its body. */
export function ncGet<T>(ctx: NcContext, path: string, query: Query = {}): Promise<T> {
  return session(ctx).get<T>(path, query);
}

/**
 * The profile lists are read with: a page answered 200 with an `errorMessage` fails the list (thrown as a
 * 502 with the body), so an engine error never reads as an empty page. A sync of N-central is a full
 * read whose deletion pass would otherwise delete every device or customer such a page left out. The
 * tokens are the same (held by connector, base URL and credentials).
 */
const ncentralListProfile: VendorProfile = {
  ...ncentralProfile,
  errorInBody: (body) => {
    const message = engineError(body);
    return message ? { status: 502, message } : null;
  },
};

/** Every page of a list; a page carrying an engine error throws. */
export function ncPages<T>(ctx: NcContext, path: string, query: Query = {}): AsyncGenerator<T[]> {
  return vendorSession(ncentralListProfile, ctx).pages<T>({ path, query }, PAGING);
}

/**
 * The error message some failures of N-central's core engine attach to a 200 OK ("REST API known issues
 * and limitations", Error handling and communication), or null for a real answer.
 */
export function engineError(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const m = (body as Record<string, unknown>).errorMessage;
  return typeof m === 'string' && m.trim() !== '' ? m : null;
}
