/**
 * The `vendor.write` job: every create is reconciled by its marker before it is sent when the job may
 * have run before (a retry, a worker that died mid-job, a key whose earlier commit failed); 429/503
 * and writes that certainly did not land are retried with backoff honouring Retry-After; a write whose
 * outcome is unknown (vendor-http.ts, VendorOutcome) is looked up by its marker until it can no longer
 * land before anything is answered; the last failure is returned as a typed VendorWriteFailure to the
 * request that waits for it.
 */
import type { AccessService } from '../../src/access/access.service';
import { computeBackoffDelay } from '../queue/retry-policy';
import { RetryAfterError, type JobContext } from '../queue/types';
import type { WriteContext } from '../../src/connectors/write-types';
import type { VendorWrite, WriteCall, WriteRefs } from '../../src/connectors/vendor-writes';
import { VendorHttpError, type VendorHttpClient } from '../../src/connectors/vendor-http';
import { VendorValidationError } from '../../src/connectors/vendor-errors';
import { lookupWrite, type WriteNotSupported } from '../../src/connectors/registry';
import type { SecretBox } from '../../src/security/secret-box';
import { LEASE_SECONDS, type LeaseOutcome, type WriteFence } from '../../src/writes/write-fence';
import type { ConnectionBudgets } from '../../src/budget/connection-budgets';
import { BudgetSpent } from '../../src/budget/vendor-budget';
import {
  VENDOR_WRITE_BACKOFF, type VendorWriteDone, type VendorWriteFailure, type VendorWriteJob, type VendorWriteResult,
} from '../../src/writes/vendor-write';

function asProblems(err: unknown): { field: string; message: string }[] | null {
  const p = (err as { problems?: unknown })?.problems;
  return Array.isArray(p) ? (p as { field: string; message: string }[]) : null;
}

function failure(kind: VendorWriteFailure['kind'], status: number, message: string, extra: Partial<VendorWriteFailure> = {}): VendorWriteFailure {
  return { ok: false, kind, status, message, retryAfterSeconds: null, problems: [], ...extra };
}

export function vendorWriteProcessor(
  connections: Pick<AccessService, 'connection'>, box: SecretBox, http: VendorHttpClient, budgets: ConnectionBudgets | null = null, fence: WriteFence | null = null,
  vendorNow: () => number = Date.now,
) {
  return async (job: JobContext<VendorWriteJob>): Promise<VendorWriteResult> => {
    const answerBy = job.data.answerBy ? Date.parse(job.data.answerBy) : Infinity;
    // The request has answered already (the worker took the job late): send nothing. A retry with the
    // same key takes the write over and reconciles first.
    if (Date.now() > answerBy) return startedTooLate(job, fence);
    const sendUntil = Math.min(answerBy, Date.now() + 120_000);
    const { read, lease } = await connectionAndLease(job, connections, fence, sendUntil);
    const held = heldLease(job, fence, lease, sendUntil, answerBy, fence?.landingMs ?? http.opts.timeoutMs);
    // Nothing was sent: the lease is freed once the database answers again (releaseEventually).
    if (read.status === 'rejected') {
      if (lease?.kind === 'held') void fence!.releaseEventually(job.data.reservationId!, lease.token, Date.now() + LEASE_SECONDS * 1000);
      throw read.reason;
    }
    const connection = read.value;
    if (lease?.kind === 'stale') return failure('unavailable', 409, 'This write was taken over by a retry with the same idempotency_key; this attempt sent nothing.', { retryAfterSeconds: 1 });
    // An earlier attempt is still in flight, or what it sent may still land: its outcome is not known yet.
    if (lease?.kind === 'busy') {
      return failure('unknown', 0, 'An earlier attempt of this write may still land at the vendor; this attempt sent nothing.', {
        retryAfterSeconds: lease.retryAfterMs != null ? Math.max(1, Math.ceil(lease.retryAfterMs / 1000)) : 5,
      });
    }
    try {
      const ctx: WriteContext = {
        baseUrl: connection.baseUrl.replace(/\/$/, ''),
        credentials: box.openJson<Record<string, string>>(connection.credentialsEncrypted),
        now: vendorNow,
        // Writes (and the reads a write makes) go first in the connection's budget.
        // A call the budget could not admit before the request answers is refused at once (BudgetSpent).
        http: (budgets ? http.withBudget(budgets.gate(connection, 'write', Number.isFinite(answerBy) ? answerBy : undefined)) : http)
          .withFence({ beforeSend: held.beforeSend, unknown: (sentAt) => { held.landing.sentAt = Math.max(held.landing.sentAt ?? 0, sentAt); } }),
      };
      const p = plan(connection.connector, job.data.write);
      if ('refused' in p) return held.answer(failure('not_supported', 501, p.message));
      return held.answer(await settle(p, ctx, job.redelivered || job.data.reconcile === true || lease?.reconcile === true, held.landing, held.landingMs, answerBy));
    } catch (err) {
      return held.answer(failureOfWriteError(err, job, answerBy));
    } finally {
      held.release();
    }
  };
}

/** The answer of a job that starts after its request stopped waiting: nothing is sent. */
async function startedTooLate(job: JobContext<VendorWriteJob>, fence: WriteFence | null): Promise<VendorWriteFailure> {
  // The lease reserved with the key is this job's alone, and on its first delivery nothing has been
  // sent under it: free it now, or every retry waits out LEASE_SECONDS (after a worker<->Redis
  // partition the late first job was the only thing holding a retry back, for about a minute).
  const reserved = job.data.lease;
  if (fence && reserved && job.data.reservationId && job.attempt === 1 && !job.redelivered) {
    await fence.releaseEventually(job.data.reservationId, reserved.token, reserved.takenAt + LEASE_SECONDS * 1000);
  }
  return failure('unavailable', 503, 'The request stopped waiting before this attempt could start; nothing was sent.', { retryAfterSeconds: 1 });
}

/**
 * The connection read, and the fence (write-fence.ts): the reservation's lease across the vendor call; a
 * job of a taken-over generation sends nothing, and a call that may follow another reconciles first. Taken
 * while the connection is read (cached in access.service.ts; independent round trips).
 */
async function connectionAndLease(job: JobContext<VendorWriteJob>, connections: Pick<AccessService, 'connection'>, fence: WriteFence | null, sendUntil: number) {
  // The lease taken with the reservation is this job's when it runs where and when that allows (adopt),
  // and it may take it over by its token elsewhere on its first attempt.
  const { reservationId, generation } = job.data;
  const adopted = fence?.adopt(job.data.lease, job) ?? null;
  const reservedToken = job.attempt === 1 && !job.redelivered ? (job.data.lease?.token ?? null) : null;
  const [read, leased] = await Promise.allSettled([
    connections.connection(job.data.connectionId),
    adopted ?? (fence && reservationId && generation != null
      ? fence.acquire(reservationId, generation, `${job.id}:${job.attempt}`, sendUntil, reservedToken, sendUntil)
      : null),
  ]);
  if (leased.status === 'rejected') {
    // The lease could not be taken (the database is out of reach): nothing was sent. The lease reserved
    // with the key, handed to this first attempt alone, is freed as soon as the database answers, so a
    // retry with the key is not held until it lapses.
    if (reservedToken && reservationId) void fence!.releaseEventually(reservationId, reservedToken, (job.data.lease?.takenAt ?? Date.now()) + LEASE_SECONDS * 1000);
    throw leased.reason;
  }
  return { read, lease: leased.value };
}

/** How the job keeps its lease: the send deadline, the landing of a write of unknown outcome, and the lease's release. */
function heldLease(job: JobContext<VendorWriteJob>, fence: WriteFence | null, lease: LeaseOutcome | null, sendUntil: number, answerBy: number, landingMs: number) {
  const reservationId = job.data.reservationId;
  // No write starts after the lease's send deadline unless a later one is recorded first (write-fence.ts
  // extend), and none after the request answers: what the job sends lands by fence.landAt(sendBy).
  let sendBy = lease?.kind === 'held' ? lease.sendBy : sendUntil;
  const beforeSend = async (): Promise<boolean> => {
    if (Date.now() < sendBy) return true;
    if (!fence || lease?.kind !== 'held' || Date.now() >= sendUntil) return false;
    const next = fence.sendByFor(sendUntil);
    if (!(await fence.extend(reservationId!, lease.token, next))) return false;
    sendBy = next;
    return true;
  };
  // The latest write of this job whose outcome is unknown: it may land until landAt.
  const landing = { sentAt: null as number | null };
  const landAt = () => (landing.sentAt == null ? null : landing.sentAt + landingMs);
  // Freed in the background: the answer does not wait for it (a lost release only delays the next holder).
  let handed = false;
  const release = () => { if (lease?.kind === 'held' && !handed) void fence!.release(reservationId!, lease.token, landAt()).catch(() => undefined); };
  // Or handed back with the answer, when the request still waits for it (it frees the lease in the
  // statement that stores the outcome). A job that throws for a retry, or answers after the request
  // stopped waiting, frees it itself: nobody else would.
  const answer = (r: VendorWriteResult): VendorWriteResult => {
    if (lease?.kind !== 'held' || !job.data.handBack || Date.now() >= answerBy) return r;
    handed = true;
    const at = landAt();
    return { ...r, handedLease: lease.token, ...(at != null ? { landInMs: Math.max(0, at - Date.now()) } : {}) };
  };
  return { beforeSend, landing, landingMs, release, answer };
}

/** What a failed write answers; or thrown again, for a retry (RetryAfterError) or as ours. */
function failureOfWriteError(err: unknown, job: JobContext<VendorWriteJob>, answerBy: number): VendorWriteFailure {
  if (err instanceof BudgetSpent) return failure('budget_spent', 429, err.message, { retryAfterSeconds: Math.max(1, Math.ceil(err.retryInMs / 1000)) });
  if (err instanceof OutcomeUnknown) {
    return failure('unknown', err.vendorError.status, err.vendorError.message, { retryAfterSeconds: Math.max(1, Math.ceil((err.landAt - Date.now()) / 1000)) });
  }
  const problems = asProblems(err);
  if (problems) return failure('validation', 422, (err as Error).message, { problems });
  // The one classification (vendor-http.ts): only a definite refusal is `refused`; throttling, an
  // outage, and a write that certainly did not land (sent nowhere, or not found once it could no
  // longer land) are tried again.
  const outcome = err instanceof VendorHttpError ? err.outcome : null;
  if (err instanceof VendorHttpError && outcome !== 'refused') {
    const retryAfterSeconds = err.retryAfterMs != null ? Math.ceil(err.retryAfterMs / 1000) : null;
    const delay = Math.max(err.retryAfterMs ?? 0, computeBackoffDelay(VENDOR_WRITE_BACKOFF, job.attempt));
    // The last attempt answers, and so does one whose next try could not start before the request
    // answers (a long vendor Retry-After): the caller gets the vendor's 429 at once, and nothing lands later.
    if (job.attempt >= job.attempts || Date.now() + delay > answerBy) {
      return failure(err.status === 429 ? 'throttled' : 'unavailable', err.status, err.message, { retryAfterSeconds });
    }
    throw new RetryAfterError(delay, err);
  }
  if (err instanceof VendorHttpError) return failure('refused', err.status, err.message);
  if (err instanceof VendorValidationError) return failure('validation', 422, err.message, { problems: err.problems });
  throw err;
}

/** The write could not be confirmed either way before the request answers: it may still land until `landAt`. */
class OutcomeUnknown extends Error {
  constructor(readonly landAt: number, readonly vendorError: VendorHttpError) {
    super(vendorError.message);
  }
}

/** Waits between the look-ups that follow a write of unknown outcome (then the last one, repeated). */
const LOOKUP_WAITS_MS = [0, 250, 500, 1000, 2000, 4000, 8000];
/** At most this many look-ups for one write of unknown outcome. */
const MAX_LOOKUPS = 12;

/**
 * Sends the write, and settles an unknown outcome before anything is answered (docs/architecture.md, Writes): the write is
 * looked up by its marker, again and again (bounded), until it is found (it landed: reconciled) or until
 * it can no longer land (`landingMs` after it was sent: then it certainly did not, and the error is
 * thrown for a retry). If the request must answer first, OutcomeUnknown: the caller is told to retry
 * with the same key, and the lease keeps the landing time so that the retry waits for it.
 * `reconcileFirst`: this job may have run before: look the marker up before sending anything.
 */
async function settle(p: WritePlan, ctx: WriteContext, reconcileFirst: boolean, landing: { sentAt: number | null }, landingMs: number, answerBy: number): Promise<VendorWriteDone> {
  const found = reconcileFirst && p.find ? await p.find(ctx) : null;
  if (found) return found;
  try {
    return await p.send(ctx);
  } catch (err) {
    if (!(err instanceof VendorHttpError) || err.outcome !== 'unknown' || landing.sentAt == null) throw err;
    // Sending it again is harmless when the write has no marker to find (absolute values).
    if (!p.find) { landing.sentAt = null; throw err; }
    const landAt = landing.sentAt + landingMs;
    for (let i = 0; i < MAX_LOOKUPS; i++) {
      const wait = LOOKUP_WAITS_MS[Math.min(i, LOOKUP_WAITS_MS.length - 1)];
      // Past its landing time, one last look-up is the answer.
      const at = Math.min(Date.now() + wait, Math.max(Date.now(), landAt));
      if (at > answerBy) break;
      await new Promise((r) => setTimeout(r, at - Date.now()));
      const landedAlready = Date.now() > landAt;
      const hit = await p.find(ctx).catch(() => null); // a failed look-up proves nothing: look again
      if (hit) { landing.sentAt = null; return hit; }
      if (landedAlready) { landing.sentAt = null; throw err; } // it can no longer land: certainly not sent
    }
    throw new OutcomeUnknown(landAt, err);
  }
}

/** One write: how to find it by its marker (null: it has none, resending is harmless) and how to send it. */
interface WritePlan {
  find: ((ctx: WriteContext) => Promise<VendorWriteDone | null>) | null;
  send: (ctx: WriteContext) => Promise<VendorWriteDone>;
}

const NOTHING: VendorWriteDone = { ok: true, ticketRef: null, noteRef: null, timeEntryRef: null, companyRef: null, native: null, reconciled: false };

/** The declared write of the connection's connector (src/connectors/registry.ts), as a plan; or the typed refusal. */
function plan(connector: string, call: WriteCall): WritePlan | WriteNotSupported {
  const found = lookupWrite(connector, call.name);
  if ('refused' in found) return found;
  // The registry is keyed by name; the call's input is the input of that name (WriteCall pairs them).
  const w = found.write as VendorWrite<unknown>;
  const done = (refs: WriteRefs, reconciled: boolean): VendorWriteDone => ({ ...NOTHING, ...refs, reconciled });
  const marked = w.find && (w.marked?.(call.input) ?? true);
  return {
    find: marked ? async (ctx) => { const hit = await w.find!(ctx, call.input); return hit ? done(hit, true) : null; } : null,
    send: async (ctx) => done(await w.send(ctx, call.input), false),
  };
}
