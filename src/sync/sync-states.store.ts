/**
 * The sync states' store (src/sync/freshness.ts): which resources are due, claimed at once so that two
 * checks (or two worker processes) never check the same resource together.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { SyncState } from '../../entities';
import type { SyncResource } from '../connectors/types';
import { GroupedWrite } from '../shared/grouped-write';
import { CADENCE_BOUNDS } from './freshness';

/** A claim lasts this long: a check that died with its process is due again after it. */
export const CLAIM_MS = 10 * 60_000;

/**
 * The most a due resource's claim may yield to others (claimNext): half the longest hot interval. A
 * resource checked later than its due time is late by that much, whatever its interval: the fleet is
 * judged by every resource being checked within its interval.
 */
export const MAX_SLACK_MS = CADENCE_BOUNDS.hot.maxMs / 2;

/** A resource the sweeper claimed (src/sync/sweeper.ts). */
export interface ClaimedResource { tenantId: string; connectionId: string; resource: SyncResource }

type CheckRow = { state: SyncState; plan?: { intervalSeconds: number; nextCheckAt: Date | null } };
type PlanRow = { id: string; intervalSeconds: number; nextCheckAt: Date | null };

export class SyncStatesStore {
  /**
   * What checks found and their plans, written by group commit (src/shared/grouped-write.ts): a worker ends
   * hundreds of checks a second, and the checks that end while one statement is under way share the next.
   */
  private readonly checks = new GroupedWrite<CheckRow>((rows) => this.writeCheckRows(rows), (r) => r.state.id);
  private readonly plans = new GroupedWrite<PlanRow>((rows) => this.writePlanRows(rows), (r) => r.id);

  constructor(private readonly ds: DataSource) {}

  /** Every sync state of a connection. */
  statesOf(connectionId: string): Promise<SyncState[]> {
    return this.ds.getRepository(SyncState).findBy({ connectionId });
  }

  /** A resource's state before its first check, not stored yet (saveNew stores it). */
  newState(tenantId: string, connectionId: string, resource: SyncResource): SyncState {
    return this.ds.getRepository(SyncState).create({ tenantId, connectionId, resource, lastStatus: 'never', recordsSeen: 0, quietChecks: 0 });
  }

  /** Stores a state newState made. */
  async saveNew(state: SyncState): Promise<void> {
    await this.ds.getRepository(SyncState).save(state);
  }

  /**
   * The resources of `resources` that are due now, claimed until now + CLAIM_MS (a resource never checked
   * has no row yet: it is due, and its row is made here). `dueOnly` false: a sync someone asked for claims
   * them all, so that the scheduled checks leave them to it meanwhile.
   */
  async claimDue(tenantId: string, connectionId: string, resources: readonly SyncResource[], dueOnly = true): Promise<Set<SyncResource>> {
    // One statement: a missing row is made claimed, an existing one is claimed only when due (a row the
    // WHERE leaves alone is neither written nor returned). Through a CTE: the driver answers a bare
    // RETURNING with its count on some statements, a SELECT's rows as they are.
    const rows: { resource: SyncResource }[] = await this.ds.query(
      `WITH claimed AS (
         INSERT INTO sync_states (tenant_id, connection_id, resource, next_check_at)
         SELECT $1, $2, r, now() + ($4::int * interval '1 millisecond') FROM unnest($3::text[]) AS r
         ON CONFLICT (connection_id, resource) DO UPDATE SET next_check_at = EXCLUDED.next_check_at
         WHERE NOT $5::boolean OR sync_states.next_check_at IS NULL OR sync_states.next_check_at <= now()
         RETURNING resource)
       SELECT resource FROM claimed`, [tenantId, connectionId, resources, CLAIM_MS, dueOnly]);
    return new Set(rows.map((r) => r.resource));
  }

  /**
   * Up to `limit` due resources of the whole fleet, claimed in one statement (rows another process is
   * claiming are skipped, not waited for), with the other due resources of the same connections, so that one
   * run checks them together. The earliest deadline first: a resource's deadline is its due time plus its
   * slack, half its interval but never more than MAX_SLACK_MS, so a ticket list due every 5 s goes before a
   * list that fell due a second earlier, and no resource waits past its due time longer than any other
   * (under load every claim is late by about as much: a list due every 5 minutes is not held behind checks
   * that come due every 10 s until half its interval is spent). A first check (no interval yet) is due at
   * its due time.
   */
  async claimNext(limit: number): Promise<ClaimedResource[]> {
    const rows: { tenant_id: string; connection_id: string; resource: SyncResource }[] = await this.ds.query(
      `WITH picked AS (
         SELECT DISTINCT connection_id FROM (
           SELECT connection_id FROM sync_states WHERE next_check_at IS NULL OR next_check_at <= now()
           ORDER BY next_check_at + LEAST(COALESCE(interval_seconds, 0) * 500, $3::int) * interval '1 millisecond' NULLS FIRST LIMIT $1) earliest),
       due AS (
         SELECT s.id FROM sync_states s JOIN picked p ON p.connection_id = s.connection_id
         WHERE s.next_check_at IS NULL OR s.next_check_at <= now()
         FOR UPDATE OF s SKIP LOCKED),
       claimed AS (
         UPDATE sync_states s SET next_check_at = now() + ($2::int * interval '1 millisecond')
         FROM due WHERE s.id = due.id
         RETURNING s.tenant_id, s.connection_id, s.resource)
       SELECT tenant_id, connection_id, resource FROM claimed`, [limit, CLAIM_MS, MAX_SLACK_MS]);
    return rows.map((r) => ({ tenantId: r.tenant_id, connectionId: r.connection_id, resource: r.resource }));
  }

  /**
   * Makes the missing states of these connections' resources, due now (a new connection, or a resource its
   * connector learned since): the sweeper's first check of them is their first sync.
   */
  async ensureStates(connections: { tenantId: string; connectionId: string; resources: readonly SyncResource[] }[]): Promise<void> {
    const rows = connections.flatMap((c) => c.resources.map((r) => [c.tenantId, c.connectionId, r] as const));
    if (rows.length === 0) return;
    await this.ds.query(
      `INSERT INTO sync_states (tenant_id, connection_id, resource, next_check_at)
       SELECT t, c, r, now() FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS x(t, c, r)
       ON CONFLICT (connection_id, resource) DO NOTHING`,
      [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])]);
  }

  /**
   * What checks found, written in one statement for all of a run's resources and those of the runs that end
   * while one is under way (group commit; their rows exist). With `plan`,
   * the resource's interval and next check too; without it, those stay as they are (a claim holds next_check_at).
   * The ids also go as an array: the planner cannot size a JSON recordset (it assumes 100 rows) and joined
   * it to the whole table by a scan; `id = ANY` reads the few rows through the primary key.
   */
  writeChecks(checks: CheckRow[]): Promise<void> {
    return this.checks.add(checks);
  }

  private async writeCheckRows(checks: CheckRow[]): Promise<void> {
    const rows = checks.map(({ state: s, plan }) => ({
      id: s.id, last_synced_at: s.lastSyncedAt, watermark: s.watermark, last_attempt_at: s.lastAttemptAt, last_status: s.lastStatus,
      last_error: s.lastError, last_mode: s.lastMode, records_seen: s.recordsSeen, quarantined: s.quarantined, checked_at: s.checkedAt,
      quiet_checks: s.quietChecks, calls_per_check: s.callsPerCheck, quiet_listing: s.quietListing ?? null, planned: plan !== undefined,
      interval_seconds: plan?.intervalSeconds ?? null, next_check_at: plan?.nextCheckAt ?? null,
    }));
    await this.ds.query(
      `UPDATE sync_states s SET last_synced_at = x.last_synced_at, watermark = x.watermark, last_attempt_at = x.last_attempt_at,
         last_status = x.last_status, last_error = x.last_error, last_mode = x.last_mode, records_seen = x.records_seen,
         quarantined = x.quarantined, checked_at = x.checked_at, quiet_checks = x.quiet_checks, calls_per_check = x.calls_per_check, quiet_listing = x.quiet_listing,
         interval_seconds = CASE WHEN x.planned THEN x.interval_seconds ELSE s.interval_seconds END,
         next_check_at = CASE WHEN x.planned THEN x.next_check_at ELSE s.next_check_at END, updated_at = now()
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, last_synced_at timestamptz, watermark timestamptz, last_attempt_at timestamptz,
         last_status text, last_error text, last_mode text, records_seen int, quarantined int, checked_at timestamptz, quiet_checks int,
         calls_per_check int, quiet_listing text, planned boolean, interval_seconds int, next_check_at timestamptz)
       WHERE s.id = x.id AND s.id = ANY($2::uuid[])`, [JSON.stringify(rows), rows.map((r) => r.id)]);
  }

  /**
   * Resources' intervals and next checks alone (states a run planned but did not check, or whose check
   * saved them already), in one statement for the run and the runs that end meanwhile.
   */
  writePlans(plans: PlanRow[]): Promise<void> {
    return this.plans.add(plans);
  }

  private async writePlanRows(plans: PlanRow[]): Promise<void> {
    await this.ds.query(
      `UPDATE sync_states s SET interval_seconds = x.interval_seconds, next_check_at = x.next_check_at, updated_at = now()
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, interval_seconds int, next_check_at timestamptz)
       WHERE s.id = x.id AND s.id = ANY($2::uuid[])`,
      [JSON.stringify(plans.map((p) => ({ id: p.id, interval_seconds: p.intervalSeconds, next_check_at: p.nextCheckAt }))), plans.map((p) => p.id)]);
  }

  /**
   * Forgets the listing a resource's last check recorded (sync_states.quiet_listing), in the transaction of a
   * write to the resource: from its commit on, the store is no longer what that listing vouched for.
   */
  async forgetQuietListing(manager: EntityManager, stateId: string): Promise<void> {
    await manager.query('UPDATE sync_states SET quiet_listing = NULL WHERE id = $1', [stateId]);
  }

  /** When the connection's next scheduled check is (a running check's claim end aside); null: none planned. */
  async nextCheckOf(connectionId: string): Promise<Date | null> {
    const [row] = await this.ds.query(
      `SELECT MIN(next_check_at) AS next FROM sync_states WHERE connection_id = $1 AND last_status <> 'running'`, [connectionId]);
    return row?.next ? new Date(row.next) : null;
  }
}
