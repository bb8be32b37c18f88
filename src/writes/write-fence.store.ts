/**
 * The statements of the write fence (write-fence.ts holds its rules): service instances and their
 * heartbeats, and the lease columns of idempotency records. Each method is one statement, one commit.
 */
import type { DataSource } from 'typeorm';
import { relaxedCommit } from '../db/relaxed-commit';

/** Who asks, and when another instance counts as gone. */
export interface InstancePresence {
  instanceId: string;
  /** The embedded default: one process owns the database, so every other instance is gone. */
  exclusive: boolean;
  goneAfterSeconds: number;
}

/** What a job that did not get the lease sees of the reservation. */
export interface LeaseState {
  generation: number;
  state: string;
  /** Milliseconds until what an earlier holder sent has surely landed (null: nothing pending). */
  landInMs: number | null;
  leaseFree: boolean;
}

export class WriteFenceStore {
  constructor(private readonly ds: DataSource, private readonly presence: InstancePresence) {}

  private get presenceParams(): unknown[] {
    return [this.presence.instanceId, this.presence.exclusive, this.presence.goneAfterSeconds];
  }

  /** SQL: the instance named by `expr` is gone (parameters $1: this instance, $2: exclusive, $3: seconds). */
  private gone(expr: string): string {
    return `(${expr} <> $1 AND ($2::boolean OR NOT EXISTS (
      SELECT 1 FROM service_instances i WHERE i.id = ${expr} AND i.seen_at > now() - make_interval(secs => $3::float8))))`;
  }

  async registerInstance(role: string): Promise<void> {
    await this.ds.query('INSERT INTO service_instances (id, role) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = now()', [this.presence.instanceId, role]);
  }

  async removeInstance(): Promise<void> {
    await this.ds.query('DELETE FROM service_instances WHERE id = $1', [this.presence.instanceId]);
  }

  async markInstanceSeen(): Promise<void> {
    await this.ds.query('UPDATE service_instances SET seen_at = now() WHERE id = $1', [this.presence.instanceId]);
  }

  async forgetInstancesSilentForAnHour(): Promise<void> {
    await this.ds.query(`DELETE FROM service_instances WHERE seen_at < now() - interval '1 hour'`);
  }

  /** In-progress commits whose owner is gone become failed; how many. */
  async failCommitsOfGoneOwners(): Promise<number> {
    const [rows]: [unknown[], number] = await this.ds.query(
      `UPDATE idempotency_records r SET state = 'failed', updated_at = now()
        WHERE r.state = 'in_progress' AND r.owner_instance IS NOT NULL AND ${this.gone('r.owner_instance')} RETURNING r.id`,
      this.presenceParams);
    return rows.length;
  }

  async isInstanceGone(instanceId: string): Promise<boolean> {
    const [row] = await this.ds.query(`SELECT ${this.gone('$4::text')} AS gone`, [...this.presenceParams, instanceId]);
    return row?.gone === true;
  }

  /** Pushes the landing deadline to `landInSeconds` from now, if `token` still holds the lease; whether it did. */
  async extendLease(reservationId: string, token: string, landInSeconds: number, leaseSeconds: number): Promise<boolean> {
    const [rows]: [unknown[], number] = await this.ds.query(
      `UPDATE idempotency_records SET land_by = greatest(land_by, now() + make_interval(secs => $3::float8)),
              lease_until = greatest(lease_until, now() + make_interval(secs => ${leaseSeconds}))
        WHERE id = $1 AND lease_owner = $2 AND state = 'in_progress' RETURNING id`,
      [reservationId, token, landInSeconds]);
    return rows.length > 0;
  }

  /**
   * Takes the lease for `token` if it is free, lapsed, held by a gone instance or is `reserved`, and no
   * earlier request may still land; the vendor attempts counted, or null when it was not taken.
   */
  async takeLease(lease: { reservationId: string; generation: number; token: string; reserved: string | null; landInSeconds: number; leaseSeconds: number }): Promise<{ vendorAttempts: number } | null> {
    const [rows]: [{ vendor_attempts: number }[], number] = await this.ds.query(
      // The reservation counted the vendor call its reserved lease is for: taking that lease over by
      // its token is that same call, not another one.
      `UPDATE idempotency_records r SET lease_owner = $4, lease_until = now() + make_interval(secs => ${lease.leaseSeconds}),
              vendor_attempts = vendor_attempts + CASE WHEN r.lease_owner = $7 THEN 0 ELSE 1 END,
              land_by = greatest(r.land_by, now() + make_interval(secs => $8::float8))
        WHERE r.id = $5 AND r.generation = $6 AND r.state = 'in_progress'
          AND (r.lease_owner IS NULL OR r.lease_until < now() OR r.lease_owner = $7 OR ${this.gone("split_part(r.lease_owner, '/', 1)")})
          AND (r.land_by IS NULL OR r.land_by < now() OR r.lease_owner = $7)
        RETURNING r.vendor_attempts`,
      [...this.presenceParams, lease.token, lease.reservationId, lease.generation, lease.reserved, lease.landInSeconds]);
    return rows.length ? { vendorAttempts: Number(rows[0].vendor_attempts) } : null;
  }

  async leaseState(reservationId: string): Promise<LeaseState | null> {
    const [now] = await this.ds.query(
      `SELECT r.generation, r.state, extract(epoch FROM (r.land_by - now())) * 1000 AS land_in_ms,
              (r.lease_owner IS NULL OR r.lease_until < now() OR ${this.gone("split_part(r.lease_owner, '/', 1)")}) AS lease_free
         FROM idempotency_records r WHERE r.id = $4`,
      [...this.presenceParams, reservationId]);
    if (!now) return null;
    return { generation: Number(now.generation), state: now.state, landInMs: now.land_in_ms == null ? null : Number(now.land_in_ms), leaseFree: now.lease_free === true };
  }

  /**
   * Frees the lease `token` holds; `landInSeconds`: a write whose outcome is unknown may land until then
   * (null: every write was answered). Committed without waiting for the WAL flush: a release lost in a
   * database crash only delays the next holder until the lease expires, and the commit path saves an fsync.
   */
  async freeLease(reservationId: string, token: string, landInSeconds: number | null): Promise<void> {
    await this.ds.query(
      `UPDATE idempotency_records SET lease_owner = NULL, lease_until = NULL,
              land_by = CASE WHEN $3::float8 IS NULL THEN NULL ELSE now() + make_interval(secs => $3::float8) END
         FROM ${relaxedCommit} WHERE id = $1 AND lease_owner = $2`,
      [reservationId, token, landInSeconds]);
  }
}
