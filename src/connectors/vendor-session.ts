/**
 * One vendor session for every connector: a connector DECLARES how its vendor is spoken to (a
 * `VendorProfile`: auth kind, token URL and answer, throttling signals) and how each list pages (a
 * `Paging`), and this module does the rest for reads and writes alike:
 * - the token cache: one token per connection (connector, base URL and a hash of every credential, so
 *   a rotated secret gets its own), asked for by one caller at a time (single flight), renewed by ONE
 *   rule (`renewAt`: a minute before it expires, or a tenth of its life when that is shorter);
 * - 401 -> renew -> resend once (a 401 comes before the vendor does anything, so a write may be resent);
 * - paging, as an async iterator of pages (each a non-empty array of the records received; a row that is
 *   no record, a null, is dropped here), every style bounded: a vendor that does not move on fails;
 * - 429/503 through vendor-http.ts (retries of reads, Retry-After, the budget and the write fence), plus
 *   the throttling signals a profile declares (a pace before every request; writes resent after a 429
 *   where the vendor's 429 refuses before any processing).
 *
 * Usage (a connector's client.ts):
 *
 *   export const acmeProfile: VendorProfile = {
 *     connector: 'acme',
 *     auth: { kind: 'oauth-client-credentials', tokenUrl: '/oauth/token', extra: { scope: 'all' } },
 *   };
 *   const s = vendorSession(acmeProfile, ctx);                 // ctx: SyncContext or WriteContext
 *   const one = await s.get<Ticket>('/tickets/1');
 *   const made = await s.send<Ticket>({ method: 'POST', path: '/tickets', json: draft });
 *   for await (const rows of s.pages<Ticket>({ path: '/tickets', query: { status: 'open' } },
 *     { style: 'page-number', items: 'data', page: 'page', size: 'pageSize', pageSize: 100, first: 1 })) { ... }
 *
 * A JWT exchange (N-central: a user's API JWT POSTed to /api/auth/authenticate for an access and a
 * refresh token, renewed at /api/auth/refresh) is one more auth kind, `jwt-exchange`.
 */
import { createHash } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { ConnectorName } from '../../entities/tenancy';
import type { SyncContext } from './types';
import { VendorHttpError, type VendorRequest, type VendorResponse } from './vendor-http';
import { credentialRotated } from './credential-rotation';

/** What every call needs: the read side's SyncContext and the write side's WriteContext both fit. */
export type SessionContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;

export type Query = Record<string, string | number | boolean | undefined | null>;

/** A URL: a path under the connection's base URL (starting with `/`), an absolute URL, or computed. */
export type UrlRule = string | ((ctx: SessionContext) => string | Promise<string>);

/** Where a token answer keeps its parts (dotted paths into the JSON body). */
export interface TokenFields {
  access: string;
  /** Seconds the access token lives. */
  expiresIn?: string;
  /** When the access token expires, as an ISO time (an `...ExpireOn` member), where the vendor names no lifetime. */
  expiresAt?: string;
  refresh?: string;
  refreshExpiresIn?: string;
}

/** RFC 6749 names: access_token, expires_in, refresh_token. */
export const OAUTH_TOKEN_FIELDS: TokenFields = { access: 'access_token', expiresIn: 'expires_in', refresh: 'refresh_token' };

/** What the OAuth kinds share: where and how the grant is sent, and how the answer reads. */
export interface OAuthGrant {
  tokenUrl: UrlRule;
  /**
   * How the grant's parameters travel: a form (RFC 6749), a JSON body, or multipart/form-data where the
   * vendor's description documents only that. Default form.
   */
  encoding?: 'form' | 'json' | 'multipart';
  /** Credential names of the client; defaults `clientId`, `clientSecret`. */
  clientId?: string;
  clientSecret?: string;
  /** A fixed HTTP Basic client (Datto RMM's `public-client:public`) instead of the connection's client id and secret. */
  basicClient?: { username: string; password: string };
  /** The grant names no client (a user signs in with its own name and password). */
  clientless?: boolean;
  /** Fixed grant parameters (scope, audience). */
  extra?: Record<string, string>;
  /** Grant parameters taken from the connection's credentials: parameter name -> credential name (a tenant or company name). */
  credentialParams?: Record<string, string>;
  /** The vendor's own spelling of the RFC 6749 parameter names (`GrantType`, `UserName`, `Password`). */
  paramNames?: Record<string, string>;
  /** A refusal the vendor answers with a 2xx (an envelope error): the error to throw, or null when the answer is a token. */
  refusedAnswer?: (body: unknown) => unknown;
  /** Query parameters of the token request (a tenant name), from the connection. */
  query?: (ctx: SessionContext) => Query;
  /** Lifetime when the answer names none. */
  defaultLifetimeS: number;
  answer?: TokenFields;
  /** The vendor's refusal of a grant as the error to throw (a revoked authorisation, in words). */
  refused?: (err: VendorHttpError, grant: 'client_credentials' | 'refresh_token' | 'password' | 'jwt') => unknown;
}

export type VendorAuth =
  /** No credentials on requests (a public endpoint, a test). */
  | { kind: 'none' }
  /** HTTP Basic from two credentials (by name). */
  | { kind: 'basic'; username: string; password: string }
  /** The same headers on every request (API keys, integration codes). */
  | { kind: 'headers'; headers: (credentials: Record<string, string>) => Record<string, string> }
  | ({ kind: 'oauth-client-credentials' } & OAuthGrant)
  /**
   * A refresh token the MSP's authorisation (authorization-code grant) left in the connection's
   * `refreshToken` credential (name overridable); a rotated one is kept in this process at once and
   * announced through credential-rotation.ts. Without one, client credentials when `orClientCredentials`.
   */
  | ({ kind: 'oauth-refresh-token'; refreshToken?: string; orClientCredentials?: boolean } & OAuthGrant)
  /** The resource-owner password grant: `username`/`password` name the credentials sent. */
  | ({ kind: 'password-grant'; username: string; password: string } & OAuthGrant)
  /**
   * A user's JWT (credential `jwt`) POSTed as `Authorization: Bearer <jwt>` to `authenticateUrl`, which
   * answers an access and a refresh token; the refresh token renews the access token at `refreshUrl`,
   * sent as `refreshSend` says (bearer header, the whole text body, or one JSON property); when the
   * refresh is refused (the server restarted), the JWT is exchanged again.
   */
  | {
      kind: 'jwt-exchange';
      jwt?: string;
      authenticateUrl: UrlRule;
      refreshUrl: UrlRule;
      refreshSend: 'bearer' | 'text' | { json: string };
      answer: TokenFields;
      defaultLifetimeS: number;
      refused?: OAuthGrant['refused'];
    };

export interface VendorProfile {
  connector: ConnectorName;
  auth: VendorAuth;
  /** How a token goes on a request; default `Authorization: Bearer <token>`. */
  bearer?: (token: string) => Record<string, string>;
  /** Throttling signals beyond 429/503 with Retry-After, which vendor-http.ts handles for everyone. */
  throttling?: {
    /** Waits before every request (a vendor's rolling-window limit our budget cannot see). */
    pace?: (ctx: SessionContext) => Promise<void>;
    /** The vendor's 429 refuses before any processing, so a write answered 429 is resent (vendor-http limits). */
    resendThrottledWrites?: boolean;
    /** The waits the vendor documents before each retry of a 429/503 (the last repeats); Retry-After still wins. */
    backoffMs?: readonly number[];
  };
  /**
   * A refusal the vendor answers inside a 2xx (an envelope's `Success: false`, an error message with 200 OK):
   * the status it stands for and its message, or null for a real answer. It is thrown as that status's
   * VendorHttpError (with the body), so writers' refusals and throttling read it as any other.
   */
  errorInBody?: (body: unknown) => { status: number; message: string } | null;
}

/** One request of a session; `path` is under the connection's base URL, `url` absolute (a next-page link). */
export interface SessionRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path?: string;
  url?: string;
  query?: Query;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** Safe to repeat (a read, Autotask's POST <Entity>/query included); default: GET only. False: sent once (a probe answers at once). */
  read?: boolean;
}

/** What to do with a next-page link on another origin: refuse it, or keep its path and query on ours. */
export type OffOrigin = 'refuse' | 'rebase';

interface PagingCommon {
  /** Dotted path of the rows in the answer; null: the answer is the array. */
  items: string | null;
  /**
   * At most this many pages; when more remain, `limitError()` is thrown (default: a plain Error). Default:
   * ten million rows in pages of the style's size, at most 100,000 pages.
   */
  maxPages?: number;
  limitError?: () => unknown;
}

export type Paging = PagingCommon & (
  /** RFC 8288 `Link: <...>; rel="next"` (ConnectWise); the link carries the query; followed past an empty page. */
  | { style: 'link-header'; offOrigin?: OffOrigin }
  /**
   * A next-page URL in the body (`next`, a dotted path: Autotask's and Datto RMM's
   * `pageDetails.nextPageUrl`), fetched with GET, past an empty page too; `total` bounds the pages at
   * total/pageSize + 1.
   */
  | { style: 'next-url'; next: string; total?: string; pageSize?: number; offOrigin?: OffOrigin }
  /**
   * A page number and size (`first`: 0 or 1), until an empty or short page, `totalPages` or `totalItems`;
   * a page that repeats one already read (the vendor ignores `page`) throws.
   */
  | { style: 'page-number'; page: string; size: string; pageSize: number; first: 0 | 1; totalPages?: string; totalItems?: string }
  /** An offset and size, until an empty or short page or `total`; a page that repeats one already read throws. */
  | { style: 'offset'; offset: string; size: string; pageSize: number; total?: string }
  /**
   * The last id of a page as the next page's parameter (NinjaOne's `after`), until a short page; `down`:
   * ids descend and the smallest is sent (NinjaOne's `olderThan`). The id must move, else it throws.
   */
  | { style: 'after-id'; after: string; size: string; pageSize: number; id: string; down?: boolean }
  /**
   * A server cursor named in the body (`cursor`, dotted) sent back as `param`, until a short page or none;
   * a cursor state (name, and `offset` where given) that comes back throws.
   */
  | { style: 'cursor'; param: string; size: string; pageSize: number; cursor: string; offset?: string }
);

// --- tokens ---------------------------------------------------------------------------------------

interface Token {
  access: string;
  renewAt: number;
  refresh: { token: string; renewAt: number } | null;
}

/** The one renewal rule: stop using a token a minute before it expires, or a tenth of its life if shorter. */
export function renewAt(lifetimeS: number, now = Date.now()): number {
  const lifeMs = Math.max(0, lifetimeS) * 1000;
  return now + lifeMs - Math.min(60_000, lifeMs / 10);
}

const held = new Map<string, Token>();
/** The token request under way per connection, with its raw answer (what `grant()` returns). */
const asking = new Map<string, Promise<{ token: Token; body: unknown }>>();
/** Refresh tokens a vendor answered with, by the connection credential they replace. */
const rotated = new Map<string, string>();

/** Forgets every cached token (tests). */
export function clearSessionTokens(): void {
  held.clear();
  asking.clear();
  rotated.clear();
}

function tokenKey(profile: VendorProfile, ctx: SessionContext): string {
  const creds = Object.keys(ctx.credentials).sort().map((k) => `${k}=${ctx.credentials[k]}`).join('\n');
  return `${profile.connector}\n${ctx.baseUrl}\n${createHash('sha256').update(creds).digest('hex').slice(0, 24)}`;
}

export function dig(body: unknown, path: string): unknown {
  let v: unknown = body;
  for (const part of path.split('.')) {
    if (v == null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

async function resolveUrl(rule: UrlRule, ctx: SessionContext): Promise<string> {
  const u = typeof rule === 'function' ? await rule(ctx) : rule;
  return /^https?:\/\//i.test(u) ? u : `${ctx.baseUrl}${u}`;
}

function need(ctx: SessionContext, profile: VendorProfile, ...names: string[]): string[] {
  const missing = names.filter((n) => !ctx.credentials[n]);
  if (missing.length) throw new Error(`${profile.connector} connection needs credentials ${names.join(' and ')}`);
  return names.map((n) => ctx.credentials[n]);
}

const basicHeader = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

/** An ISO date and time with no zone (`2026-01-05T13:00:00`, fractions allowed). */
const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/**
 * An expiry time in ms: a time with no zone is UTC (Kaseya BMS's `AccessTokenExpireOn` may carry none),
 * never the server's local time, which Date.parse would read it as.
 */
function expiryTime(value: unknown): number {
  const text = String(value ?? '').trim();
  return Date.parse(ZONELESS.test(text) ? `${text.replace(' ', 'T')}Z` : text);
}

function readToken(profile: VendorProfile, body: unknown, fields: TokenFields, defaultLifetimeS: number): Token {
  const access = dig(body, fields.access);
  if (typeof access !== 'string' || !access) throw new Error(`${profile.connector} token endpoint answered without ${fields.access}`);
  const num = (p?: string) => { const v = p ? Number(dig(body, p)) : NaN; return Number.isFinite(v) && v > 0 ? v : null; };
  const until = fields.expiresAt ? expiryTime(dig(body, fields.expiresAt)) : NaN;
  const left = Number.isFinite(until) && until > Date.now() ? (until - Date.now()) / 1000 : null;
  const refresh = fields.refresh ? dig(body, fields.refresh) : undefined;
  return {
    access,
    renewAt: renewAt(num(fields.expiresIn) ?? left ?? defaultLifetimeS),
    refresh: typeof refresh === 'string' && refresh ? { token: refresh, renewAt: renewAt(num(fields.refreshExpiresIn) ?? defaultLifetimeS) } : null,
  };
}

type GrantKind = 'client_credentials' | 'refresh_token' | 'password' | 'jwt';

/** The token request of an OAuth kind: its grant and parameters. */
function oauthGrant(ctx: SessionContext, profile: VendorProfile, a: Extract<VendorAuth, OAuthGrant>): { grant: GrantKind; params: Record<string, string>; refreshCredential: string | null } {
  const noClient = a.basicClient || a.clientless;
  const [clientId, clientSecret] = noClient ? [] : need(ctx, profile, a.clientId ?? 'clientId', a.clientSecret ?? 'clientSecret');
  const client: Record<string, string> = noClient ? {} : { client_id: clientId, client_secret: clientSecret };
  if (a.kind === 'password-grant') {
    const [username, password] = need(ctx, profile, a.username, a.password);
    return { grant: 'password', params: { grant_type: 'password', username, password, ...client, ...a.extra }, refreshCredential: null };
  }
  if (a.kind === 'oauth-refresh-token') {
    const stored = ctx.credentials[a.refreshToken ?? 'refreshToken'];
    if (stored) {
      const current = rotated.get(stored) ?? stored;
      return { grant: 'refresh_token', params: { grant_type: 'refresh_token', ...client, refresh_token: current }, refreshCredential: stored };
    }
    if (!a.orClientCredentials) throw new Error(`${profile.connector} connection needs credential ${a.refreshToken ?? 'refreshToken'}`);
  }
  return { grant: 'client_credentials', params: { grant_type: 'client_credentials', ...client, ...a.extra }, refreshCredential: null };
}

/** One OAuth token request; the raw answer too (granted scopes). */
async function oauthToken(ctx: SessionContext, profile: VendorProfile, a: Extract<VendorAuth, OAuthGrant>, retry: boolean): Promise<{ token: Token; body: unknown }> {
  const { grant, params: named, refreshCredential } = oauthGrant(ctx, profile, a);
  const params = { ...named };
  for (const [param, credential] of Object.entries(a.credentialParams ?? {})) params[param] = need(ctx, profile, credential)[0];
  const sent = Object.fromEntries(Object.entries(params).map(([k, v]) => [a.paramNames?.[k] ?? k, v]));
  const res = await ctx.http.request<unknown>({
    method: 'POST',
    url: await resolveUrl(a.tokenUrl, ctx),
    query: a.query?.(ctx),
    headers: a.basicClient ? { authorization: basicHeader(a.basicClient.username, a.basicClient.password) } : {},
    ...(a.encoding === 'json' ? { json: sent } : a.encoding === 'multipart' ? { multipart: sent } : { form: sent }),
    // Asking for a token changes nothing at the vendor: throttling is retried like a read.
    retry,
  }).catch((err: unknown) => { throw err instanceof VendorHttpError && a.refused ? a.refused(err, grant) : err; });
  const refusal = a.refusedAnswer?.(res.body);
  if (refusal) throw refusal;
  const token = readToken(profile, res.body, a.answer ?? OAUTH_TOKEN_FIELDS, a.defaultLifetimeS);
  const current = params.refresh_token;
  if (refreshCredential && token.refresh && token.refresh.token !== current) {
    rotated.set(refreshCredential, token.refresh.token);
    await credentialRotated({ connector: profile.connector, baseUrl: ctx.baseUrl, credential: a.kind === 'oauth-refresh-token' ? (a.refreshToken ?? 'refreshToken') : 'refreshToken', previous: current, next: token.refresh.token });
  }
  return { token, body: res.body };
}

type JwtAuth = Extract<VendorAuth, { kind: 'jwt-exchange' }>;

async function jwtToken(ctx: SessionContext, profile: VendorProfile, a: JwtAuth, last: Token | undefined): Promise<{ token: Token; body: unknown }> {
  const refreshable = last?.refresh && last.refresh.renewAt > Date.now() ? last.refresh.token : null;
  if (refreshable) {
    const send = a.refreshSend;
    const req: VendorRequest = {
      method: 'POST', url: await resolveUrl(a.refreshUrl, ctx), retry: true,
      ...(send === 'bearer' ? { headers: { authorization: `Bearer ${refreshable}` } } : send === 'text' ? { text: refreshable } : { json: { [send.json]: refreshable } }),
    };
    const res = await ctx.http.request<unknown>(req).catch((err: unknown) => {
      // A refused refresh (a restarted server forgets its tokens) means exchanging the JWT again.
      if (err instanceof VendorHttpError && err.status >= 400 && err.status < 500 && err.status !== 429) return null;
      throw err;
    });
    if (res) {
      const token = readToken(profile, res.body, a.answer, a.defaultLifetimeS);
      return { token: { ...token, refresh: token.refresh ?? last!.refresh }, body: res.body };
    }
  }
  const [jwt] = need(ctx, profile, a.jwt ?? 'jwt');
  const res = await ctx.http.request<unknown>({
    method: 'POST', url: await resolveUrl(a.authenticateUrl, ctx), headers: { authorization: `Bearer ${jwt}` }, retry: true,
  }).catch((err: unknown) => { throw err instanceof VendorHttpError && a.refused ? a.refused(err, 'jwt') : err; });
  return { token: readToken(profile, res.body, a.answer, a.defaultLifetimeS), body: res.body };
}

function isTokenAuth(a: VendorAuth): boolean {
  return a.kind !== 'none' && a.kind !== 'basic' && a.kind !== 'headers';
}

async function newToken(profile: VendorProfile, ctx: SessionContext, last: Token | undefined, retry = true): Promise<{ token: Token; body: unknown }> {
  const a = profile.auth;
  if (a.kind === 'jwt-exchange') return jwtToken(ctx, profile, a, last);
  if (a.kind === 'oauth-client-credentials' || a.kind === 'oauth-refresh-token' || a.kind === 'password-grant') return oauthToken(ctx, profile, a, retry);
  throw new Error(`${profile.connector}: auth ${a.kind} has no token`);
}

/**
 * The single flight: the token request under way for the connection, else a new one that every later
 * caller shares until it ends. A failed request is forgotten with it, so the next caller asks again.
 */
function tokenRequest(profile: VendorProfile, ctx: SessionContext, key: string, retry = true): Promise<{ token: Token; body: unknown }> {
  const under = asking.get(key);
  if (under) return under;
  const pending = newToken(profile, ctx, held.get(key), retry).then((r) => {
    held.set(key, r.token);
    return r;
  }).finally(() => {
    if (asking.get(key) === pending) asking.delete(key);
  });
  asking.set(key, pending);
  return pending;
}

/** The connection's token: the held one while it is fresh, else one request shared by every caller. */
async function currentToken(profile: VendorProfile, ctx: SessionContext): Promise<string> {
  const key = tokenKey(profile, ctx);
  const t = held.get(key);
  if (t && t.renewAt > Date.now()) return t.access;
  return (await tokenRequest(profile, ctx, key)).token.access;
}

/** The vendor refused `token` (401): the next caller renews it, unless another already has. */
function refusedToken(profile: VendorProfile, ctx: SessionContext, token: string): void {
  const key = tokenKey(profile, ctx);
  const t = held.get(key);
  if (t?.access === token) held.set(key, { ...t, renewAt: 0 });
}

// --- the session ----------------------------------------------------------------------------------

export interface VendorSession {
  readonly profile: VendorProfile;
  readonly ctx: SessionContext;
  /** One call with the connection's auth; a 401 to a token gets one renewed token and one resend. */
  request<T = unknown>(req: SessionRequest): Promise<VendorResponse<T>>;
  /** The answer's body of `request`. */
  send<T = unknown>(req: SessionRequest): Promise<T>;
  /** GET <baseUrl><path>, its body. */
  get<T = unknown>(path: string, query?: Query): Promise<T>;
  /** Every page of a list: `first` is the first request (a POST query too), `paging` how it goes on. */
  pages<T = Record<string, unknown>>(first: SessionRequest, paging: Paging): AsyncGenerator<T[]>;
  /**
   * A new token asked for once (not retried), kept for later calls; its raw answer (granted scopes). It
   * goes through the single flight: while a renewal is under way its answer is the grant's, so a
   * single-use refresh token is never sent twice.
   */
  grant(): Promise<unknown>;
}

export function vendorSession(profile: VendorProfile, ctx: SessionContext): VendorSession {
  const s: VendorSession = {
    profile,
    ctx,
    request: (req) => sessionRequest(profile, ctx, req),
    send: async (req) => (await sessionRequest(profile, ctx, req)).body as never,
    get: async (path, query) => (await sessionRequest(profile, ctx, { path, query })).body as never,
    pages: (first, paging) => sessionPages(s, first, paging),
    grant: async () => (await tokenRequest(profile, ctx, tokenKey(profile, ctx), false)).body,
  };
  return s;
}

async function authHeaders(profile: VendorProfile, ctx: SessionContext): Promise<Record<string, string>> {
  const a = profile.auth;
  if (a.kind === 'none') return {};
  if (a.kind === 'headers') return a.headers(ctx.credentials);
  if (a.kind === 'basic') {
    const [u, p] = need(ctx, profile, a.username, a.password);
    return { authorization: basicHeader(u, p) };
  }
  const token = await currentToken(profile, ctx);
  return profile.bearer ? profile.bearer(token) : { authorization: `Bearer ${token}` };
}

async function sessionRequest<T>(profile: VendorProfile, ctx: SessionContext, req: SessionRequest): Promise<VendorResponse<T>> {
  const method = req.method ?? 'GET';
  const url = req.url ?? `${ctx.baseUrl}${req.path ?? ''}`;
  const tokens = isTokenAuth(profile.auth);
  for (let tries = 0; tries < 2; tries += 1) {
    await profile.throttling?.pace?.(ctx);
    const auth = await authHeaders(profile, ctx);
    try {
      const res = await ctx.http.request<T>({
        method, url, query: req.url ? undefined : req.query, json: req.json, form: req.form,
        headers: { ...req.headers, ...auth },
        retry: req.read ?? method === 'GET',
        resendThrottled: profile.throttling?.resendThrottledWrites,
        backoffScheduleMs: profile.throttling?.backoffMs,
      });
      const refused = profile.errorInBody?.(res.body);
      if (refused) throw new VendorHttpError(`${profile.connector} answered ${res.status} with a refusal: ${refused.message}`, refused.status, res.body, null, res.attempts);
      return res;
    } catch (err) {
      const renew = tokens && tries === 0 && err instanceof VendorHttpError && err.status === 401;
      if (!renew) throw err;
      const sent = Object.values(auth).find((v) => v.startsWith('Bearer '))?.slice(7);
      refusedToken(profile, ctx, sent ?? (await currentToken(profile, ctx)));
    }
  }
  throw new Error('unreachable');
}

// --- paging ---------------------------------------------------------------------------------------

/** The rows of a page as the vendor sent them (nulls and other non-records included). */
function rowsOf(body: unknown, paging: Paging, where: string): unknown[] {
  const rows = paging.items == null ? body : dig(body, paging.items);
  if (!Array.isArray(rows)) throw new Error(`${where} answered without ${paging.items ?? 'a list'}`);
  return rows;
}

const isRecord = (row: unknown): boolean => row != null && typeof row === 'object' && !Array.isArray(row);

/**
 * Rows that are no record (null, a number, a string, a list) are dropped here, in one place, so no
 * connector's mapper stops a whole resource on one; how many is told on the current span (the sync's
 * trace), naming the call.
 */
function dropNonRecords(rows: unknown[], connector: string, where: string): unknown[] {
  const kept = rows.filter(isRecord);
  const dropped = rows.length - kept.length;
  if (dropped > 0) trace.getActiveSpan()?.addEvent('vendor rows dropped', { 'msp.connector': connector, 'msp.vendor.call': where, 'msp.vendor.rows_dropped': dropped });
  return kept;
}

function onOrigin(link: string, ctx: SessionContext, how: OffOrigin, where: string): string {
  const base = new URL(ctx.baseUrl);
  const target = new URL(link, base);
  if (target.origin === base.origin) return target.href;
  if (how === 'refuse') throw new Error(`${where}: next page leaves ${base.origin}`);
  return new URL(`${target.pathname}${target.search}`, base.origin).href;
}

/** The URL of the `rel` link (default `next`) in an RFC 8288 Link header, or null. */
export function linkNext(header: string | null, rel = 'next'): string | null {
  if (!header) return null;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (!m) continue;
    const rels = /\brel\s*=\s*"?([^";]+)"?/i.exec(m[2])?.[1].split(/\s+/) ?? [];
    if (rels.includes(rel)) return m[1];
  }
  return null;
}

const numAt = (body: unknown, path?: string): number | null => {
  if (!path) return null;
  const v = Number(dig(body, path));
  return Number.isFinite(v) ? v : null;
};

/** Rows a list may hold before its paging is taken for a vendor that never ends it. */
const MAX_LIST_ROWS = 10_000_000;
/** Pages of a list whose style names no page size (each link is kept besides, so a repeat fails at once). */
const MAX_PAGES = 100_000;

/** The bound of a style when the caller names none: MAX_LIST_ROWS in pages of its size, at most MAX_PAGES. */
function defaultMaxPages(paging: Paging): number {
  const size = 'pageSize' in paging ? paging.pageSize : undefined;
  return size && size > 0 ? Math.min(MAX_PAGES, Math.ceil(MAX_LIST_ROWS / size) + 1) : MAX_PAGES;
}

/** What a page of a numbered style looks like: its size and first and last rows, hashed. */
function pageFingerprint(rows: unknown[]): string {
  const text = `${rows.length}\n${JSON.stringify(rows[0]) ?? ''}\n${JSON.stringify(rows[rows.length - 1]) ?? ''}`;
  return `page:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

interface PagingState {
  /** What the list has shown so far: next-page links, cursor states, numbered pages' fingerprints. */
  seen: Set<string>;
  /** The last id (after-id) or cursor offset sent. */
  mark: number | null;
}

/**
 * The request after a page, or null at the end. `raw` is the page's rows as sent (its size decides a
 * short page), `rows` the records kept of them. `state` carries what a style remembers, so a vendor that
 * does not move on fails, never loops: a link or cursor state that comes back, a numbered page (page
 * number, offset) that repeats one already read (a vendor ignoring the parameter), an id that does not move.
 * Link styles decide on the link alone: an empty page that still links to a next one is followed.
 */
function nextRequest(first: SessionRequest, paging: Paging, res: VendorResponse<unknown>, raw: unknown[], rows: unknown[], n: number, state: PagingState, ctx: SessionContext, where: string): SessionRequest | null {
  const short = 'pageSize' in paging && paging.pageSize != null && raw.length < paging.pageSize;
  const follow = (link: string | null, how: OffOrigin | undefined): SessionRequest | null => {
    if (!link) return null;
    const url = onOrigin(link, ctx, how ?? 'refuse', where);
    if (state.seen.has(url)) throw new Error(`${where}: the next page repeats one already read`);
    state.seen.add(url);
    return { url, headers: first.headers };
  };
  /** A numbered page like one already read: the vendor does not take the page parameter. */
  const notRepeated = () => {
    const print = pageFingerprint(raw);
    if (state.seen.has(print)) throw new Error(`${where}: page ${n} repeats a page already read (the vendor does not move to the next page)`);
    state.seen.add(print);
  };
  switch (paging.style) {
    case 'link-header':
      return follow(linkNext(res.headers.get('link')), paging.offOrigin);
    case 'next-url': {
      const total = numAt(res.body, paging.total);
      if (total != null && paging.pageSize && n >= Math.ceil(total / paging.pageSize) + 1) return null;
      const link = dig(res.body, paging.next);
      return follow(typeof link === 'string' && link ? link : null, paging.offOrigin);
    }
    case 'page-number': {
      const pages = numAt(res.body, paging.totalPages);
      const items = numAt(res.body, paging.totalItems);
      if (raw.length === 0 || short || (pages != null && n >= pages) || (items != null && n * paging.pageSize >= items)) return null;
      notRepeated();
      return { ...first, query: { ...first.query, [paging.page]: paging.first + n, [paging.size]: paging.pageSize } };
    }
    case 'offset': {
      const total = numAt(res.body, paging.total);
      if (raw.length === 0 || short || (total != null && n * paging.pageSize >= total)) return null;
      notRepeated();
      return { ...first, query: { ...first.query, [paging.offset]: n * paging.pageSize, [paging.size]: paging.pageSize } };
    }
    case 'after-id': {
      if (raw.length === 0 || short) return null;
      const ids = rows.map((r) => Number(dig(r, paging.id))).filter(Number.isFinite);
      const mark = ids.length ? (paging.down ? Math.min(...ids) : Number(dig(rows[rows.length - 1], paging.id))) : NaN;
      if (!Number.isFinite(mark) || (state.mark != null && (paging.down ? mark >= state.mark : mark <= state.mark))) throw new Error(`${where}: paging did not advance`);
      state.mark = mark;
      return { ...first, query: { ...first.query, [paging.after]: mark, [paging.size]: paging.pageSize } };
    }
    case 'cursor': {
      const name = dig(res.body, paging.cursor);
      if (raw.length === 0 || short || typeof name !== 'string' || !name) return null;
      const offset = numAt(res.body, paging.offset);
      if (offset != null) {
        if (state.mark != null && offset <= state.mark) throw new Error(`${where}: cursor did not advance`);
        state.mark = offset;
      }
      // The cursor's whole state (its name, and its offset where it has one) must be new.
      const cursorState = `cursor:${name}\n${offset ?? ''}`;
      if (state.seen.has(cursorState)) throw new Error(`${where}: cursor did not advance (the vendor sent back a cursor already read)`);
      state.seen.add(cursorState);
      return { ...first, query: { ...first.query, [paging.param]: name, [paging.size]: paging.pageSize } };
    }
  }
}

/** The first request with the style's own first-page parameters (page number and size, or size only). */
function firstRequest(first: SessionRequest, paging: Paging): SessionRequest {
  switch (paging.style) {
    case 'page-number': return { ...first, query: { ...first.query, [paging.page]: paging.first, [paging.size]: paging.pageSize } };
    case 'offset': return { ...first, query: { ...first.query, [paging.offset]: 0, [paging.size]: paging.pageSize } };
    case 'after-id':
    case 'cursor': return { ...first, query: { ...first.query, [paging.size]: paging.pageSize } };
    default: return first;
  }
}

/** The call a list's errors name: connector, method and path (never a query, which may carry a secret). */
function callName(connector: string, first: SessionRequest): string {
  const path = first.path ?? (first.url ? new URL(first.url).pathname : '');
  return `${connector} ${first.method ?? 'GET'} ${path}`;
}

async function* sessionPages<T>(s: VendorSession, first: SessionRequest, paging: Paging): AsyncGenerator<T[]> {
  const where = callName(s.profile.connector, first);
  const state: PagingState = { seen: new Set<string>(), mark: null };
  const cap = paging.maxPages ?? defaultMaxPages(paging);
  let req: SessionRequest | null = firstRequest(first, paging);
  for (let n = 1; req; n += 1) {
    if (n > cap) throw paging.limitError ? paging.limitError() : new Error(`${where}: more than ${cap} pages`);
    const res: VendorResponse<unknown> = await s.request<unknown>(req);
    const raw = rowsOf(res.body, paging, where);
    const rows = dropNonRecords(raw, s.profile.connector, where);
    if (rows.length > 0) yield rows as T[];
    req = nextRequest(first, paging, res, raw, rows, n, state, s.ctx, where);
  }
}
