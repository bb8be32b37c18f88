/**
 * Exactly once across processes (docs/architecture.md, Writes): the fence around every vendor call of a
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
 * - A marker look-up proves nothing while a request of an earlier holder can still land: each
 *   lease records `land_by`, its send deadline (the job sends no write after it, vendor-http.ts SendFence;
 *   SEND_WINDOW_MS after the lease is taken, at most until the request answers, and pushed on by `extend`
 *   when a write must start later) plus the client's timeout and the vendor's landing margin. A holder that ends with every write
 *   answered sets it to null, or to the landing time of a write whose outcome it could not learn; a holder
 *   that dies leaves it as recorded. A lease is taken, on either runtime and at any time, only once
 *   `land_by` has passed: a take-over of a dead process's commit waits for it (docs/architecture.md, Writes).
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { WriteFenceStore } from './write-fence.store';

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
  /** Its holder sends no write after this (ms since epoch, the reserving process's clock) unless it extends it. */
  sendBy: number;
}

/**
 * How long after taking its lease a holder may start writes on what it recorded; a later write records a
 * later landing deadline first (extend). Short, so that a take-over after a crash waits little.
 */
export const SEND_WINDOW_MS = 5_000;

/** Seconds from now until `landAt` (ms since epoch, this process's clock), for `now() + make_interval(secs => ...)`. */
export function secondsUntil(landAt: number): number {
  return Math.max(0, (landAt - Date.now()) / 1000);
}
/** How often a release that could not reach the database is tried again (releaseEventually). */
const RELEASE_RETRY_MS = 2_000;
/** How often a job that finds the lease held looks again. */
const LEASE_POLL_MS = 200;

export interface InstanceOptions {
  role: string;
  heartbeatMs: number;
  /** The embedded default: one process owns the database, so every other instance is gone. */
  exclusive: boolean;
  /** How long after it is sent a vendor request may still land: the client's timeout plus the vendor's margin. */
  landingMs?: number;
}

/** Without a configured client (unit tests): the defaults of VENDOR_TIMEOUT_MS and VENDOR_LANDING_MARGIN_MS. */
const DEFAULT_LANDING_MS = 60_000;

export type LeaseOutcome =
  /** `reconcile`: a vendor call was made under this reservation before: look for it first. */
  | { kind: 'held'; token: string; reconcile: boolean; sendBy: number }
  /** The reservation was taken over (or completed): this job must send nothing. */
  | { kind: 'stale' }
  /** Another live holder kept the lease past the deadline. */
  | { kind: 'busy'; retryAfterMs?: number };

export class WriteFence {
  readonly instanceId = randomUUID();
  private timer: NodeJS.Timeout | null = null;
  /** Reserved leases freed before their job surely existed (the queue refused it): never adopted. */
  private readonly revoked = new Set<string>();

  private readonly store: WriteFenceStore;

  constructor(ds: DataSource, private readonly opts: InstanceOptions) {
    this.store = new WriteFenceStore(ds, { instanceId: this.instanceId, exclusive: opts.exclusive, goneAfterSeconds: this.goneAfterSeconds });
  }

  /** How long after it is sent a vendor request may still land. */
  get landingMs(): number {
    return this.opts.landingMs ?? DEFAULT_LANDING_MS;
  }

  /** When the writes of a holder that sends nothing after `sendBy` have all landed or never will (ms, this clock). */
  landAt(sendBy: number): number {
    return sendBy + this.landingMs;
  }

  /** Seconds after which a silent instance is gone. */
  private get goneAfterSeconds(): number {
    return (3 * this.opts.heartbeatMs) / 1000;
  }

  /** Registers this process, releases the commits of gone ones, and keeps beating. */
  async start(): Promise<void> {
    await this.store.registerInstance(this.opts.role);
    await this.releaseOrphans();
    this.timer = setInterval(() => { void this.beat().catch(() => undefined); }, this.opts.heartbeatMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.store.removeInstance().catch(() => undefined);
  }

  private async beat(): Promise<void> {
    await this.store.markInstanceSeen();
    await this.store.forgetInstancesSilentForAnHour();
    await this.releaseOrphans();
  }

  /** In-progress commits whose owner is gone become failed: the next request with the key takes them over. */
  async releaseOrphans(): Promise<number> {
    return this.store.failCommitsOfGoneOwners();
  }

  /** Whether the owner of an in-progress reservation is gone (reserve takes such a key over at once). */
  async ownerGone(ownerInstance: string | null): Promise<boolean> {
    if (!ownerInstance) return false;
    return this.store.isInstanceGone(ownerInstance);
  }

  /** The send deadline of a lease taken now by a job whose request answers by `answerBy`. */
  sendByFor(answerBy: number): number {
    return Math.min(answerBy, Date.now() + SEND_WINDOW_MS);
  }

  /** A lease for a reservation about to be made (its INSERT stores the token, with LEASE_SECONDS and land_by). */
  reserveLease(answerBy: number): ReservedLease {
    return { token: `${this.instanceId}/reserved/${randomUUID().slice(0, 8)}`, takenAt: Date.now(), sendBy: this.sendByFor(answerBy) };
  }

  /**
   * Before a write that starts after the holder's send deadline: records a later one (`sendBy`), if the
   * lease is still this holder's. False: it is not, and the write must not be sent.
   */
  async extend(reservationId: string, token: string, sendBy: number): Promise<boolean> {
    return this.store.extendLease(reservationId, token, secondsUntil(this.landAt(sendBy)), LEASE_SECONDS);
  }

  /**
   * A reserved lease its request frees because the queue refused its job (Redis down): should the job
   * exist all the same, it must take the lease in the database (acquire), where the freed key's state
   * stops it, never adopt it here. Only the reserving process adopts, so this set is enough.
   */
  revoke(token: string): void {
    this.revoked.add(token);
    if (this.revoked.size > 10_000) this.revoked.delete(this.revoked.values().next().value!);
  }

  /**
   * The lease taken with the reservation, as this job's, without a round trip: only for the first
   * attempt of the job it was handed to (never a redelivery, which may run beside a stalled first
   * one), in the process that reserved, while most of it is left. Null: acquire instead.
   */
  adopt(reserved: (Omit<ReservedLease, 'sendBy'> & { sendBy?: number }) | undefined, job: { attempt: number; redelivered: boolean }): LeaseOutcome | null {
    if (!reserved || job.attempt !== 1 || job.redelivered || this.revoked.has(reserved.token)) return null;
    if (reserved.token.split('/')[0] !== this.instanceId || Date.now() - reserved.takenAt > ADOPT_WITHIN_MS) return null;
    // Without its send deadline (a job queued before it was recorded): any write records one first.
    return { kind: 'held', token: reserved.token, reconcile: false, sendBy: reserved.sendBy ?? reserved.takenAt };
  }

  /**
   * Takes the reservation's lease for one vendor call, waiting while a live holder has it or a request of
   * an earlier holder may still land (`land_by`), until `deadline` (ms since epoch). `reserved`: the token
   * of the lease taken with the reservation, which the first attempt of the job it was handed to may take
   * over from any process (adopt); its `land_by` was recorded for that very job. `answerBy`: the job's
   * request answers then; the holder sends no write after the `sendBy` it gets (sendByFor), so what it
   * sends lands by `landAt(sendBy)`, recorded here. Busy with `retryAfterMs`: the lease is free but an
   * earlier request may land past the deadline.
   */
  async acquire(reservationId: string, generation: number, jobRef: string, deadline: number, reserved: string | null = null, answerBy = deadline): Promise<LeaseOutcome> {
    const token = `${this.instanceId}/${jobRef}/${randomUUID().slice(0, 8)}`;
    for (;;) {
      const sendBy = this.sendByFor(answerBy);
      const taken = await this.store.takeLease({ reservationId, generation, token, reserved, landInSeconds: secondsUntil(this.landAt(sendBy)), leaseSeconds: LEASE_SECONDS });
      if (taken) return { kind: 'held', token, reconcile: taken.vendorAttempts > 1, sendBy };
      const now = await this.store.leaseState(reservationId);
      if (!now || now.generation !== generation || now.state !== 'in_progress') return { kind: 'stale' };
      const landInMs = now.landInMs == null ? 0 : Math.max(0, now.landInMs);
      // Nobody holds the lease, but what an earlier holder sent may land after this job must answer:
      // waiting is useless, the caller hears when to retry.
      if (now.leaseFree && Date.now() + landInMs > deadline) return { kind: 'busy', retryAfterMs: landInMs };
      if (Date.now() + LEASE_POLL_MS > deadline) return landInMs > 0 ? { kind: 'busy', retryAfterMs: landInMs } : { kind: 'busy' };
      await new Promise((r) => setTimeout(r, LEASE_POLL_MS));
    }
  }

  /**
   * Frees a lease nothing was sent under, also when the database cannot be reached right now: tried again
   * every RELEASE_RETRY_MS, in the background, until it is done or `until` (ms since epoch, when the lease
   * lapses by itself). After a worker<->PostgreSQL partition a retry with the key would otherwise be
   * refused until the lease lapsed (LEASE_SECONDS), about a minute after the network came back.
   */
  releaseEventually(reservationId: string, token: string, until: number): Promise<void> {
    // The first try is the caller's to await (the lease is free when it resolves, if the database answered);
    // the later ones run in the background.
    const attempt = (): Promise<void> => this.release(reservationId, token, null).catch(() => {
      if (Date.now() + RELEASE_RETRY_MS < until) setTimeout(() => { void attempt(); }, RELEASE_RETRY_MS).unref();
    });
    return attempt();
  }

  /**
   * Frees the lease. Committed without waiting for the WAL flush: a release lost in a database crash
   * only delays the next holder until the lease expires, and the commit path saves an fsync.
   */
  async release(reservationId: string, token: string, landAt: number | null = null): Promise<void> {
    // `landAt`: a write of this holder whose outcome is unknown may land until then; null: every write was answered.
    await this.store.freeLease(reservationId, token, landAt == null ? null : secondsUntil(landAt));
  }
}
