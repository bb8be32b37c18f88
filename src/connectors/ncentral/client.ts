/**
 * N-central REST API access for the connector (interim: the vendor session replaces the token and
 * paging code below).
 *
 * Auth ("Managing Authentication", developer.n-able.com; "Set up N-central REST API access",
 * documentation.n-able.com): `POST /api/auth/authenticate` with `Authorization: Bearer <User-API Token>`
 * answers `{tokens: {access: {token, expirySeconds}, refresh: {token, expirySeconds}}}`; every other call
 * carries `Authorization: Bearer <access token>`.
 *
 * Paging (every list: `pageNumber` from 1, `pageSize`; answers `{data, pageNumber, pageSize, totalItems,
 * totalPages}`): we ask for the largest page and stop at `totalPages`.
 */
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';

/** `pageSize` of every list: 1000, the largest the REST API takes ("Device Filters": 1-1000). */
export const NCENTRAL_PAGE_SIZE = 1000;

export type NcContext = Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>;
type Query = Record<string, string | number | boolean | undefined>;

interface Held { value: string; renewAt: number }
const held = new Map<string, Held>();

function jwtOf(ctx: NcContext): string {
  const jwt = ctx.credentials.jwt;
  if (!jwt) throw new Error('ncentral connection needs the credential jwt');
  return jwt;
}

async function exchange(ctx: NcContext): Promise<Held> {
  const res = await ctx.http.request<{ tokens?: { access?: { token?: unknown; expirySeconds?: unknown } } }>({
    method: 'POST', url: `${ctx.baseUrl}/api/auth/authenticate`, headers: { authorization: `Bearer ${jwtOf(ctx)}` }, retry: true,
  });
  const token = res.body?.tokens?.access?.token;
  if (typeof token !== 'string' || !token) throw new Error('ncentral /api/auth/authenticate answered without an access token');
  const life = Number(res.body.tokens?.access?.expirySeconds) || 3600;
  return { value: token, renewAt: Date.now() + life * 900 };
}

async function bearer(ctx: NcContext, fresh: boolean): Promise<string> {
  const key = `${ctx.baseUrl}\n${jwtOf(ctx)}`;
  const h = held.get(key);
  if (h && !fresh && h.renewAt > Date.now()) return h.value;
  const got = await exchange(ctx);
  held.set(key, got);
  return got.value;
}

/** An authenticated GET of `<baseUrl><path>`. */
export async function ncGet<T>(ctx: NcContext, path: string, query: Query = {}): Promise<T> {
  const send = async (fresh: boolean) => (await ctx.http.request<T>({
    method: 'GET', url: `${ctx.baseUrl}${path}`, query, headers: { authorization: `Bearer ${await bearer(ctx, fresh)}` },
  })).body;
  try {
    return await send(false);
  } catch (err) {
    // A token the server no longer knows (expired, or the server restarted): one new exchange, one more try.
    if (err instanceof VendorHttpError && err.status === 401) return send(true);
    throw err;
  }
}

/** Pages of a list answered as `{data: [...], totalPages}`. */
export async function* ncPages<T>(ctx: NcContext, path: string, query: Query = {}): AsyncGenerator<T[]> {
  let total = 1;
  for (let page = 1; page <= total && page <= 10_000; page += 1) {
    const body = await ncGet<{ data?: unknown; totalPages?: unknown }>(ctx, path, { ...query, pageNumber: page, pageSize: NCENTRAL_PAGE_SIZE });
    if (engineError(body)) throw new Error(`ncentral ${path}: ${engineError(body)}`);
    if (!Array.isArray(body?.data)) throw new Error(`ncentral ${path} answered without data`);
    if (body.data.length > 0) yield body.data as T[];
    total = typeof body.totalPages === 'number' ? body.totalPages : 0;
  }
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
