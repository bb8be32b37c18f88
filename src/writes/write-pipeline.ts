/**
 * The one write skeleton of docs/architecture.md, Writes, shared by every write: audit, authorise, prepare
 * and check (references, the connector's vendor rules), then preview (the default: the exact vendor
 * requests, nothing sent) or commit: reserve the idempotency key, run a `vendor.write` job per target
 * and wait for it, and store the answer so that a replay returns it. The answer is one of the typed
 * results of src/operations/write-results.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Connection } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { AuditService } from '../audit/audit.service';
import { auditInsert, type AuditInput } from '../audit/audit.store';
import { isvOf, type TenantAccess } from '../access/access.service';
import { isvOfCaller, type Caller } from '../access/caller';
import { capabilitiesOf, vendorWrite } from '../connectors/registry';
import type { WriteCall } from '../connectors/vendor-writes';
import type { FieldProblem } from '../connectors/write-types';
import { ServiceError } from '../errors/service-error';
import { targetPreview, writeStatus } from '../operations/write-results';
import { IdempotencyService, requestHash } from './idempotency.service';
import type { StoredWith } from './idempotency.store';
import { writeMarker, writeOwner } from './marker';
import { ticketLinkRows } from './ticket-links';
import type { ReservedLease } from './write-fence';
import { VENDOR_WRITE_JOB_OPTIONS, type VendorWriteDone, type VendorWriteFailure, type VendorWriteJob, type VendorWriteResult } from './vendor-write';

/**
 * One vendor write of a commit: the write by name and its input (src/connectors/vendor-writes.ts), on a
 * connection; `step` when one reservation writes more than once on one connection (an agreement-line replace).
 */
export type PlannedWrite = WriteCall & { connection: Connection; step?: string };

/**
 * What a feature's commit may do under its reservation, and nothing of the fence: the lease, its hand-back
 * and landing time stay in the skeleton (and the job).
 */
export interface CommitRun {
  /** The reservation (idempotency record) the commit runs under. */
  readonly id: string;
  /** An earlier commit under the same key failed or died: this one takes it over (and reconciles). */
  readonly takeover: boolean;
  /** Runs one `vendor.write` job per planned write and waits for their outcomes. */
  send(writes: PlannedWrite[]): Promise<TargetOutcome[]>;
  /** A row a reader must find once the answer is given, stored in the statement that stores the outcome. */
  storeWithAnswer(row: StoredWith): void;
}

/** A reservation as the skeleton holds it while its commit runs (write-fence.ts). */
interface CommitReservation {
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
  commit(prepared: P, run: CommitRun): Promise<Commit>;
  auditDetail?(result: Preview | Commit): Record<string, unknown>;
}

/** A write of one vendor write per target, answered one result per target (FanOut): ticket create, finding route. */
export interface FanOutSpec<F extends Record<string, unknown>, C extends Record<string, unknown> = Record<never, never>> {
  caller: Caller;
  access: TenantAccess;
  /** Idempotency scope and audit action. */
  operation: string;
  subjectRef?: string | null;
  request: { dry_run: boolean; idempotency_key?: string | null };
  /**
   * The writes, planned by the feature's service from the store with the marker of writeMarker (no side
   * effect), the answer's own fields and those only a commit answers. Already started: the skeleton
   * reserves the key meanwhile and awaits it after, so a replay answers what the first commit answered
   * even when planning now refuses.
   */
  plan: Promise<FanOutPlan<F, C>>;
  /** Tickets created go into the link store with the answer: only those take write-back and time. */
  link?: { target: string; findingId: string | null };
}

export interface FanOutPlan<F, C> {
  writes: PlannedWrite[];
  fields: F;
  committed?: C;
}

export type FanOutPreview<F> = { dry_run: true; preview: { targets: ReturnType<typeof targetPreview>[] } } & F;
export type FanOutAnswer<F> = ReturnType<typeof fanOutOf> & F;

/** The job must have answered this long before the request stops waiting (queue and database latency). */
const answerMargin = (waitMs: number) => Math.min(10_000, Math.floor(waitMs / 4));

export function problemsError(connector: string, problems: FieldProblem[]): ServiceError {
  const first = problems[0];
  if (first.code) return new ServiceError(first.code, first.message, { details: { connector, field: first.field, problems } });
  return new ServiceError('validation', `${first.field}: ${first.message}`, {
    details: { connector, field: first.field, problems },
  });
}

/**
 * The vendor's rules for a planned write (the registry's write of its connector, or 501 when the connector
 * does not make it); a problem is 422 `validation` before anything is sent, the same for a preview and
 * its commit.
 */
export function checkWrite(w: PlannedWrite): void {
  const problems = vendorWrite(w.connection.connector, w.name).check(w.input as never);
  if (problems.length) throw problemsError(w.connection.connector, problems);
}

/** The exact vendor requests of planned writes, per target, in order; nothing is sent. */
export function previewWrites(writes: PlannedWrite[]): ReturnType<typeof targetPreview>[] {
  const targets = new Map<string, ReturnType<typeof targetPreview>>();
  for (const w of writes) {
    const t = targets.get(w.connection.id) ?? targetPreview(w.connection, []);
    t.requests.push(...vendorWrite(w.connection.connector, w.name).preview(w.input as never));
    targets.set(w.connection.id, t);
  }
  return [...targets.values()];
}

/** One result per target; partial failure explicit; all failed: the (first) failure itself. */
export function fanOutOf(outcomes: TargetOutcome[]) {
  const ok = outcomes.filter((o) => o.ok);
  if (ok.length === 0) throw outcomes[0].error!;
  const results = outcomes.map((o) => ({
    connection_id: o.connection.id, connector: o.connection.connector, ok: o.ok,
    ticket_ref: o.result?.ticketRef ?? null, note_ref: o.result?.noteRef ?? null, reconciled: o.result?.reconciled ?? false,
    error: o.error ? { code: o.error.code, message: o.error.message, status: o.error.status } : null,
  }));
  return {
    dry_run: false as const, idempotent_replay: false, partial_failure: ok.length < outcomes.length,
    ticket_ref: ok[0].result?.ticketRef ?? null, results,
  };
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
      const marker = writeMarker(isvId, tenantId, spec.operation, key);
      if (dryRun) return spec.preview(await spec.prepare(marker));
      // The request schemas refuse a commit without a key; this guards any other caller of the skeleton.
      if (!key) throw new ServiceError('request_invalid', 'A commit (dry_run false) needs an idempotency_key.');
      // The key decides first: a replay answers what the first commit answered, even when what it checked
      // has changed since (an imported company is no longer a leftover). The check stage of a commit is
      // the preview's, and where it commits (the limited connector's fixture host, rule 14): a refusal
      // there keeps nothing for the key.
      const check = async () => {
        const prepared = await spec.prepare(marker);
        for (const c of spec.targets(prepared)) this.assertLiveAllowed(c);
        return prepared;
      };
      return this.once(isvId, tenantId, spec.operation, key, spec.request, check, async (prepared, reservation) => {
        return spec.commit(prepared, this.runOf(tenantId, reservation));
      }, (answer) => {
        auditedWithAnswer = true;
        return { tenantId, isvId: auditIsv(spec.caller), action, outcome: 'ok', subjectRef, detail: detailOf(answer) };
      });
    }, detailOf, () => auditedWithAnswer);
  }

  /**
   * A fan-out write, in one direction: the planned writes are checked against their vendors' rules, then
   * previewed, or committed once per key (one `vendor.write` job each) and answered one result per target;
   * created tickets are linked with the answer. Nothing here calls back into the feature.
   */
  async fanOut<F extends Record<string, unknown>, C extends Record<string, unknown> = Record<never, never>>(spec: FanOutSpec<F, C>): Promise<FanOutPreview<F> | FanOutAnswer<F & C>> {
    const tenantId = spec.access.tenant.id;
    const planned = spec.plan.then((p) => {
      for (const w of p.writes) checkWrite(w);
      return p;
    });
    const ticketRefs = (r: FanOutPreview<F> | FanOutAnswer<F & C>) => ({ dry_run: r.dry_run, ticket_refs: r.dry_run ? [] : (r as FanOutAnswer<F & C>).results.map((x) => x.ticket_ref) });
    return this.write<FanOutPlan<F, C>, FanOutPreview<F>, FanOutAnswer<F & C>>({
      caller: spec.caller, access: spec.access, operation: spec.operation, subjectRef: spec.subjectRef, request: spec.request,
      prepare: () => planned,
      targets: (p) => p.writes.map((w) => w.connection),
      preview: (p) => ({ dry_run: true as const, preview: { targets: previewWrites(p.writes) }, ...p.fields }),
      commit: async (p, run) => {
        const outcomes = await run.send(p.writes);
        if (spec.link) {
          const isvId = isvOf(spec.caller);
          for (const row of ticketLinkRows(tenantId, isvId, outcomes, spec.link.findingId, spec.link.target)) run.storeWithAnswer(row);
        }
        return { ...fanOutOf(outcomes), ...p.fields, ...(p.committed as C) };
      },
      auditDetail: ticketRefs,
    });
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
   * what it reads until its very end. A replay ignores what prepare found. A refusal of `prepare` sent
   * nothing: a new key keeps no result (the corrected body may use it), a key taken over stays bound to
   * the body an earlier commit sent. A failure of `commit` keeps the key bound to its body for a take-over,
   * which reconciles by marker. `auditOf`: the audit entry stored with the answer.
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
    let prepared: P;
    try {
      prepared = reservation.takeover ? await prepare() : await early;
    } catch (err) {
      // A database that fails here too leaves the record in progress: taken over once abandoned (idempotency.service.ts).
      const refused = reservation.takeover ? this.idempotency.fail(reservation, idle(), [], held.landAt) : this.idempotency.release(reservation);
      await refused.catch(() => undefined);
      throw err;
    }
    try {
      const answer = await commit(prepared, held);
      const audit = auditOf(answer);
      await this.idempotency.complete(reservation, { status: writeStatus(answer), body: answer as unknown as Record<string, unknown> },
        [...rows, (first) => auditInsert(audit, first)], idle(), held.landAt);
      return answer;
    } catch (err) {
      // The rows may be what failed (they were in the answer's statement): the key is freed without them
      // then, and a retry finds the write at the vendor by its marker and stores them again.
      await this.idempotency.fail(reservation, idle(), rows, held.landAt).catch(() => this.idempotency.fail(reservation, idle(), [], held.landAt))
        // The database itself is gone: the key is freed once it is back (a retry then takes it over).
        .catch(() => this.idempotency.failWhenBack(reservation, idle(), held.landAt));
      if (err instanceof UnfinishedWrite) return err.answer as R;
      throw err;
    }
  }

  /** What the feature's commit sees of its reservation. */
  private runOf(tenantId: string, reservation: CommitReservation): CommitRun {
    return {
      id: reservation.id, takeover: reservation.takeover,
      send: (writes) => this.run(tenantId, reservation, writes),
      storeWithAnswer: (row) => reservation.storeWithAnswer(row),
    };
  }

  /**
   * Enqueues one vendor write per target and waits for all. The job id derives from the reservation
   * (a take-over of a failed key gets a fresh one, and reconciles before it sends).
   */
  private async run(tenantId: string, reservation: CommitReservation, targets: PlannedWrite[]): Promise<TargetOutcome[]> {
    // The lease reserved with the key goes to the first job only, once: the others (more targets, a
    // later step) take the lease in turn, as every job did before.
    const reserved = reservation.lease;
    reservation.lease = null;
    // A job of an earlier step handed its lease back: free it, or this step's job would wait for it.
    await this.idempotency.freeLeases(reservation, reservation.handedLeases.splice(0), reservation.landAt);
    const adding = Promise.all(targets.map(async (t, i) => {
      // `step`: several writes of one reservation on one connection (an agreement line replace).
      const jobId = `write-${reservation.id}-${t.connection.id}${t.step ? `-${t.step}` : ''}${reservation.takeover ? `-${randomUUID().slice(0, 8)}` : ''}`;
      const data: VendorWriteJob = {
        tenantId, connectionId: t.connection.id, write: { name: t.name, input: t.input } as WriteCall, reconcile: reservation.takeover,
        reservationId: reservation.id, generation: reservation.generation, ...(i === 0 && reserved ? { lease: reserved } : {}),
        // Alone, the job hands its lease back to this request; beside others, it frees it for them at once.
        handBack: targets.length === 1,
        answerBy: new Date(reservation.answerBy).toISOString(),
      };
      const { id } = await this.queue.add('vendor.write', data, { jobId, ...VENDOR_WRITE_JOB_OPTIONS });
      return { t, id };
    }));
    const jobs = await adding.catch((err: unknown) => {
      // The queue refused a job (Redis down): the lease reserved for the first one is freed with the
      // failure, never adopted, so a retry after the outage takes the key over at once instead of
      // waiting out the lease (LEASE_SECONDS). A job that exists all the same finds the key failed and sends nothing.
      if (reserved) {
        this.idempotency.revokeLease(reserved.token);
        reservation.lease = reserved;
      }
      throw err;
    });
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
    case 'not_supported':
      return ServiceError.notSupported(f.message);
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
