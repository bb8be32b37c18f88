/**
 * HTTP access to one Halo instance: the client-credentials token (cached until shortly before it
 * expires, per base URL and client id), authorised GETs, and page-by-page reads of Halo's lists.
 */
import { createHash } from 'node:crypto';
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';
import { fieldNamedIn } from '../vendor-errors';
import { messageOf, type VendorDialect } from '../writer-http';

/** Halo's documented largest page (`page_size`: "Maximum size: 100"). */
export const HALO_PAGE_SIZE = 100;
/** Renew a token this long before Halo says it expires. */
const EXPIRY_MARGIN_MS = 60_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HaloRecord = Record<string, any>;

interface CachedToken {
  accessToken: string;
  expiresAt: number;
}

/** The one piece of state a connector keeps: tokens, shared by concurrent syncs of one connection. */
const tokenCache = new Map<string, Promise<CachedToken>>();

/** What a token needs: the read side's SyncContext and the write side's WriteContext both fit. */
export type HaloAuthContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;

function credentialsOf(ctx: HaloAuthContext): { clientId: string; clientSecret: string } {
  const { clientId, clientSecret } = ctx.credentials;
  if (!clientId || !clientSecret) throw new Error('HaloPSA credentials need clientId and clientSecret');
  return { clientId, clientSecret };
}

/** Auth server per resource server, as GET <base>/api/authinfo told it (see authServer). */
const authServers = new Map<string, string>();

/**
 * Where the token comes from: the `authUrl` credential when given, else the auth server Halo names at
 * GET <base>/api/authinfo (n8n's HaloPSA credential docs), else `<base>/auth`. The authinfo body is
 * not documented; only an absolute http(s) `auth_url`/`authUrl`/`auth_server` string is trusted.
 */
async function authServer(ctx: HaloAuthContext): Promise<string> {
  const explicit = ctx.credentials.authUrl;
  if (explicit) return explicit.replace(/\/$/, '');
  const known = authServers.get(ctx.baseUrl);
  if (known) return known;
  let found: string | null = null;
  try {
    const res = await ctx.http.request<Record<string, unknown>>({ url: `${ctx.baseUrl}/api/authinfo`, retry: false });
    const body = res.body && typeof res.body === 'object' ? res.body : {};
    const candidate = [body.auth_url, body.authUrl, body.auth_server].find((v) => typeof v === 'string' && /^https?:\/\//i.test(v));
    found = typeof candidate === 'string' ? candidate.replace(/\/$/, '') : null;
  } catch {
    // An instance without discovery (or a transient failure): the auth server lives under the base URL.
  }
  const server = found ?? `${ctx.baseUrl}/auth`;
  if (found) authServers.set(ctx.baseUrl, server);
  return server;
}

async function requestToken(ctx: HaloAuthContext): Promise<CachedToken> {
  const { clientId, clientSecret } = credentialsOf(ctx);
  const res = await ctx.http.request<{ access_token?: string; expires_in?: number }>({
    method: 'POST',
    url: `${await authServer(ctx)}/token`,
    // Halo-hosted instances need the tenant on the token request (n8n's HaloPSA credential docs; CIPP's
    // Get-HaloToken sends `<auth url>/token?tenant=<name>`); self-hosted ones take none.
    query: { tenant: ctx.credentials.tenant || undefined },
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'all' },
    // Asking for a token changes nothing at Halo, so throttling may be retried.
    retry: true,
  });
  const token = res.body?.access_token;
  if (!token) throw new Error('HaloPSA token response carried no access_token');
  const ttlMs = (typeof res.body.expires_in === 'number' ? res.body.expires_in : 3600) * 1000;
  return { accessToken: token, expiresAt: Date.now() + Math.max(0, ttlMs - EXPIRY_MARGIN_MS) };
}

/** The cached bearer token (read and write side share it); `forceNew` after a 401. */
export async function accessToken(ctx: HaloAuthContext, forceNew = false): Promise<string> {
  // The secret is part of the key (as for NinjaOne and Pax8): a wrong or rotated secret must not reuse a token it never earned.
  const { clientId, clientSecret } = credentialsOf(ctx);
  const key = `${ctx.baseUrl}|${ctx.credentials.tenant ?? ''}|${clientId}|${createHash('sha256').update(clientSecret).digest('hex').slice(0, 16)}`;
  let pending = tokenCache.get(key);
  if (pending && !forceNew) {
    const cached = await pending.catch(() => null);
    if (cached && cached.expiresAt > Date.now()) return cached.accessToken;
    if (tokenCache.get(key) !== pending) return accessToken(ctx); // another caller already renewed it
  }
  pending = requestToken(ctx);
  tokenCache.set(key, pending);
  pending.catch(() => tokenCache.delete(key));
  return (await pending).accessToken;
}

/**
 * How HaloPSA's writers call it (writer-http.ts): the cached bearer token, one fresh token after a 401,
 * and its refusal of a write, 400 with its message as a JSON string (or `{message}`).
 */
export const haloDialect: VendorDialect = {
  connector: 'halopsa',
  headers: async (ctx, fresh) => ({ authorization: `Bearer ${await accessToken(ctx, fresh)}` }),
  renewsTokenOn401: true,
  refusedStatuses: [400],
  problems(body, fields, fallback) {
    const message = messageOf(body, 'HaloPSA refused the request.');
    return [{ field: fieldNamedIn(message, fields, fallback), message }];
  },
};

/** GET under <base>/api with the bearer token; a 401 (token revoked early) gets one fresh token. */
export async function haloGet<T>(ctx: SyncContext, path: string, query: Record<string, string | number | boolean> = {}): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const token = await accessToken(ctx, attempt > 0);
    try {
      const res = await ctx.http.request<T>({
        url: `${ctx.baseUrl}/api/${path}`,
        headers: { authorization: `Bearer ${token}` },
        query,
      });
      return res.body;
    } catch (err) {
      if (attempt === 0 && err instanceof VendorHttpError && err.status === 401) continue;
      throw err;
    }
  }
}

/**
 * Every page of a paged Halo list (`{record_count, <key>: [...]}`), largest page first to last, in id
 * order so that pages stay disjoint while records change between requests.
 */
export async function* haloPages(
  ctx: SyncContext, path: string, key: string, query: Record<string, string | number | boolean> = {},
): AsyncGenerator<HaloRecord[]> {
  for (let pageNo = 1; ; pageNo++) {
    const body = await haloGet<HaloRecord>(ctx, path, {
      ...query, pageinate: true, page_size: HALO_PAGE_SIZE, page_no: pageNo, order: 'id', orderdesc: false,
    });
    const rows: unknown = body?.[key];
    if (!Array.isArray(rows)) throw new Error(`HaloPSA ${path} answered without a ${key} list`);
    if (rows.length > 0) yield rows as HaloRecord[];
    const total = typeof body.record_count === 'number' ? body.record_count : null;
    if (rows.length < HALO_PAGE_SIZE || (total != null && pageNo * HALO_PAGE_SIZE >= total)) return;
  }
}

/** A lookup list Halo answers as a plain array (Status, Priority, ...). */
export async function haloArray(ctx: SyncContext, path: string, query: Record<string, string | number | boolean> = {}): Promise<HaloRecord[]> {
  const body = await haloGet<unknown>(ctx, path, query);
  if (!Array.isArray(body)) throw new Error(`HaloPSA ${path} did not answer a list`);
  return body as HaloRecord[];
}

/** Halo times are UTC without a zone suffix; one without a zone is read as UTC. */
export function parseHaloTime(value: unknown): Date | null {
  if (typeof value !== 'string' || value === '') return null;
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const d = new Date(hasZone || !value.includes('T') ? value : `${value}Z`);
  // Halo writes 1900-01-01 for "no date".
  return Number.isNaN(d.getTime()) || d.getUTCFullYear() <= 1900 ? null : d;
}

/** A `since` watermark as Halo takes it in lastupdatefromdate: UTC, no zone suffix. */
export function haloQueryTime(d: Date): string {
  return d.toISOString().slice(0, 23);
}

/**
 * The scopes HaloPSA grants the connection's application (the token answer's `scope`), for the connect
 * page's permission check: one token request with scope=all, nothing else.
 */
export async function grantedScopes(ctx: HaloAuthContext): Promise<string[]> {
  const { clientId, clientSecret } = credentialsOf(ctx);
  const res = await ctx.http.request<{ scope?: string }>({
    method: 'POST', url: `${await authServer(ctx)}/token`, query: { tenant: ctx.credentials.tenant || undefined },
    form: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'all' }, retry: false,
  });
  return String(res.body?.scope ?? '').split(/\s+/).filter(Boolean);
}
