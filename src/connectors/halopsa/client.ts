/**
 * HTTP access to one Halo instance, declared for the vendor session (vendor-session.ts, which keeps the
 * client-credentials token and renews it): authorised GETs and page-by-page reads of Halo's lists.
 */
import type { SyncContext } from '../types';
import { vendorSession, type SessionContext, type VendorProfile } from '../vendor-session';
import { fieldNamedIn } from '../vendor-errors';
import { messageOf, type VendorDialect } from '../writer-http';

/** Halo's documented largest page (`page_size`: "Maximum size: 100"). */
export const HALO_PAGE_SIZE = 100;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type HaloRecord = Record<string, any>;

/** Auth server per resource server, as GET <base>/api/authinfo told it (see authServer). */
const authServers = new Map<string, string>();

/**
 * Where the token comes from: the `authUrl` credential when given, else the auth server Halo names at
 * GET <base>/api/authinfo (n8n's HaloPSA credential docs), else `<base>/auth`. The authinfo body is
 * not documented; only an absolute http(s) `auth_url`/`authUrl`/`auth_server` string is trusted.
 */
async function authServer(ctx: SessionContext): Promise<string> {
  const explicit = ctx.credentials.authUrl;
  if (explicit) return explicit.replace(/\/$/, '');
  const known = authServers.get(ctx.baseUrl);
  if (known) return known;
  let found: string | null = null;
  try {
    // Before any token: the discovery call carries no credentials.
    const res = await vendorSession({ connector: 'halopsa', auth: { kind: 'none' } }, ctx).send<Record<string, unknown> | null>({ path: '/api/authinfo', read: false });
    const body = res && typeof res === 'object' ? res : {};
    const candidate = [body.auth_url, body.authUrl, body.auth_server].find((v) => typeof v === 'string' && /^https?:\/\//i.test(v));
    found = typeof candidate === 'string' ? candidate.replace(/\/$/, '') : null;
  } catch {
    // An instance without discovery (or a transient failure): the auth server lives under the base URL.
  }
  const server = found ?? `${ctx.baseUrl}/auth`;
  if (found) authServers.set(ctx.baseUrl, server);
  return server;
}

/**
 * Halo's client-credentials grant at its auth server. Halo-hosted instances need the tenant on the token
 * request (n8n's HaloPSA credential docs; CIPP's Get-HaloToken sends `<auth url>/token?tenant=<name>`);
 * self-hosted ones take none.
 */
export const haloProfile: VendorProfile = {
  connector: 'halopsa',
  auth: {
    kind: 'oauth-client-credentials',
    tokenUrl: async (ctx) => `${await authServer(ctx)}/token`,
    query: (ctx) => ({ tenant: ctx.credentials.tenant || undefined }),
    extra: { scope: 'all' },
    defaultLifetimeS: 3600,
  },
};

/**
 * How HaloPSA's writers call it (writer-http.ts): its profile, and its refusal of a write, 400 with its
 * message as a JSON string (or `{message}`).
 */
export const haloDialect: VendorDialect = {
  connector: 'halopsa',
  profile: haloProfile,
  refusedStatuses: [400],
  problems(body, fields, fallback) {
    const message = messageOf(body, 'HaloPSA refused the request.');
    return [{ field: fieldNamedIn(message, fields, fallback), message }];
  },
};

/** GET under <base>/api with the bearer token. */
export async function haloGet<T>(ctx: SyncContext, path: string, query: Record<string, string | number | boolean> = {}): Promise<T> {
  return vendorSession(haloProfile, ctx).get<T>(`/api/${path}`, query);
}

/**
 * Every page of a paged Halo list (`{record_count, <key>: [...]}`), largest page first to last, in id
 * order so that pages stay disjoint while records change between requests.
 */
export function haloPages(
  ctx: SyncContext, path: string, key: string, query: Record<string, string | number | boolean> = {},
): AsyncGenerator<HaloRecord[]> {
  return vendorSession(haloProfile, ctx).pages<HaloRecord>(
    { path: `/api/${path}`, query: { ...query, pageinate: true, order: 'id', orderdesc: false } },
    { style: 'page-number', items: key, page: 'page_no', size: 'page_size', pageSize: HALO_PAGE_SIZE, first: 1, totalItems: 'record_count' },
  );
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
export async function grantedScopes(ctx: SessionContext): Promise<string[]> {
  const body = (await vendorSession(haloProfile, ctx).grant()) as { scope?: string } | null;
  return String(body?.scope ?? '').split(/\s+/).filter(Boolean);
}
