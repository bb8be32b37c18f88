/**
 * NinjaOne API access for the connector: OAuth tokens (cached until shortly before expiry),
 * authenticated GETs, and the two paging schemes of the v2 API:
 * `after` = last id for the lists (/v2/organizations, /v2/devices-detailed) and server-side report
 * cursors for /v2/queries/* (`{cursor: {name, offset, count, expires}, results}`).
 *
 * Tokens: POST /ws/oauth/token. A connection holding a `refreshToken` (the MSP authorised it with the
 * authorization-code grant) uses the refresh_token grant, so its tokens carry that user's context, which
 * script/run requires (homotechsual/NinjaOne issue 90: "an interactive authentication session (`code`
 * type or `refresh_token` derived from a code)"; NangoHQ/nango PR 5429). Otherwise client_credentials
 * (reads only). A refresh token NinjaOne answers with replaces the stored one: in this process at once,
 * and in the connection's sealed credentials through credential-rotation.ts (whether NinjaOne rotates
 * refresh tokens is unconfirmed; a rotated one is kept either way). A refresh token NinjaOne refuses
 * (`invalid_grant`: the MSP revoked the authorisation) fails with a message saying what to do.
 */
import { createHash } from 'node:crypto';
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';
import { credentialRotated } from '../credential-rotation';

/** 1000: no maximum is documented for these endpoints; 1000 is the documented default of the
 *  /v2/queries/* reports and the page size NinjaOne's own scripts use for device lists. */
export const NINJA_PAGE_SIZE = 1000;

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  token_type?: string;
  expires_in?: number;
}

interface CachedToken {
  token: string;
  /** Epoch ms after which we ask for a new one. */
  refreshAt: number;
}

/** What every call needs: the read side's SyncContext and the write side's WriteContext both fit. */
export type NinjaContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;

// Keyed by base URL + client id (+ a hash of the secret, so a rotated secret gets its own token).
const tokenCache = new Map<string, CachedToken>();
const pendingTokens = new Map<string, Promise<CachedToken>>();

function credentialsOf(ctx: NinjaContext): { clientId: string; clientSecret: string; refreshToken: string | null } {
  const { clientId, clientSecret, refreshToken } = ctx.credentials;
  if (!clientId || !clientSecret) throw new Error('ninjaone connection needs credentials clientId and clientSecret');
  return { clientId, clientSecret, refreshToken: refreshToken || null };
}

function cacheKey(ctx: NinjaContext): string {
  const { clientId, clientSecret, refreshToken } = credentialsOf(ctx);
  const hash = createHash('sha256').update(`${clientSecret}\n${refreshToken ?? ''}`).digest('hex').slice(0, 16);
  return `${ctx.baseUrl}\n${clientId}\n${hash}`;
}

/** NinjaOne refused the connection's refresh token: what the MSP must do, in words (recorded as the sync's error). */
export class AuthorisationRevoked extends VendorHttpError {
  readonly explanation = 'NinjaOne refused the stored authorisation (invalid_grant): it was revoked or has expired. Open a new connect link and sign in at NinjaOne again; until then script runs are refused.';
  constructor(err: VendorHttpError) {
    super('ninjaone refresh token refused (invalid_grant)', err.status, err.body, err.retryAfterMs, err.attempts);
  }
}

/** Refresh tokens NinjaOne answered with, by the one they replace (see the header). */
const rotatedRefreshTokens = new Map<string, string>();

async function requestToken(ctx: NinjaContext): Promise<CachedToken> {
  const { clientId, clientSecret, refreshToken } = credentialsOf(ctx);
  const current = refreshToken ? (rotatedRefreshTokens.get(refreshToken) ?? refreshToken) : null;
  const form: Record<string, string> = current
    ? { grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: current }
    : { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'monitoring management control' };
  const res = await ctx.http.request<TokenResponse>({
    method: 'POST',
    url: `${ctx.baseUrl}/ws/oauth/token`,
    form,
    // Asking for a token again is harmless, so throttling on the token endpoint is retried too.
    retry: true,
  }).catch((err: unknown) => {
    if (current && err instanceof VendorHttpError && (err.body as { error?: unknown } | null)?.error === 'invalid_grant') {
      throw new AuthorisationRevoked(err);
    }
    throw err;
  });
  const { access_token: token, expires_in: expiresIn } = res.body ?? ({} as TokenResponse);
  if (typeof token !== 'string' || !token) throw new Error('ninjaone token endpoint answered without access_token');
  const next = res.body?.refresh_token;
  if (refreshToken && current && typeof next === 'string' && next && next !== current) {
    rotatedRefreshTokens.set(refreshToken, next);
    await credentialRotated({ connector: 'ninjaone', baseUrl: ctx.baseUrl, credential: 'refreshToken', previous: current, next });
  }
  const lifetimeS = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn : 3600;
  // Renew a little early so a token does not expire in the middle of a page.
  const marginS = Math.min(60, lifetimeS / 10);
  return { token, refreshAt: Date.now() + (lifetimeS - marginS) * 1000 };
}

async function accessToken(ctx: NinjaContext): Promise<string> {
  const key = cacheKey(ctx);
  const cached = tokenCache.get(key);
  if (cached && cached.refreshAt > Date.now()) return cached.token;
  let pending = pendingTokens.get(key);
  if (!pending) {
    pending = requestToken(ctx).finally(() => pendingTokens.delete(key));
    pendingTokens.set(key, pending);
  }
  const fresh = await pending;
  tokenCache.set(key, fresh);
  return fresh.token;
}

/** GET <baseUrl><path> with the bearer token; a 401 (token revoked or expired early) gets one
 *  fresh token and one more try. */
export async function ninjaGet<T>(ctx: NinjaContext, path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
  return ninjaRequest<T>(ctx, { method: 'GET', path, query });
}

/**
 * A POST with the bearer token. Never retried by the HTTP client (a write): the vendor.write job
 * retries 429/503 itself, after reconciling. A 401 is answered before the vendor does anything, so
 * it gets one fresh token and one more try like a GET.
 */
export async function ninjaPost<T>(ctx: NinjaContext, path: string, json: unknown): Promise<T> {
  return ninjaRequest<T>(ctx, { method: 'POST', path, json });
}

async function ninjaRequest<T>(ctx: NinjaContext, r: { method: 'GET' | 'POST'; path: string; query?: Record<string, string | number | undefined>; json?: unknown }): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const token = await accessToken(ctx);
    try {
      const res = await ctx.http.request<T>({
        method: r.method, url: `${ctx.baseUrl}${r.path}`, query: r.query, json: r.json, headers: { authorization: `Bearer ${token}` },
        ...(r.method === 'POST' ? { retry: false } : {}),
      });
      return res.body;
    } catch (err) {
      if (attempt === 0 && err instanceof VendorHttpError && err.status === 401) {
        if (tokenCache.get(cacheKey(ctx))?.token === token) tokenCache.delete(cacheKey(ctx));
        continue;
      }
      throw err;
    }
  }
}

/** Pages of a list that pages with `after` (the last id of the previous page), in id order. */
export async function* pagesAfter<T extends { id?: unknown }>(ctx: NinjaContext, path: string, pageSize = NINJA_PAGE_SIZE): AsyncGenerator<T[]> {
  let after: number | undefined;
  for (;;) {
    const page = await ninjaGet<T[]>(ctx, path, { pageSize, after });
    if (!Array.isArray(page)) throw new Error(`ninjaone ${path} did not answer with a list`);
    if (page.length > 0) yield page;
    if (page.length < pageSize) return;
    const last = Number(page[page.length - 1].id);
    // A page that does not move forward would loop for ever.
    if (!Number.isFinite(last) || (after !== undefined && last <= after)) throw new Error(`ninjaone ${path} paging did not advance`);
    after = last;
  }
}

interface ReportPage<T> {
  cursor?: { name?: string; offset?: number; count?: number; expires?: number } | null;
  results?: T[];
}

/** Pages of a /v2/queries/* report, following its cursor until a short or empty page. */
export async function* reportPages<T>(ctx: NinjaContext, path: string, pageSize = NINJA_PAGE_SIZE): AsyncGenerator<T[]> {
  let cursor: string | undefined;
  let lastOffset = -1;
  for (;;) {
    const body = await ninjaGet<ReportPage<T>>(ctx, path, { pageSize, cursor });
    const results = body?.results ?? [];
    if (!Array.isArray(results)) throw new Error(`ninjaone ${path} answered without a results list`);
    if (results.length > 0) yield results;
    const name = body.cursor?.name;
    if (results.length < pageSize || !name) return;
    const offset = body.cursor?.offset;
    if (typeof offset === 'number') {
      if (offset <= lastOffset) throw new Error(`ninjaone ${path} cursor did not advance`);
      lastOffset = offset;
    }
    cursor = name;
  }
}

/** Every row of an unpaginated list endpoint (/v2/alerts). */
export async function listAll<T>(ctx: NinjaContext, path: string): Promise<T[]> {
  const body = await ninjaGet<T[]>(ctx, path);
  if (!Array.isArray(body)) throw new Error(`ninjaone ${path} did not answer with a list`);
  return body;
}

/**
 * What a token of the connection's credentials may do, for the connect page's permission check: the
 * scopes NinjaOne granted (the token answer's `scope`) and whether it carries a user's context (it came
 * from a user's authorisation). One token request, nothing else.
 */
export async function tokenGrant(ctx: NinjaContext): Promise<{ scopes: string[]; userContext: boolean }> {
  const { clientId, clientSecret, refreshToken } = credentialsOf(ctx);
  const form: Record<string, string> = refreshToken
    ? { grant_type: 'refresh_token', client_id: clientId, client_secret: clientSecret, refresh_token: rotatedRefreshTokens.get(refreshToken) ?? refreshToken }
    : { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'monitoring management control' };
  const res = await ctx.http.request<TokenResponse & { scope?: string }>({ method: 'POST', url: `${ctx.baseUrl}/ws/oauth/token`, form, retry: false });
  const next = res.body?.refresh_token;
  if (refreshToken && typeof next === 'string' && next && next !== refreshToken) rotatedRefreshTokens.set(refreshToken, next);
  return { scopes: String(res.body?.scope ?? '').split(/\s+/).filter(Boolean), userContext: refreshToken != null };
}
