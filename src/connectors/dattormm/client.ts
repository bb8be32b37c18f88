/**
 * Datto RMM API v2 access for the connector: OAuth tokens, authenticated requests paced under the
 * account's request rate, and page-based paging.
 *
 * Tokens (Datto RMM API help, "Datto RMM API", rmm.datto.com/help/en/Content/2SETUP/APIv2.htm; the same
 * request in the public clients listed in docs/vendors.md): `POST <platform origin>/auth/oauth/token`
 * with HTTP Basic `public-client:public` and the form `grant_type=password&username=<API key>&password=<API
 * secret key>`. Tokens live 100 hours; a 401 gets one fresh token and one more try. The connection's base
 * URL is the platform's API root, `https://<platform>-api.centrastage.net/api`; the token endpoint sits
 * beside it on the same origin, outside `/api`.
 *
 * Paging (OpenAPI, every list: `page`, `max` query parameters; answers carry `pageDetails {count,
 * totalCount, prevPageUrl, nextPageUrl}`): we ask for `max=250` (first page: no `page`) and follow `nextPageUrl`
 * until it is absent, bounded by `totalCount`.
 *
 * Pacing: the help page limits an account (all its users together) to 600 requests in any 60 seconds and
 * adds a one-second delay to every answer past 90 % of that; 429 past it. Our hourly API budget cannot
 * see a minute, so each connection (in this process) keeps its own requests under the vendor's window,
 * and asks the vendor's own count (`GET /v2/system/request_rate`: accountCount, accountRateLimit,
 * accountCutOffRatio, slidingTimeWindowSizeSeconds) now and then, which also sees other integrations of
 * the account. Requests wait while either count is at our ceiling (PACE_SHARE of the cut-off).
 */
import { createHash } from 'node:crypto';
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';

/** `max` of every list: 250 (the value `GET /v2/system/pagination` reports, docs/vendors.md). */
export const DATTO_PAGE_SIZE = 250;

/** What every call needs: the read side's SyncContext and the write side's WriteContext both fit. */
export type DattoContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;

type Query = Record<string, string | number | boolean | undefined>;

export interface PageDetails { count?: number; totalCount?: number; prevPageUrl?: string | null; nextPageUrl?: string | null }

// --- tokens ---------------------------------------------------------------------------------------

interface Token { value: string; renewAt: number }
const tokens = new Map<string, Token>();
const asking = new Map<string, Promise<Token>>();

function keyAndSecret(ctx: DattoContext): { apiKey: string; apiSecret: string } {
  const { apiKey, apiSecret } = ctx.credentials;
  if (!apiKey || !apiSecret) throw new Error('dattormm connection needs credentials apiKey and apiSecret');
  return { apiKey, apiSecret };
}

/** One token per platform, API key and secret (a rotated secret gets its own). */
function tokenKey(ctx: DattoContext): string {
  const { apiKey, apiSecret } = keyAndSecret(ctx);
  return `${ctx.baseUrl}\n${apiKey}\n${createHash('sha256').update(apiSecret).digest('hex').slice(0, 16)}`;
}

/** `https://x-api.centrastage.net/api` -> `https://x-api.centrastage.net/auth/oauth/token`. */
export function tokenUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '').replace(/\/api$/, '')}/auth/oauth/token`;
}

async function newToken(ctx: DattoContext): Promise<Token> {
  const { apiKey, apiSecret } = keyAndSecret(ctx);
  const res = await ctx.http.request<{ access_token?: unknown; expires_in?: unknown }>({
    method: 'POST',
    url: tokenUrl(ctx.baseUrl),
    headers: { authorization: `Basic ${Buffer.from('public-client:public').toString('base64')}` },
    form: { grant_type: 'password', username: apiKey, password: apiSecret },
    // Asking for a token again is harmless: throttling here is retried like a read.
    retry: true,
  });
  const value = res.body?.access_token;
  if (typeof value !== 'string' || !value) throw new Error('dattormm token endpoint answered without access_token');
  const lifetimeS = typeof res.body.expires_in === 'number' && res.body.expires_in > 0 ? res.body.expires_in : 100 * 3600;
  return { value, renewAt: Date.now() + lifetimeS * 900 }; // renew at 90 % of its life
}

async function bearer(ctx: DattoContext): Promise<string> {
  const key = tokenKey(ctx);
  const held = tokens.get(key);
  if (held && held.renewAt > Date.now()) return held.value;
  let pending = asking.get(key);
  if (!pending) {
    pending = newToken(ctx).finally(() => asking.delete(key));
    asking.set(key, pending);
  }
  const fresh = await pending;
  tokens.set(key, fresh);
  return fresh.value;
}

// --- pacing under the account's request rate -------------------------------------------------------

/** Share of the vendor's cut-off (90 % of the limit) we let ourselves reach. */
const PACE_SHARE = 0.9;
/** Ask the vendor's own count after this many of our requests (and at least once a window). */
const RATE_CHECK_EVERY = 50;

interface Pace { sent: number[]; windowMs: number; limit: number; cutOff: number; sinceCheck: number; checkedAt: number; accountAhead: number }
const paces = new Map<string, Pace>();

function paceOf(ctx: DattoContext): Pace {
  const key = `${ctx.baseUrl}\n${ctx.credentials.apiKey ?? ''}`;
  let p = paces.get(key);
  if (!p) paces.set(key, (p = { sent: [], windowMs: 60_000, limit: 600, cutOff: 0.9, sinceCheck: RATE_CHECK_EVERY, checkedAt: 0, accountAhead: 0 }));
  return p;
}

const ceiling = (p: Pace) => Math.max(1, Math.floor(p.limit * p.cutOff * PACE_SHARE));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until one more request keeps this connection, and the account as last reported, under the ceiling. */
async function paced(ctx: DattoContext): Promise<void> {
  const p = paceOf(ctx);
  if (p.sinceCheck >= RATE_CHECK_EVERY || Date.now() - p.checkedAt > p.windowMs) await checkRate(ctx, p);
  for (let i = 0; i < 10_000; i++) {
    const now = Date.now();
    while (p.sent.length > 0 && p.sent[0] <= now - p.windowMs) p.sent.shift();
    if (p.sent.length + p.accountAhead < ceiling(p)) break;
    // The oldest of ours leaves the window first; what others sent leaves within a window too.
    const wait = p.sent.length > 0 ? p.sent[0] + p.windowMs - now + 1 : Math.ceil(p.windowMs / 10);
    if (p.sent.length === 0) p.accountAhead = Math.max(0, p.accountAhead - Math.ceil(ceiling(p) / 10));
    await sleep(Math.max(1, wait));
  }
  p.sent.push(Date.now());
  p.sinceCheck++;
}

/** `GET /v2/system/request_rate` (OpenAPI operation `get`, RateStatusResponse): the account's count and limits. */
async function checkRate(ctx: DattoContext, p: Pace): Promise<void> {
  p.sinceCheck = 0;
  p.checkedAt = Date.now();
  p.sent.push(Date.now());
  const rate = await send<Record<string, unknown>>(ctx, { method: 'GET', path: '/v2/system/request_rate' }).catch(() => null);
  if (!rate) return;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : null);
  p.windowMs = (num(rate.slidingTimeWindowSizeSeconds) ?? 60) * 1000;
  p.limit = num(rate.accountRateLimit) ?? 600;
  p.cutOff = Math.min(1, num(rate.accountCutOffRatio) ?? 0.9);
  const now = Date.now();
  const ours = p.sent.filter((t) => t > now - p.windowMs).length;
  // The account's count includes ours: what is left is other users' and integrations' use.
  p.accountAhead = Math.max(0, (num(rate.accountCount) ?? 0) - ours);
}

// --- requests --------------------------------------------------------------------------------------

interface Call { method: 'GET' | 'PUT' | 'POST'; path: string; query?: Query; json?: unknown; url?: string }

async function send<T>(ctx: DattoContext, c: Call): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const token = await bearer(ctx);
    try {
      const res = await ctx.http.request<T>({
        method: c.method, url: c.url ?? `${ctx.baseUrl}${c.path}`, query: c.url ? undefined : c.query, json: c.json,
        headers: { authorization: `Bearer ${token}` },
        ...(c.method === 'GET' ? {} : { retry: false }),
      });
      return res.body;
    } catch (err) {
      if (attempt === 0 && err instanceof VendorHttpError && err.status === 401) {
        if (tokens.get(tokenKey(ctx))?.value === token) tokens.delete(tokenKey(ctx));
        continue;
      }
      throw err;
    }
  }
}

/** An authenticated, paced GET of `<baseUrl><path>`, or of a `nextPageUrl` the vendor gave. */
export async function dattoGet<T>(ctx: DattoContext, path: string, query: Query = {}, url?: string): Promise<T> {
  await paced(ctx);
  return send<T>(ctx, { method: 'GET', path, query, url });
}

/** A write (PUT/POST), sent once: the vendor.write job decides what is retried (after a look-up). */
export async function dattoWrite<T>(ctx: DattoContext, method: 'PUT' | 'POST', path: string, json: unknown): Promise<T> {
  await paced(ctx);
  return send<T>(ctx, { method, path, json });
}

/**
 * Pages of a list answered as `{pageDetails, <field>: [...]}`: the first with max=250, then each
 * `nextPageUrl` (on the connection's own origin only), at most totalCount/max + 1 pages.
 */
export async function* pages<T>(ctx: DattoContext, path: string, field: string, query: Query = {}): AsyncGenerator<T[]> {
  let next: string | undefined;
  let bound = Infinity;
  for (let n = 0; n < bound && n < 100_000; n++) {
    const body = await dattoGet<Record<string, unknown> & { pageDetails?: PageDetails }>(ctx, path, { ...query, max: DATTO_PAGE_SIZE }, next);
    const rows = body?.[field];
    if (!Array.isArray(rows)) throw new Error(`dattormm ${path} answered without ${field}`);
    if (rows.length > 0) yield rows as T[];
    const total = body.pageDetails?.totalCount;
    if (typeof total === 'number' && bound === Infinity) bound = Math.ceil(total / DATTO_PAGE_SIZE) + 1;
    const nextUrl = body.pageDetails?.nextPageUrl;
    if (!nextUrl || rows.length === 0) return;
    next = sameOrigin(ctx.baseUrl, nextUrl);
  }
}

/** The vendor's next-page URL, refused if it leaves the connection's origin (the bearer token goes with it). */
export function sameOrigin(baseUrl: string, url: string): string {
  const base = new URL(baseUrl);
  const u = new URL(url, base);
  if (u.origin !== base.origin) throw new Error(`dattormm nextPageUrl leaves ${base.origin}`);
  return u.href;
}
