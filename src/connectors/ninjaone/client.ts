/**
 * NinjaOne API access for the connector, declared for the vendor session (vendor-session.ts keeps the
 * OAuth token and renews it): authenticated GETs, and the two paging schemes of the v2 API:
 * `after` = last id for the lists (/v2/organizations, /v2/devices-detailed) and server-side report
 * cursors for /v2/queries/* (`{cursor: {name, offset, count, expires}, results}`).
 *
 * Tokens: POST /ws/oauth/token. A connection holding a `refreshToken` (the MSP authorised it with the
 * authorization-code grant) uses the refresh_token grant, so its tokens carry that user's context, which
 * script/run requires (homotechsual/NinjaOne issue 90: "an interactive authentication session (`code`
 * type or `refresh_token` derived from a code)"; NangoHQ/nango PR 5429). Otherwise client_credentials
 * (reads only). A refresh token NinjaOne answers with replaces the stored one: in this process at once,
 * and in the connection's sealed credentials through credential-rotation.ts (both by the session) (whether NinjaOne rotates
 * refresh tokens is unconfirmed; a rotated one is kept either way). A refresh token NinjaOne refuses
 * (`invalid_grant`: the MSP revoked the authorisation) fails with a message saying what to do.
 */
import { VendorHttpError } from '../vendor-http';
import { vendorSession, type SessionContext, type VendorProfile } from '../vendor-session';

/** 1000: no maximum is documented for these endpoints; 1000 is the documented default of the
 *  /v2/queries/* reports and the page size NinjaOne's own scripts use for device lists. */
export const NINJA_PAGE_SIZE = 1000;

/** NinjaOne refused the connection's refresh token: what the MSP must do, in words (recorded as the sync's error). */
export class AuthorisationRevoked extends VendorHttpError {
  readonly explanation = 'NinjaOne refused the stored authorisation (invalid_grant): it was revoked or has expired. Open a new connect link and sign in at NinjaOne again; until then script runs are refused.';
  constructor(err: VendorHttpError) {
    super('ninjaone refresh token refused (invalid_grant)', err.status, err.body, err.retryAfterMs, err.attempts);
  }
}

/**
 * The refresh-token grant when the connection holds one (a user's context), else client credentials with
 * the three scopes; a refused refresh token fails in words (AuthorisationRevoked).
 */
export const ninjaProfile: VendorProfile = {
  connector: 'ninjaone',
  auth: {
    kind: 'oauth-refresh-token', orClientCredentials: true, tokenUrl: '/ws/oauth/token',
    extra: { scope: 'monitoring management control' }, defaultLifetimeS: 3600,
    refused: (err, grant) => (grant === 'refresh_token' && (err.body as { error?: unknown } | null)?.error === 'invalid_grant' ? new AuthorisationRevoked(err) : err),
  },
};

/** GET <baseUrl><path> with the bearer token; a 401 (token revoked or expired early) gets one
 *  fresh token and one more try. */
export async function ninjaGet<T>(ctx: SessionContext, path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  return ninjaRequest<T>(ctx, { method: 'GET', path, query });
}

/**
 * A POST with the bearer token. Never retried by the HTTP client (a write): the vendor.write job
 * retries 429/503 itself, after reconciling. A 401 is answered before the vendor does anything, so
 * it gets one fresh token and one more try like a GET.
 */
export async function ninjaPost<T>(ctx: SessionContext, path: string, json: unknown): Promise<T> {
  return ninjaRequest<T>(ctx, { method: 'POST', path, json });
}

async function ninjaRequest<T>(ctx: SessionContext, r: { method: 'GET' | 'POST'; path: string; query?: Record<string, string | number | undefined>; json?: unknown }): Promise<T> {
  return vendorSession(ninjaProfile, ctx).send<T>(r);
}

/** Pages of a list that pages with `after` (the last id of the previous page), in id order. */
export function pagesAfter<T extends { id?: unknown }>(ctx: SessionContext, path: string, pageSize = NINJA_PAGE_SIZE): AsyncGenerator<T[]> {
  return vendorSession(ninjaProfile, ctx).pages<T>({ path }, { style: 'after-id', items: null, after: 'after', size: 'pageSize', pageSize, id: 'id' });
}

/** Pages of a /v2/queries/* report (`{cursor: {name, offset, count, expires}, results}`), following its cursor until a short or empty page. */
export function reportPages<T>(ctx: SessionContext, path: string, pageSize = NINJA_PAGE_SIZE): AsyncGenerator<T[]> {
  return vendorSession(ninjaProfile, ctx).pages<T>({ path }, { style: 'cursor', items: 'results', param: 'cursor', size: 'pageSize', pageSize, cursor: 'cursor.name', offset: 'cursor.offset' });
}

/** Every row of an unpaginated list endpoint (/v2/alerts). */
export async function listAll<T>(ctx: SessionContext, path: string): Promise<T[]> {
  const body = await ninjaGet<T[]>(ctx, path);
  if (!Array.isArray(body)) throw new Error(`ninjaone ${path} did not answer with a list`);
  return body;
}

/**
 * What a token of the connection's credentials may do, for the connect page's permission check: the
 * scopes NinjaOne granted (the token answer's `scope`) and whether it carries a user's context (it came
 * from a user's authorisation). One token request, nothing else.
 */
export async function tokenGrant(ctx: SessionContext): Promise<{ scopes: string[]; userContext: boolean }> {
  const body = (await vendorSession(ninjaProfile, ctx).grant()) as { scope?: string } | null;
  return { scopes: String(body?.scope ?? '').split(/\s+/).filter(Boolean), userContext: Boolean(ctx.credentials.refreshToken) };
}
