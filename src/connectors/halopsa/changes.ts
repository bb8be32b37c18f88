/**
 * "Anything changed since?" for the scheduler (src/sync/freshness.ts): the incremental list itself with
 * one record a page (`page_size=1`), whose `record_count` says how many changed. Halo's
 * `lastupdatefromdate` is inclusive and its stamps have milliseconds, so the probe asks from one
 * millisecond past the watermark. One call instead of the list's lookups and first page.
 */
import type { SyncContext, SyncResource } from '../types';
import { haloGet, haloQueryTime } from './client';

/** The lists the incremental read filters, with the same flags (clients and users: inactive ones too). */
const EVERYONE = { includeactive: true, includeinactive: true };
const LISTS: Partial<Record<SyncResource, { path: string; flags?: Record<string, boolean> }>> = {
  tickets: { path: 'Tickets' }, projects: { path: 'Projects' }, companies: { path: 'Client', flags: EVERYONE }, contacts: { path: 'Users', flags: EVERYONE },
};

export function haloPsaChangedSince(resource: SyncResource, ctx: SyncContext): Promise<boolean> | null {
  const list = LISTS[resource];
  if (!list || !ctx.since) return null;
  const from = haloQueryTime(new Date(ctx.since.getTime() + 1));
  return (async () => {
    const body = await haloGet<{ record_count?: unknown }>(ctx, list.path, { ...list.flags, lastupdatefromdate: from, pageinate: true, page_size: 1, page_no: 1 });
    return typeof body?.record_count !== 'number' || body.record_count > 0;
  })();
}
