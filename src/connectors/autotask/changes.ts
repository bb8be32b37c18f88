/**
 * "Anything changed since?" for the scheduler (src/sync/freshness.ts): `POST <Entity>/query/count` with the
 * incremental read's filter made strict (`gt` on lastActivityDate), answering `{queryCount}` (Autotask REST
 * API: every queryable entity has query/count taking the same search object as query). One call instead of
 * the query's first page of 500.
 */
import type { SyncContext, SyncResource } from '../types';
import { autotaskHeaders } from './client';

const ENTITIES: Partial<Record<SyncResource, string>> = { tickets: 'Tickets', companies: 'Companies' };

export function autotaskChangedSince(resource: SyncResource, ctx: SyncContext): Promise<boolean> | null {
  const entity = ENTITIES[resource];
  if (!entity || !ctx.since) return null;
  const since = ctx.since;
  return (async () => {
    const res = await ctx.http.request<{ queryCount?: unknown }>({
      method: 'POST', url: `${ctx.baseUrl}/${entity}/query/count`, headers: autotaskHeaders(ctx.credentials), retry: true,
      json: { filter: [{ op: 'gt', field: 'lastActivityDate', value: since.toISOString() }] },
    });
    return typeof res.body?.queryCount !== 'number' || res.body.queryCount > 0;
  })();
}
