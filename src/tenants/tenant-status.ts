/** Connections of a tenant as a caller sees them, with their sync state (connections and status reads). */
import type { SyncState } from '../../entities';
import type { z } from 'zod';
import { capabilitiesOf } from '../connectors/registry';
import { toRfc3339 } from '../shared/dates';
import type { TenantAccess } from '../access/access.service';
import type { ConnectionBudgets } from '../budget/connection-budgets';
import type { SyncJobs } from '../sync/sync-jobs';
import type { TenantsStore } from './tenants.store';
import type { ConnectionInfo as ConnectionInfoSchema, TenantStatus as TenantStatusSchema } from './tenant.schemas';

type ConnectionInfo = z.infer<typeof ConnectionInfoSchema>;
type TenantStatus = z.infer<typeof TenantStatusSchema>;


export async function connectionInfos(store: TenantsStore, access: TenantAccess, syncJobs: SyncJobs): Promise<ConnectionInfo[]> {
  const now = Date.now();
  const ids = access.connections.map((c) => c.id);
  const states = ids.length ? await store.syncStates(ids) : [];
  const [stored, schedules] = await Promise.all([
    store.storedCounts(access.tenant.id, ids, states.map((s) => s.resource)),
    Promise.all(access.connections.map((c) => syncJobs.scheduleOf(c))),
  ]);
  return access.connections.map((c, i) => {
    const mine = states.filter((s) => s.connectionId === c.id);
    const synced = mine.map((s) => s.lastSyncedAt).filter((d): d is Date => d != null);
    const failing = mine.some((s) => s.lastStatus === 'failed');
    const runningSince = mine.filter((s) => s.lastStatus === 'running').map((s) => s.lastAttemptAt?.getTime() ?? now);
    const running = runningSince.length > 0;
    const schedule = schedules[i]!;
    return {
      id: c.id,
      kind: c.kind,
      connector: c.connector,
      base_url: c.baseUrl,
      limited: capabilitiesOf(c.connector).commits === 'fixture_only',
      grants: [...(access.grants.get(c.id) ?? [])].sort(),
      last_synced_at: synced.length === mine.length && synced.length > 0
        ? toRfc3339(new Date(Math.min(...synced.map((d) => d.getTime())))) : null,
      // A placed schedule makes a new connection's states before its first check: still 'never' until one runs.
      sync_status: mine.every((s) => s.lastStatus === 'never') ? 'never' : failing ? 'failed' : running ? 'running' : 'ok',
      resources: mine.map((s) => ({
        resource: s.resource,
        last_status: s.lastStatus,
        last_synced_at: toRfc3339(s.lastSyncedAt),
        last_attempt_at: toRfc3339(s.lastAttemptAt),
        last_mode: s.lastMode,
        last_error: s.lastError,
        records: stored.get(`${c.id}|${s.resource}`) ?? 0,
        last_fetched: s.recordsSeen,
        quarantined: s.quarantined,
        lag_seconds: lagSeconds(s, now),
        interval_seconds: s.intervalSeconds,
        next_check_at: toRfc3339(s.nextCheckAt),
      })),
      sync: {
        running,
        running_since: running ? toRfc3339(new Date(Math.min(...runningSince))) : null,
        next_at: toRfc3339(schedule.nextAt),
        interval_seconds: schedule.intervalMs == null ? null : Math.round(schedule.intervalMs / 1000),
      },
    };
  });
}

/**
 * The stored copy is as fresh as the start of the last successful check: a sync, or a "changed since?"
 * probe that found nothing (checkedAt), when the last run succeeded; else (running or failed since) no
 * later than the end of the last successful sync (lastSyncedAt).
 */
function lagSeconds(s: SyncState, now: number): number | null {
  const asOf = s.lastStatus === 'ok' ? (s.checkedAt ?? s.lastAttemptAt ?? s.lastSyncedAt) : s.lastSyncedAt;
  return asOf ? Math.max(0, Math.round((now - asOf.getTime()) / 1000)) : null;
}

export async function tenantStatus(store: TenantsStore, access: TenantAccess, syncJobs: SyncJobs, budgets?: ConnectionBudgets): Promise<TenantStatus> {
  const connections = await connectionInfos(store, access, syncJobs);
  if (budgets) {
    for (const info of connections) {
      const connection = access.connections.find((c) => c.id === info.id)!;
      const b = await budgets.snapshot(connection);
      info.budget = {
        requests_per_hour: b.requestsPerHour, used_last_hour: b.usedLastHour, in_flight: b.inFlight,
        concurrent_limit: b.concurrentLimit, effective_rate: b.effectiveRate,
      };
    }
  }
  const times = connections.map((c) => c.last_synced_at);
  return {
    tenant_id: access.tenant.id,
    name: access.tenant.name,
    sandbox: access.tenant.sandbox,
    healthy: connections.every((c) => c.sync_status === 'ok'),
    last_synced_at: times.length > 0 && times.every((t) => t != null) ? [...(times as string[])].sort()[0] : null,
    connections,
  };
}
