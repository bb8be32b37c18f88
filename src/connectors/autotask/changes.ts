/**
 * "Anything changed since?" for the scheduler (src/sync/freshness.ts): `POST <Entity>/query/count` with the
 * incremental read's filter made strict (`gt` on lastActivityDate), answering `{queryCount}` (Autotask REST
 * API: every queryable entity has query/count taking the same search object as query). One call instead of
 * the query's first page of 500.
 */
import type { SyncContext, SyncResource } from '../types';
import { vendorSession } from '../vendor-session';
import { autotaskProfile } from './client';

const ENTITIES: Partial<Record<SyncResource, string>> = { tickets: 'Tickets', companies: 'Companies' };

export function autotaskChangedSince(resource: SyncResource, ctx: SyncContext): Promise<boolean> | null {
  const entity = ENTITIES[resource];
  if (!entity || !ctx.since) return null;
  const since = ctx.since;
  return (async () => {
    const body = await vendorSession(autotaskProfile, ctx).send<{ queryCount?: unknown }>({
      method: 'POST', path: `/${entity}/query/count`, read: true,
      json: { filter: [{ op: 'gt', field: 'lastActivityDate', value: since.toISOString() }] },
    });
    return typeof body?.queryCount !== 'number' || body.queryCount > 0;
  })();
}
