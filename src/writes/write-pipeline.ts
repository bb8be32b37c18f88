/**
 * The one write skeleton of docs/architecture.md, Writes, shared by every write: audit, authorise, prepare
 * and check (references, the connector's vendor rules), then preview (the default: the exact vendor
 * requests, nothing sent) or commit: reserve the idempotency key, run a `vendor.write` job per target
 * and wait for it, and store the answer so that a replay returns it. The answer is one of the typed
 * results of src/operations/write-results.ts.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Connection } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import { auditInsert, type AuditInput, type AuditService } from '../audit/audit.service';
import { isvOf, type TenantAccess } from '../access/access.service';
import { isMspOf, isvOfCaller, type Caller } from '../access/caller';
import { capabilitiesOf } from '../connectors/registry';
import type { FieldProblem } from '../connectors/write-types';
import { ServiceError } from '../errors/service-error';
import { writeStatus } from '../operations/write-results';
import { IdempotencyService, requestHash, type StoredWith } from './idempotency.service';
import type { ReservedLease } from './write-fence';
import { VENDOR_WRITE_JOB_OPTIONS, type VendorWriteDone, type VendorWriteFailure, type VendorWriteJob, type VendorWriteOp, type VendorWriteResult } from './vendor-write';

export interface CommitReservation {
  id: string;
  takeover: boolean;
  /** The fence token of this reservation: jobs of an older generation send nothing. */
  generation: number;
  /** The lease reserved with a fresh key, until run() hands it to the first job (write-fence.ts). */
  lease: ReservedLease | null;
  /**
   * Leases that finished jobs handed back instead of freeing them: freed by the next statement about
   * the reservation (its outcome, or before a later job takes the lease), which saves a statement per commit.
   */
  handedLeases: string[];
  /**
   * When a write of a job that handed its lease back may still land (its outcome unknown; ms since epoch,
   * this clock), or null: stored with the freed leases as their landing deadline (write-fence.ts).
   */
  landAt: number | null;
  /** The request answers by then; every job of the commit sends no write after it (ms since epoch). */
  answerBy: number;
  /**
   * Rows a reader must find once the answer is given (a created ticket's link): stored in the one
   * statement that stores the commit's outcome, answer or failure (idempotency.service.ts).
   */
  storeWithAnswer(row: StoredWith): void;
}

export interface TargetOutcome {
  connection: Connection;
  ok: boolean;
  result: VendorWriteDone | null;
  error: ServiceError | null;
}

/** What every write result has; the skeleton reads nothing else of it. */
export interface WriteResultBase {
  dry_run: boolean;
  created?: boolean;
  idempotent_replay?: boolean;
}

export interface WriteSpec<P, Preview extends WriteResultBase, Commit extends WriteResultBase> {
  caller: Caller;
  access: TenantAccess;
  /** Idempotency scope and audit action, e.g. `ticket.create`. */
  operation: string;
  subjectRef?: string | null;
  /** The request body: its hash guards the key, its `dry_run` picks the mode. */
  request: { dry_run: boolean; idempotency_key?: string | null };
  /** Resolve references and check the vendor rules; no side effect. `marker` is the write marker. */
  prepare(marker: string): Promise<P>;
  /** The connections a commit writes to (the limited connector commits only on its fixture host). */
  targets(prepared: P): Connection[];
  preview(prepared: P): Preview;
  commit(prepared: P, reservation: CommitReservation): Promise<Commit>;
  auditDetail?(result: Preview | Commit): Record<string, unknown>;
}

/** The job must have answered this long before the request stops waiting (queue and database latency). */
const answerMargin = (waitMs: number) => Math.min(10_000, Math.floor(waitMs / 4));

export function problemsError(connector: string, problems: FieldProblem[]): ServiceError {
  const first = problems[0];
  return new ServiceError('validation', `${first.field}: ${first.message}`, {
    details: { connector, field: first.field, problems },
  });
}

/**
 * Whose idempotency keys a write uses: the ISV's, or for an MSP key (charge approval) the tenant's
 * own, which no ISV id can equal. Admin callers make no write.
 */
function writeOwner(caller: Caller, tenantId: string): string {
  if (isMspOf(caller, tenantId)) return tenantId;
  return isvOf(caller);
}

/**
 * A commit that landed part of its writes: `answer` goes to the caller, and the key is released (not
 * stored) so that a retry with the same key takes it over and finishes the rest, reconciling first.
 */
export class UnfinishedWrite<R> extends Error {
  constructor(readonly answer: R) {
    super('The write is unfinished; a retry with the same idempotency_key finishes it.');
  }
}

export class WritePipeline {
  constructor(
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly idempotency: IdempotencyService,
    /** Where the sandbox simulators are reached (config.ts, sandboxVendorOrigin). */
    private readonly simulatorOrigin: () => string,
    /** How long a commit waits for its vendor write (WRITE_WAIT_MS). */
    private readonly waitMs = 120_000,
  ) {}

  /** Runs one write through the skeleton. */
  async write<P, Preview extends WriteResultBase, Commit extends WriteResultBase>(spec: WriteSpec<P, Preview, Commit>): Promise<Preview | Commit> {
    const tenantId = spec.access.tenant.id;
    const isvId = writeOwner(spec.caller, tenantId);
    const { dry_run: dryRun, idempotency_key: key } = spec.request;
    const action = `${spec.operation}.${dryRun ? 'preview' : 'commit'}`;
    const subjectRef = spec.subjectRef ?? null;
    const detailOf = spec.auditDetail ?? ((r: Preview | Commit) => ({ status: writeStatus(r) }));
    // A commit's audit entry is stored with its answer, in one statement (once): set when that happened.
    let auditedWithAnswer = false;
    return this.audited(spec.caller, tenantId, action, subjectRef, async () => {
      const marker = this.marker({ isvId, tenantId, operation: spec.operation, key });
      if (dryRun) return spec.preview(await spec.prepare(marker));
      // The request schemas refuse a commit without a key; this guards any other caller of the skeleton.
      if (!key) throw new ServiceError('request_invalid', 'A commit (dry_run false) needs an idempotency_key.');
      // The key decides first: a replay answers what the first commit answered, even when what it checked
      // has changed since (an imported company is no longer a leftover); a refusal frees the key.
      return this.once(isvId, tenantId, spec.operation, key, spec.request, () => spec.prepare(marker), async (prepared, reservation) => {
        for (const c of spec.targets(prepared)) this.assertLiveAllowed(c);
        return spec.commit(prepared, reservation);
      }, (answer) => {
        auditedWithAnswer = true;
        return { tenantId, isvId: auditIsv(spec.caller), action, outcome: 'ok', subjectRef, detail: detailOf(answer) };
      });
    }, detailOf, () => auditedWithAnswer);
  }

  /**
   * The write marker, stored at the vendor so that a write of unknown outcome can be found again. It
   * derives from the idempotency key, so a preview shows the very marker a commit sends and a retry
   * after a failure finds what an earlier try may have landed.
   */
  marker(scope: { isvId: string; tenantId: string; operation: string; key: string | null | undefined }): string {
    if (!scope.key) return `msp-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const h = createHash('sha256').update(`${scope.isvId}\n${scope.tenantId}\n${scope.operation}\n${scope.key}`).digest('hex');
    return `msp-${h.slice(0, 24)}`;
  }

  /** The sandbox simulators are the fixture hosts of the limited connector (rule 14). */
  isFixtureHost(c: Connection): boolean {
    return c.settings?.fixture === true && c.baseUrl.startsWith(`${this.simulatorOrigin()}/sandbox-vendors/`);
  }

  assertLiveAllowed(c: Connection): void {
    if (capabilitiesOf(c.connector).commits === 'fixture_only' && !this.isFixtureHost(c)) {
      throw ServiceError.notSupported(`The ${c.connector} connector is the limited PSA connector: it commits writes only against its fixture host.`);
    }
  }

  /**
   * Runs `commit` once per idempotency key; a replay returns the stored answer with `idempotent_replay: true`.
   * `prepare` (references and vendor rules, no side effect) runs alongside the reservation of a key that
   * is new, and after it when the key is taken over: an earlier commit under the key may have changed
   * what it reads until its very end. A replay ignores what prepare found. `auditOf`: the audit entry
   * stored with the answer.
   */
  private async once<P, R extends WriteResultBase>(
    isvId: string, tenantId: string, operation: string, key: string, body: unknown,
    prepare: () => Promise<P>, commit: (prepared: P, reservation: CommitReservation) => Promise<R>,
    auditOf: (answer: R) => AuditInput,
  ): Promise<R> {
    const early = prepare();
    early.catch(() => undefined); // awaited below, or not needed (replay, refusal of the key)
    const answerBy = Date.now() + this.waitMs - answerMargin(this.waitMs);
    const reservation = await this.idempotency.reserve({ isvId, tenantId, operation, key }, requestHash(body), answerBy);
    if (reservation.kind === 'replay') return { ...(reservation.answer.body as unknown as R), idempotent_replay: true };
    const rows: StoredWith[] = [];
    const held: CommitReservation = {
      id: reservation.id, takeover: reservation.takeover, generation: reservation.generation, lease: reservation.lease,
      handedLeases: [], landAt: null, answerBy, storeWithAnswer: (row) => { rows.push(row); },
    };
    // Leases no job holds: handed back, or reserved with the key and never handed out.
    const idle = () => [...held.handedLeases, ...(held.lease ? [held.lease.token] : [])];
    try {
      const prepared = reservation.takeover ? await prepare() : await early;
      const answer = await commit(prepared, held);
      const audit = auditOf(answer);
      await this.idempotency.complete(reservation, { status: writeStatus(answer), body: answer as unknown as Record<string, unknown> },
        [...rows, (first) => auditInsert(audit, first)], idle(), held.landAt);
      return answer;
    } catch (err) {
      // The rows may be what failed (they were in the answer's statement): the key is freed without them
      // then, and a retry finds the write at the vendor by its marker and stores them again.
      await this.idempotency.fail(reservation, idle(), rows, held.landAt).catch(() => this.idempotency.fail(reservation, idle(), [], held.landAt));
      if (err instanceof UnfinishedWrite) return err.answer as R;
      throw err;
    }
  }

  /**
   * Enqueues one vendor write per target and waits for all. The job id derives from the reservation
   * (a take-over of a failed key gets a fresh one, and reconciles before it sends).
   */
  async run(tenantId: string, reservation: CommitReservation, targets: { connection: Connection; write: VendorWriteOp; step?: string }[]): Promise<TargetOutcome[]> {
    // The lease reserved with the key goes to the first job only, once: the others (more targets, a
    // later step) take the lease in turn, as every job did before.
    const reserved = reservation.lease;
    reservation.lease = null;
    // A job of an earlier step handed its lease back: free it, or this step's job would wait for it.
    await this.idempotency.freeLeases(reservation, reservation.handedLeases.splice(0), reservation.landAt);
    const jobs = await Promise.all(targets.map(async (t, i) => {
      // `step`: several writes of one reservation on one connection (an agreement line replace).
      const jobId = `write-${reservation.id}-${t.connection.id}${t.step ? `-${t.step}` : ''}${reservation.takeover ? `-${randomUUID().slice(0, 8)}` : ''}`;
      const data: VendorWriteJob = {
        tenantId, connectionId: t.connection.id, write: t.write, reconcile: reservation.takeover,
        reservationId: reservation.id, generation: reservation.generation, ...(i === 0 && reserved ? { lease: reserved } : {}),
        // Alone, the job hands its lease back to this request; beside others, it frees it for them at once.
        handBack: targets.length === 1,
        answerBy: new Date(reservation.answerBy).toISOString(),
      };
      const { id } = await this.queue.add('vendor.write', data, { jobId, ...VENDOR_WRITE_JOB_OPTIONS });
      return { t, id };
    }));
    const outcomes: TargetOutcome[] = [];
    for (const { t, id } of jobs) {
      let outcome;
      try {
        outcome = await this.queue.waitFor<VendorWriteResult>(id, Math.max(1000, reservation.answerBy + answerMargin(this.waitMs) - Date.now()));
      } catch {
        outcomes.push({ connection: t.connection, ok: false, result: null, error: new ServiceError('vendor_unavailable', 'The vendor write did not finish in time; its outcome will be reconciled, retry with the same idempotency_key.', { retryAfterSeconds: 30 }) });
        continue;
      }
      const r = outcome.state === 'completed' ? outcome.result : undefined;
      if (r?.handedLease) reservation.handedLeases.push(r.handedLease);
      if (r?.landInMs != null) reservation.landAt = Math.max(reservation.landAt ?? 0, Date.now() + r.landInMs);
      if (r?.ok) outcomes.push({ connection: t.connection, ok: true, result: r, error: null });
      else outcomes.push({ connection: t.connection, ok: false, result: null, error: failureToError(t.connection.connector, r ?? null) });
    }
    return outcomes;
  }

  /** `auditedAlready`: the ok entry was stored with the answer (once), do not write it again. */
  async audited<T>(
    caller: Caller, tenantId: string, action: string, subjectRef: string | null, fn: () => Promise<T>,
    detailOf: (r: T) => Record<string, unknown> = () => ({}), auditedAlready: () => boolean = () => false,
  ): Promise<T> {
    const isvId = auditIsv(caller);
    try {
      const r = await fn();
      if (!auditedAlready()) await this.audit.write({ tenantId, isvId, action, outcome: 'ok', subjectRef, detail: detailOf(r) });
      return r;
    } catch (err) {
      if (err instanceof ServiceError) {
        await this.audit.write({
          tenantId, isvId, action, outcome: err.status >= 500 && err.code !== 'not_supported' ? 'failed' : 'refused', subjectRef,
          detail: { code: err.code, message: err.message, ...(err.extras.needed ? { needed: err.extras.needed } : {}) },
        });
      }
      throw err;
    }
  }
}

/** The ISV an audit entry names (none for an MSP or the operator). */
function auditIsv(caller: Caller): string | null {
  return isvOfCaller(caller);
}

/**
 * A vendor write that did not land, as the caller sees it: throttled 429 with Retry-After, 503 (the
 * vendor unavailable, or an outcome still unknown), 422 with the vendor's field problems, or 502 for a
 * definite refusal only (vendor-http.ts, VendorOutcome). `null`: the job failed in a way it could not
 * type: its outcome is unknown, and a retry with the same key reconciles it by marker first.
 */
export function failureToError(connector: string, f: VendorWriteFailure | null): ServiceError {
  if (!f) {
    return new ServiceError('vendor_unavailable', `The ${connector} write failed without a definite answer. Retry with the same idempotency_key: the retry finds it by its marker or sends it once.`, {
      retryAfterSeconds: 5, details: { outcome: 'unknown' },
    });
  }
  switch (f.kind) {
    case 'throttled':
      return new ServiceError('rate_limited', `${connector} kept throttling the write; nothing was created. Retry after the Retry-After delay.`, {
        retryAfterSeconds: f.retryAfterSeconds ?? 30, details: { vendor_status: f.status },
      });
    case 'budget_spent':
      return new ServiceError('rate_limited', `The MSP's ${connector} API budget, shared by every integration on this connection, is spent for now; nothing was sent. Retry after the Retry-After delay.`, {
        retryAfterSeconds: f.retryAfterSeconds ?? 30,
      });
    case 'unavailable':
      return new ServiceError('vendor_unavailable', `${connector} stayed unavailable; nothing was created.`, {
        retryAfterSeconds: f.retryAfterSeconds ?? 30, details: { vendor_status: f.status },
      });
    case 'validation':
      return problemsError(connector, f.problems.length ? f.problems : [{ field: 'body', message: f.message }]);
    case 'unknown':
      // Not a refusal: the write may have landed or may still land, and no look-up by its marker could
      // tell in time. A retry with the same key waits until it can no longer land, then finds it or sends it once.
      return new ServiceError('vendor_unavailable', `${connector} has not confirmed the write (no answer, a gateway error, or an earlier attempt still in flight), and it may still land. Retry with the same idempotency_key after the Retry-After delay: the retry finds it by its marker or sends it once.`, {
        // vendor_status null: no answer at all (a timeout, a reset, or an earlier attempt still in flight).
        retryAfterSeconds: f.retryAfterSeconds ?? 30, details: { vendor_status: f.status || null, outcome: 'unknown' },
      });
    default:
      return new ServiceError('vendor_error', `${connector} refused the write (HTTP ${f.status}).`, { details: { vendor_status: f.status } });
  }
}
