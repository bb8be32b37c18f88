/**
 * Exactly once across processes (issue 13, items 3 and 4): the fence around every vendor call of a
 * commit, and the release of commits whose process died.
 *
 * - Each process is an instance with a heartbeat (service_instances). One silent for three beats is
 *   gone. On the embedded default the database has one process, so every other instance is gone.
 * - A reservation (idempotency record) has a generation that grows at each take-over, and a lease. A
 *   vendor.write job takes the lease before it calls the vendor and keeps it across the call: a job of
 *   an older generation sends nothing, and a job that finds the lease held by a live holder waits. So the
 *   original job and a take-over job never both call the vendor for one reservation.
 * - Every call after the first under a reservation (another generation, a retry, the second step of a
 *   replace) reconciles at the vendor by marker before it sends.
 * - A new reservation is made holding the lease already (taken in the reservation's own INSERT), for
 *   its first job: that job adopts it without a round trip when it runs in the reserving process soon
 *   after, and takes it over by its token anywhere else. So the common commit costs no lease write.
 * - At start and on every beat, in-progress commits owned by a gone instance are released (failed): the
 *   next request with the key takes it over and reconciles first, so a key is never blocked by a dead
 *   process. Releasing rather than completing is right because only the retry can answer the caller,
 *   and it finds at the vendor whatever the dead process landed.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { relaxedCommit } from '../db/relaxed-commit';

/** Longer than a vendor call can last (30 s timeout per request, a reconcile read plus the write). */
export const LEASE_SECONDS = 90;
/**
 * A lease taken with the reservation is adopted as it is only this soon after: what is left of it then
 * (60 s) outlasts the first attempt's one vendor call (30 s timeout). Later, the job takes a fresh one.
 */
const ADOPT_WITHIN_MS = 30_000;

/** The lease a new reservation holds from its INSERT, handed to its first job (idempotency.service.ts). */
export interface ReservedLease {
  token: string;
  /** When it was taken, on the reserving process's clock (only that process adopts it). */
  takenAt: number;
}
/** How often a job that finds the lease held looks again. */
const LEASE_POLL_MS = 200;

export interface InstanceOptions {
  role: string;
  heartbeatMs: number;
  /** The embedded default: one process owns the database, so every other instance is gone. */
  exclusive: boolean;
}

export type LeaseOutcome =
  /** `reconcile`: a vendor call was made under this reservation before: look for it first. */
  | { kind: 'held'; token: string; reconcile: boolean }
  /** The reservation was taken over (or completed): this job must send nothing. */
  | { kind: 'stale' }
  /** Another live holder kept the lease past the deadline. */
  | { kind: 'busy' };

export class WriteFence {
  readonly instanceId = randomUUID();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly ds: DataSource, private readonly opts: InstanceOptions) {}

  /** Seconds after which a silent instance is gone. */
  private get goneAfterSeconds(): number {
    return (3 * this.opts.heartbeatMs) / 1000;
  }

  /** Registers this process, releases the commits of gone ones, and keeps beating. */
  async start(): Promise<void> {
    await this.ds.query('INSERT INTO service_instances (id, role) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET seen_at = now()', [this.instanceId, this.opts.role]);
    await this.releaseOrphans();
    this.timer = setInterval(() => { void this.beat().catch(() => undefined); }, this.opts.heartbeatMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ds.query('DELETE FROM service_instances WHERE id = $1', [this.instanceId]).catch(() => undefined);
  }

  private async beat(): Promise<void> {
    await this.ds.query('UPDATE service_instances SET seen_at = now() WHERE id = $1', [this.instanceId]);
    await this.ds.query(`DELETE FROM service_instances WHERE seen_at < now() - interval '1 hour'`);
    await this.releaseOrphans();
  }

  /** SQL: the instance named by `expr` is gone (parameters $1: this instance, $2: exclusive, $3: seconds). */
  private gone(expr: string): string {
    return `(${expr} <> $1 AND ($2::boolean OR NOT EXISTS (
      SELECT 1 FROM service_instances i WHERE i.id = ${expr} AND i.seen_at > now() - make_interval(secs => $3::float8))))`;
  }

  /** In-progress commits whose owner is gone become failed: the next request with the key takes them over. */
  async releaseOrphans(): Promise<number> {
    const [rows]: [unknown[], number] = await this.ds.query(
      `UPDATE idempotency_records r SET state = 'failed', updated_at = now()
        WHERE r.state = 'in_progress' AND r.owner_instance IS NOT NULL AND ${this.gone('r.owner_instance')} RETURNING r.id`,
      [this.instanceId, this.opts.exclusive, this.goneAfterSeconds]);
    return rows.length;
  }

  /** Whether the owner of an in-progress reservation is gone (reserve takes such a key over at once). */
  async ownerGone(ownerInstance: string | null): Promise<boolean> {
    if (!ownerInstance) return false;
    const [row] = await this.ds.query(`SELECT ${this.gone('$4::text')} AS gone`, [this.instanceId, this.opts.exclusive, this.goneAfterSeconds, ownerInstance]);
    return row?.gone === true;
  }

  /** A lease for a reservation about to be made (its INSERT stores the token, with LEASE_SECONDS). */
  reserveLease(): ReservedLease {
    return { token: `${this.instanceId}/reserved/${randomUUID().slice(0, 8)}`, takenAt: Date.now() };
  }

  /**
   * The lease taken with the reservation, as this job's, without a round trip: only for the first
   * attempt of the job it was handed to (never a redelivery, which may run beside a stalled first
   * one), in the process that reserved, while most of it is left. Null: acquire instead.
   */
  adopt(reserved: ReservedLease | undefined, job: { attempt: number; redelivered: boolean }): LeaseOutcome | null {
    if (!reserved || job.attempt !== 1 || job.redelivered) return null;
    if (reserved.token.split('/')[0] !== this.instanceId || Date.now() - reserved.takenAt > ADOPT_WITHIN_MS) return null;
    return { kind: 'held', token: reserved.token, reconcile: false };
  }

  /**
   * Takes the reservation's lease for one vendor call, waiting while a live holder has it, until
   * `deadline` (ms since epoch). `reserved`: the token of the lease taken with the reservation, which
   * the first attempt of the job it was handed to may take over from any process (adopt).
   */
  async acquire(reservationId: string, generation: number, jobRef: string, deadline: number, reserved: string | null = null): Promise<LeaseOutcome> {
    const token = `${this.instanceId}/${jobRef}/${randomUUID().slice(0, 8)}`;
    for (;;) {
      const [rows]: [{ vendor_attempts: number }[], number] = await this.ds.query(
        // The reservation counted the vendor call its reserved lease is for: taking that lease over by
        // its token is that same call, not another one.
        `UPDATE idempotency_records r SET lease_owner = $4, lease_until = now() + make_interval(secs => ${LEASE_SECONDS}),
                vendor_attempts = vendor_attempts + CASE WHEN r.lease_owner = $7 THEN 0 ELSE 1 END
          WHERE r.id = $5 AND r.generation = $6 AND r.state = 'in_progress'
            AND (r.lease_owner IS NULL OR r.lease_until < now() OR r.lease_owner = $7 OR ${this.gone("split_part(r.lease_owner, '/', 1)")})
          RETURNING r.vendor_attempts`,
        [this.instanceId, this.opts.exclusive, this.goneAfterSeconds, token, reservationId, generation, reserved]);
      if (rows.length) return { kind: 'held', token, reconcile: Number(rows[0].vendor_attempts) > 1 };
      const [now] = await this.ds.query('SELECT generation, state FROM idempotency_records WHERE id = $1', [reservationId]);
      if (!now || Number(now.generation) !== generation || now.state !== 'in_progress') return { kind: 'stale' };
      if (Date.now() + LEASE_POLL_MS > deadline) return { kind: 'busy' };
      await new Promise((r) => setTimeout(r, LEASE_POLL_MS));
    }
  }

  /**
   * Frees the lease. Committed without waiting for the WAL flush: a release lost in a database crash
   * only delays the next holder until the lease expires, and the commit path saves an fsync.
   */
  async release(reservationId: string, token: string): Promise<void> {
    await this.ds.query(
      `UPDATE idempotency_records SET lease_owner = NULL, lease_until = NULL FROM ${relaxedCommit} WHERE id = $1 AND lease_owner = $2`,
      [reservationId, token]);
  }
}
