/**
 * Datto RMM API v2 access for the connector, declared for the vendor session (vendor-session.ts keeps the
 * token and pages the lists): the vendor profile (password grant), requests paced under the account's
 * request rate, and how a list pages (its `nextPageUrl`).
 *
 * Tokens (Datto RMM API help, "Datto RMM API", rmm.datto.com/help/en/Content/2SETUP/APIv2.htm; the same
 * request in the public clients listed in docs/vendors.md): `POST <platform origin>/auth/oauth/token`
 * with HTTP Basic `public-client:public` and the form `grant_type=password&username=<API key>&password=<API
 * secret key>`. Tokens live 100 hours (vendor-session.ts keeps and renews them; a 401 gets one fresh
 * token and one more try). The connection's base
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
import { vendorSession, type Paging, type SessionContext, type VendorProfile } from '../vendor-session';

/** `max` of every list: 250 (the value `GET /v2/system/pagination` reports, docs/vendors.md). */
export const DATTO_PAGE_SIZE = 250;

type Query = Record<string, string | number | boolean | undefined>;

// --- the profile ----------------------------------------------------------------------------------

/** `https://x-api.centrastage.net/api` -> `https://x-api.centrastage.net/auth/oauth/token`. */
export function tokenUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '').replace(/\/api$/, '')}/auth/oauth/token`;
}

/** The password grant with the fixed public client; 100-hour tokens (see the header). */
const dattoAuth: VendorProfile['auth'] = {
  kind: 'password-grant', username: 'apiKey', password: 'apiSecret',
  tokenUrl: (ctx) => tokenUrl(ctx.baseUrl), basicClient: { username: 'public-client', password: 'public' }, defaultLifetimeS: 100 * 3600,
};

/** Every call but the rate check is paced (see below). */
export const dattoProfile: VendorProfile = { connector: 'dattormm', auth: dattoAuth, throttling: { pace: (ctx) => paced(ctx) } };
/** The rate check itself: not paced again (it is counted by the pace that asked for it). */
const rateProfile: VendorProfile = { connector: 'dattormm', auth: dattoAuth };

// --- pacing under the account's request rate -------------------------------------------------------

/** Share of the vendor's cut-off (90 % of the limit) we let ourselves reach. */
const PACE_SHARE = 0.9;
/** Ask the vendor's own count after this many of our requests (and at least once a window). */
const RATE_CHECK_EVERY = 50;

interface Pace { sent: number[]; windowMs: number; limit: number; cutOff: number; sinceCheck: number; checkedAt: number; accountAhead: number }
const paces = new Map<string, Pace>();

function paceOf(ctx: SessionContext): Pace {
  const key = `${ctx.baseUrl}\n${ctx.credentials.apiKey ?? ''}`;
  let p = paces.get(key);
  if (!p) paces.set(key, (p = { sent: [], windowMs: 60_000, limit: 600, cutOff: 0.9, sinceCheck: RATE_CHECK_EVERY, checkedAt: 0, accountAhead: 0 }));
  return p;
}

const ceiling = (p: Pace) => Math.max(1, Math.floor(p.limit * p.cutOff * PACE_SHARE));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until one more request keeps this connection, and the account as last reported, under the ceiling. */
async function paced(ctx: SessionContext): Promise<void> {
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
async function checkRate(ctx: SessionContext, p: Pace): Promise<void> {
  p.sinceCheck = 0;
  p.checkedAt = Date.now();
  p.sent.push(Date.now());
  const rate = await vendorSession(rateProfile, ctx).get<Record<string, unknown>>('/v2/system/request_rate').catch(() => null);
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

/** An authenticated, paced GET of `<baseUrl><path>`. */
export async function dattoGet<T>(ctx: SessionContext, path: string, query: Query = {}): Promise<T> {
  return vendorSession(dattoProfile, ctx).get<T>(path, query);
}

/** A write (PUT/POST), sent once: the vendor.write job decides what is retried (after a look-up). */
export async function dattoWrite<T>(ctx: SessionContext, method: 'PUT' | 'POST', path: string, json: unknown): Promise<T> {
  return vendorSession(dattoProfile, ctx).send<T>({ method, path, json });
}

/**
 * How a Datto RMM list pages, its rows under `field`: each `nextPageUrl` (on the connection's own origin
 * only), at most totalCount/pageSize + 1 pages. `pageSize` must be the size the first request asks for
 * (`max`, or the activity log's `size`); default DATTO_PAGE_SIZE.
 */
export function dattoPaging(field: string, opts: { pageSize?: number } & Pick<Paging, 'maxPages' | 'limitError'> = {}): Paging {
  const { pageSize = DATTO_PAGE_SIZE, ...bound } = opts;
  return { style: 'next-url', items: field, next: 'pageDetails.nextPageUrl', total: 'pageDetails.totalCount', pageSize, offOrigin: 'refuse', ...bound };
}

/** Pages of a list answered as `{pageDetails, <field>: [...]}` (see dattoPaging). */
export function pages<T>(ctx: SessionContext, path: string, field: string, query: Query = {}): AsyncGenerator<T[]> {
  return vendorSession(dattoProfile, ctx).pages<T>({ path, query: { ...query, max: DATTO_PAGE_SIZE } }, dattoPaging(field));
}
