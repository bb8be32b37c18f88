/**
 * How often each resource of a connection is checked (docs/architecture.md, Freshness). Pure: given what
 * the sync states say of the last checks and the connection's hourly budget, it answers each resource's
 * interval, and the connection's tick (how often the scheduler looks for due resources).
 *
 * - Cadence: resources that change all day and carry events (tickets, devices, alerts) are hot; the
 *   catalogue, companies, contacts, agreements and lists are cold.
 * - Change rate: a check that found a change brings the resource back to its cadence's shortest interval;
 *   each quiet check stretches it by half, up to the cadence's longest. A hot resource is never left
 *   longer than HOT.maxMs, so a change reaches the feed within about that plus one sync.
 * - Budget: scheduled checks may plan on SCHEDULED_SHARE (half) of the connection's hourly budget (the rest
 *   is for writes, which go first at the gate, on-demand syncs and other traffic). A check costs what the last one cost (a "changed
 *   since?" probe: one call a query; a full read: its pages); when the plan would spend more, every
 *   interval is stretched by the same factor. The budget gate (src/budget) still holds every call.
 */
import type { SyncResource } from '../connectors/types';

export type Cadence = 'hot' | 'cold';

const HOT: ReadonlySet<SyncResource> = new Set<SyncResource>(['tickets', 'devices', 'incidents']);

export function cadenceOf(resource: SyncResource): Cadence {
  return HOT.has(resource) ? 'hot' : 'cold';
}

/** Shortest and longest interval of each cadence. */
export const CADENCE_BOUNDS: Record<Cadence, { minMs: number; maxMs: number }> = {
  hot: { minMs: 5_000, maxMs: 10_000 },
  cold: { minMs: 5 * 60_000, maxMs: 30 * 60_000 },
};

/** Share of the hourly budget the scheduled checks may plan to use. */
export const SCHEDULED_SHARE = 0.5;

/** A quiet check stretches the interval by this factor. */
const QUIET_STRETCH = 1.5;

export interface ResourceHistory {
  resource: SyncResource;
  /** Checks in a row that found nothing new (0: the last one found a change, or none ran yet). */
  quietChecks: number;
  /** Vendor calls the last check made (null: none measured yet; taken as 1). */
  callsPerCheck: number | null;
}

export interface FreshnessPlan {
  intervals: Map<SyncResource, number>;
  /** How often the scheduler looks for due resources: the shortest interval. */
  tickMs: number;
  /** Vendor calls an hour the plan spends when every check costs what the last one did. */
  plannedCallsPerHour: number;
}

/**
 * The intervals of a connection's resources. `fixedMs`: the operator's SYNC_INTERVAL_SECONDS (every
 * resource at that interval, budget permitting); null: by cadence and change rate.
 */
export function planFreshness(resources: ResourceHistory[], requestsPerHour: number, fixedMs: number | null = null): FreshnessPlan {
  const desired = resources.map((r) => {
    if (fixedMs != null) return fixedMs;
    const { minMs, maxMs } = CADENCE_BOUNDS[cadenceOf(r.resource)];
    return Math.min(maxMs, Math.round(minMs * QUIET_STRETCH ** Math.min(r.quietChecks, 32)));
  });
  const cost = (i: number) => Math.max(1, resources[i].callsPerCheck ?? 1);
  const demand = desired.reduce((sum, ms, i) => sum + (cost(i) * 3_600_000) / ms, 0);
  const allowed = Math.max(1, requestsPerHour * SCHEDULED_SHARE);
  const stretch = Math.max(1, demand / allowed);
  const intervals = new Map<SyncResource, number>();
  resources.forEach((r, i) => intervals.set(r.resource, Math.ceil(desired[i] * stretch)));
  const all = [...intervals.values()];
  return {
    intervals,
    tickMs: all.length ? Math.min(...all) : CADENCE_BOUNDS.hot.minMs,
    plannedCallsPerHour: Math.round(resources.reduce((sum, r, i) => sum + (cost(i) * 3_600_000) / intervals.get(r.resource)!, 0)),
  };
}
