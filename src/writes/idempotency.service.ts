/**
 * Idempotency records (docs/architecture.md, Writes): the unique constraint on (isv, tenant, operation, key)
 * is what makes a commit happen once. A replay returns the stored answer; a different body under the
 * same key is a conflict; a key still being worked on is "in progress". A commit that failed after its
 * check stage frees its key for a take-over with the same body; one refused by that stage keeps nothing.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { ServiceError } from '../errors/service-error';
import { IdempotencyStore, type IdempotencyScope, type StoredWith } from './idempotency.store';
import { LEASE_SECONDS, secondsUntil, type ReservedLease, type WriteFence } from './write-fence';

const KEEP_MS = 24 * 3600 * 1000;
/** An in-progress record older than this belonged to a process that died; it may be taken over. */
const ABANDONED_MS = 10 * 60 * 1000;
/** failWhenBack's tries, one a second: well inside ABANDONED_MS. */
const FAIL_RETRIES = 300;

export interface StoredAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One reservation of a key: its record and the generation that holds it. */
export interface ReservationRef { id: string; generation: number }

export type Reservation =
  /**
   * `takeover`: the key was used before by a commit that failed or died; its outcome must be reconciled.
   * `lease`: a fresh key is reserved holding the fence's lease, for its first job (write-fence.ts).
   */
  | { kind: 'new'; id: string; takeover: boolean; generation: number; lease: ReservedLease | null }
  | { kind: 'replay'; answer: StoredAnswer };

/** When the writes of the finished jobs that handed their leases back may still land (ms since epoch), or null. */
const landParam = (landAt: number | null) => (landAt == null ? null : secondsUntil(landAt));

export function requestHash(body: unknown): string {
  const canonical = JSON.stringify(body, (_k, v) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v);
  return createHash('sha256').update(canonical).digest('hex');
}

export class IdempotencyService {
  private readonly store: IdempotencyStore;

  /** `fence`: who owns a commit in progress, and whether its process is gone (write-fence.ts). */
  constructor(ds: DataSource, private readonly fence: WriteFence | null = null) {
    this.store = new IdempotencyStore(ds);
  }

  /**
   * `answerBy`: the request answers then (ms since epoch); the first job sends no write after its lease's
   * `sendBy` unless it records a later one, so what it sends lands by `fence.landAt(sendBy)`, stored as land_by.
   */
  async reserve(scope: IdempotencyScope, hash: string, answerBy: number = Date.now() + 600_000, again = false): Promise<Reservation> {
    const now = new Date();
    // With the lease: one vendor call counted (the first job's), held LEASE_SECONDS by this process.
    const lease = this.fence?.reserveLease(answerBy) ?? null;
    const landIn = this.fence && lease ? secondsUntil(this.fence.landAt(lease.sendBy)) : null;
    const inserted = await this.store.insertReservation({
      scope, hash, expiresAt: new Date(now.getTime() + KEEP_MS), ownerInstance: this.fence?.instanceId ?? null,
      leaseToken: lease?.token ?? null, leaseSeconds: LEASE_SECONDS, landInSeconds: landIn,
    });
    if (inserted) return { kind: 'new', id: inserted, takeover: false, generation: 1, lease };

    const existing = await this.store.findRecord(scope);
    if (!existing) {
      // Released since the insert met it (its commit was refused before any send): the key is free, once more.
      if (again) throw new ServiceError('idempotency_in_progress', 'A request with this idempotency_key is still being processed; retry shortly.', { retryAfterSeconds: 1 });
      return this.reserve(scope, hash, answerBy, true);
    }
    const expired = existing.expiresAt.getTime() < now.getTime();
    if (!expired && existing.requestHash !== hash) {
      throw new ServiceError('idempotency_conflict', 'This idempotency_key was used before with a different request body.');
    }
    if (!expired && existing.state === 'completed') {
      return { kind: 'replay', answer: { status: existing.responseStatus ?? 200, body: existing.responseBody ?? {} } };
    }
    // Abandoned: its process is gone (at once), or nothing has touched it for ABANDONED_MS.
    const abandoned = existing.state === 'in_progress'
      && (await this.untouchedTooLong(existing.id) || (await this.fence?.ownerGone(existing.ownerInstance)) === true);
    if (existing.state === 'in_progress' && !expired && !abandoned) {
      throw new ServiceError('idempotency_in_progress', 'A request with this idempotency_key is still being processed; retry shortly.', {
        retryAfterSeconds: 1,
      });
    }
    // Failed, expired or abandoned: take the key over, but only one caller may win the take-over.
    // The row read above is the one taken over (the store checks it is still as read).
    // A new generation: a job of the one taken over sends nothing any more (write-fence.ts).
    const generation = await this.store.takeOver(existing, hash, new Date(now.getTime() + KEEP_MS), this.fence?.instanceId ?? null);
    if (generation == null) {
      throw new ServiceError('idempotency_in_progress', 'A request with this idempotency_key is still being processed; retry shortly.', {
        retryAfterSeconds: 1,
      });
    }
    return { kind: 'new', id: existing.id, takeover: true, generation, lease: null };
  }

  /**
   * Whether nothing has touched the record for ABANDONED_MS, by the database's clock: updated_at is the
   * database's now(), and this process's clock may differ from it (skew, or a test's moved clock).
   */
  private async untouchedTooLong(id: string): Promise<boolean> {
    return this.store.untouchedFor(id, ABANDONED_MS / 1000);
  }

  /**
   * Stores the answer, and in the same statement `withIt` (the commit's audit entry, the rows a reader
   * must find once the answer is given). Only the generation that holds the key may store its answer:
   * a request whose commit was released and taken over (its process judged gone) must not overwrite
   * what the take-over is doing; the rows stored with it are kept all the same. `leases`: tokens of
   * leases no job holds any more (handed back by finished jobs, or never handed out), freed here.
   */
  async complete(reservation: ReservationRef, answer: StoredAnswer, withIt: StoredWith[] = [], leases: string[] = [], landAt: number | null = null): Promise<void> {
    await this.store.storeCompleted(reservation.id, reservation.generation, answer, withIt, leases, landParam(landAt));
  }

  /**
   * The commit did not land: the key may be used again (by the generation that holds it only).
   * `leases`: as for complete; a lease still held by a job that may be at the vendor is never among
   * them, so a take-over waits for that job. `withIt`: as for complete (what landed of a partial write).
   */
  async fail(reservation: ReservationRef, leases: string[] = [], withIt: StoredWith[] = [], landAt: number | null = null): Promise<void> {
    await this.store.storeFailed(reservation.id, reservation.generation, withIt, leases, landParam(landAt));
  }

  /**
   * The commit was refused before anything was sent (schema, vendor rules, references, grants, ambiguity:
   * its prepare and check stage): no result is kept for the key, so the corrected body may use it (as
   * Stripe keeps none for a request that failed validation). Only a fresh reservation, by the generation
   * that holds it: a key taken over after a send stays bound (`fail`), and a request whose reservation was
   * taken over in the meantime deletes nothing.
   */
  async release(reservation: ReservationRef): Promise<void> {
    await this.store.deleteInProgress(reservation.id, reservation.generation);
  }

  /**
   * `fail` once the database answers again: a commit whose failure could not be stored (the database went
   * away) would keep its key in progress, refused as `idempotency_in_progress` while its owner lives, for
   * ABANDONED_MS. Tried each second in the background, fewer times than that lasts.
   */
  failWhenBack(reservation: ReservationRef, leases: string[], landAt: number | null): void {
    void (async () => {
      for (let i = 0; i < FAIL_RETRIES; i++) {
        await sleep(1000, undefined, { ref: false });
        try { return await this.fail(reservation, leases, [], landAt); } catch { /* still unreachable */ }
      }
    })();
  }

  /** The queue refused the job a reserved lease was for: no job adopts it (write-fence.ts, revoke); the outcome frees it. */
  revokeLease(token: string): void {
    this.fence?.revoke(token);
  }

  /** Frees leases that finished jobs handed back, before another job of the reservation takes the lease. */
  async freeLeases(reservation: ReservationRef, leases: string[], landAt: number | null = null): Promise<void> {
    if (!leases.length) return;
    await this.store.freeLeases(reservation.id, leases, landParam(landAt));
  }
}
