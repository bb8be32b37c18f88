/**
 * Reading ConnectWise lists: API-member Basic auth plus the clientId header, the largest page
 * ConnectWise allows (1000), and the RFC 5988 `Link` header's rel="next" to walk the pages (through the
 * vendor session, vendor-session.ts).
 */
import type { SyncContext } from '../types';
import { fieldNamedIn, requestField } from '../vendor-errors';
import type { VendorDialect } from '../writer-http';
import { vendorSession, type VendorProfile } from '../vendor-session';
import type { FieldProblem } from '../write-types';

export const CW_MAX_PAGE_SIZE = 1000;

/** A record as ConnectWise returns it; fields are read defensively by mapping.ts. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CwNative = Record<string, any>;

export function cwHeaders(credentials: Record<string, string>): Record<string, string> {
  const { companyId, publicKey, privateKey, clientId } = credentials;
  if (!companyId || !publicKey || !privateKey || !clientId) {
    throw new Error('connectwise credentials need companyId, publicKey, privateKey and clientId');
  }
  const basic = Buffer.from(`${companyId}+${publicKey}:${privateKey}`).toString('base64');
  return { authorization: `Basic ${basic}`, clientId };
}

/** ConnectWise's API-member keys: the same headers on every call, nothing to renew. */
export const cwProfile: VendorProfile = { connector: 'connectwise', auth: { kind: 'headers', headers: cwHeaders } };

/**
 * How ConnectWise's writers call it (writer-http.ts): Basic auth with the clientId header, and its
 * refusal of an object, 400 `{code: "InvalidObject", message, errors: [{field, message}]}`.
 */
export const cwDialect: VendorDialect = {
  connector: 'connectwise',
  profile: cwProfile,
  refusedStatuses: [400],
  problems(raw, fields, fallback) {
    const body = (raw ?? {}) as { message?: unknown; errors?: { field?: unknown; message?: unknown }[] };
    const problems: FieldProblem[] = (Array.isArray(body.errors) ? body.errors : []).map((e) => ({
      field: requestField(typeof e.field === 'string' ? e.field : null, fields, fallback),
      message: typeof e.message === 'string' ? e.message : 'ConnectWise refused this field.',
    }));
    if (!problems.length) {
      const message = typeof body.message === 'string' ? body.message : 'ConnectWise refused the request.';
      problems.push({ field: fieldNamedIn(message, fields, fallback), message });
    }
    return problems;
  },
};

/** ConnectWise condition dates: `[2026-01-01T00:00:00Z]` (whole seconds, as its timestamps are). */
export function cwDate(d: Date): string {
  return `[${new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z')}]`;
}

/**
 * Every page of a list, in id order. `path` is relative to ctx.baseUrl (e.g. `/service/tickets`).
 * Each yielded array is one vendor page, exactly as received. The `Link` header's next link carries
 * every query parameter already; one to another origin keeps its path on ours (a proxy that reports
 * its inner host name still works, and credentials never follow a link to another host).
 */
export function cwPages(ctx: SyncContext, path: string, conditions?: string, fields?: string): AsyncGenerator<CwNative[]> {
  const query = { pageSize: CW_MAX_PAGE_SIZE, page: 1, orderBy: 'id asc', ...(conditions ? { conditions } : {}), ...(fields ? { fields } : {}) };
  return vendorSession(cwProfile, ctx).pages<CwNative>({ path, query }, { style: 'link-header', items: null, offOrigin: 'rebase' });
}

/** Every record of a list (for parents whose children are fetched per parent). */
export async function cwAll(ctx: SyncContext, path: string, conditions?: string): Promise<CwNative[]> {
  const all: CwNative[] = [];
  for await (const page of cwPages(ctx, path, conditions)) all.push(...page);
  return all;
}
