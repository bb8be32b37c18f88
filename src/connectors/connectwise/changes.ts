/**
 * "Anything changed since?" for the scheduler (src/sync/freshness.ts): a `GET <list>/count` with the
 * incremental read's last-updated condition, made strict (`>`): ConnectWise stamps are whole seconds and
 * the watermark is the newest stamp stored, so a later change has a later second. The count endpoints
 * are ConnectWise's own (developer docs, REST API 3.0: every list has `/count` taking `conditions`); one
 * call per list instead of the list's first page.
 */
import type { SyncContext, SyncResource } from '../types';
import { cwDate, cwProfile } from './client';
import { vendorSession } from '../vendor-session';

const LISTS: Partial<Record<SyncResource, readonly string[]>> = {
  tickets: ['/service/tickets', '/project/tickets'], companies: ['/company/companies'], contacts: ['/company/contacts'],
  projects: ['/project/projects'], agreements: ['/finance/agreements'],
};

export function connectwiseChangedSince(resource: SyncResource, ctx: SyncContext): Promise<boolean> | null {
  const lists = LISTS[resource];
  if (!lists || !ctx.since) return null;
  const conditions = `lastUpdated > ${cwDate(ctx.since)}`;
  return (async () => {
    for (const path of lists) {
      const body = await vendorSession(cwProfile, ctx).get<{ count?: unknown } | null>(`${path}/count`, { conditions });
      // An answer without a number is taken as a change: the incremental read then decides.
      if (typeof body?.count !== 'number' || body.count > 0) return true;
    }
    return false;
  })();
}
