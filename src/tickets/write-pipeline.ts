/**
 * The write pipeline of design.md section 6, shared by ticket create, ticket write-back, time and
 * findings: preview (the default) shows the exact vendor requests and changes nothing; a commit
 * reserves its idempotency key, runs a `vendor.write` job per target and waits for it, and stores the
 * answer so that a replay returns it. Every commit and every refusal is audited.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Connection } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { AuditService } from '../audit/audit.service';
import { LIMITED_PSA_CONNECTORS } from '../connectors/registry';
import type { FieldProblem } from '../connectors/write-types';
import { ServiceError } from '../errors/service-error';
import type { Caller } from '../tenants/caller';
import type { TenantAccess } from '../tenants/access.service';
import { IdempotencyService, requestHash, type StoredAnswer } from './idempotency.service';
import { decodeFailure, VENDOR_WRITE_JOB_OPTIONS, type VendorWriteJob, type VendorWriteOp, type VendorWriteResult } from './vendor-write';

export interface WriteAnswer {
  status: number;
  body: Record<string, unknown>;
}

export interface CommitReservation {
  id: string;
  takeover: boolean;
}

export interface TargetOutcome {
  connection: Connection;
  ok: boolean;
  result: VendorWriteResult | null;
  error: ServiceError | null;
}

const WAIT_MS = 120_000;

export function problemsError(connector: string, problems: FieldProblem[]): ServiceError {
  const first = problems[0];
  return new ServiceError('validation', `${first.field}: ${first.message}`, {
    details: { connector, field: first.field, problems },
  });
}

export class WritePipeline {
  constructor(
    private readonly queue: JobQueue,
    private readonly audit: AuditService,
    private readonly idempotency: IdempotencyService,
    private readonly publicUrl: () => string,
  ) {}

  /**
   * The write marker, stored at the vendor so that a write of unknown outcome can be found again.
   * With an idempotency key it derives from it, so a preview shows the very marker a commit sends and
   * a retry after a failure finds what an earlier try may have landed.
   */
  marker(scope?: { isvId: string; tenantId: string; operation: string; key: string | null | undefined }): string {
    if (!scope?.key) return `msp-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const h = createHash('sha256').update(`${scope.isvId}\n${scope.tenantId}\n${scope.operation}\n${scope.key}`).digest('hex');
    return `msp-${h.slice(0, 24)}`;
  }

  /** The sandbox simulators are the fixture hosts of the limited connector (rule 14). */
  isFixtureHost(c: Connection): boolean {
    return c.settings?.fixture === true && c.baseUrl.startsWith(`${this.publicUrl()}/sandbox-vendors/`);
  }

  assertLiveAllowed(c: Connection): void {
    if (LIMITED_PSA_CONNECTORS.includes(c.connector) && !this.isFixtureHost(c)) {
      throw ServiceError.notSupported(`The ${c.connector} connector is the limited PSA connector: it commits writes only against its fixture host.`);
    }
  }

  /**
   * Runs `commit` once per idempotency key. Without a key the commit simply runs. A replay returns the
   * stored answer with `idempotent_replay: true`.
   */
  async once(
    caller: Caller & { kind: 'isv' },
    access: TenantAccess,
    operation: string,
    key: string | null | undefined,
    body: unknown,
    commit: (reservation: CommitReservation | null) => Promise<WriteAnswer>,
  ): Promise<WriteAnswer> {
    if (!key) return commit(null);
    const scope = { isvId: caller.isvId, tenantId: access.tenant.id, operation, key };
    const reservation = await this.idempotency.reserve(scope, requestHash(body));
    if (reservation.kind === 'replay') {
      return { status: reservation.answer.status, body: { ...reservation.answer.body, idempotent_replay: true } };
    }
    try {
      const answer = await commit({ id: reservation.id, takeover: reservation.takeover });
      if (answer.status < 300) await this.idempotency.complete(reservation.id, answer as StoredAnswer);
      else await this.idempotency.fail(reservation.id);
      return answer;
    } catch (err) {
      await this.idempotency.fail(reservation.id);
      throw err;
    }
  }

  /**
   * Enqueues one vendor write per target and waits for all. The job id derives from the reservation
   * (a take-over of a failed key gets a fresh one, and reconciles before it sends).
   */
  async run(tenantId: string, reservation: CommitReservation | null, targets: { connection: Connection; write: VendorWriteOp }[]): Promise<TargetOutcome[]> {
    const jobs = await Promise.all(targets.map(async (t) => {
      const jobId = reservation
        ? `write-${reservation.id}-${t.connection.id}${reservation.takeover ? `-${randomUUID().slice(0, 8)}` : ''}`
        : `write-${randomUUID()}`;
      const data: VendorWriteJob = { tenantId, connectionId: t.connection.id, write: t.write, reconcile: reservation?.takeover ?? false };
      const { id } = await this.queue.add<VendorWriteJob>('vendor.write', data, { jobId, ...VENDOR_WRITE_JOB_OPTIONS });
      return { t, id };
    }));
    const outcomes: TargetOutcome[] = [];
    for (const { t, id } of jobs) {
      let outcome;
      try {
        outcome = await this.queue.waitFor<VendorWriteResult>(id, WAIT_MS);
      } catch {
        outcomes.push({ connection: t.connection, ok: false, result: null, error: new ServiceError('vendor_unavailable', 'The vendor write did not finish in time; its outcome will be reconciled, retry with the same idempotency_key.', { retryAfterSeconds: 30 }) });
        continue;
      }
      if (outcome.state === 'completed') {
        outcomes.push({ connection: t.connection, ok: true, result: outcome.result ?? null, error: null });
      } else {
        outcomes.push({ connection: t.connection, ok: false, result: null, error: failureToError(t.connection.connector, outcome.error) });
      }
    }
    return outcomes;
  }

  async audited<T>(
    caller: Caller, tenantId: string, action: string, subjectRef: string | null, fn: () => Promise<T>,
    detailOf: (r: T) => Record<string, unknown> = () => ({}),
  ): Promise<T> {
    const isvId = caller.kind === 'isv' ? caller.isvId : null;
    try {
      const r = await fn();
      await this.audit.write({ tenantId, isvId, action, outcome: 'ok', subjectRef, detail: detailOf(r) });
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

/** A failed vendor-write job as the caller sees it: throttled 429 with Retry-After, 422, 502, 503. */
export function failureToError(connector: string, message: string | undefined): ServiceError {
  const f = decodeFailure(message);
  if (!f) return new ServiceError('vendor_error', `The ${connector} write failed.`);
  switch (f.kind) {
    case 'throttled':
      return new ServiceError('rate_limited', `${connector} kept throttling the write; nothing was created. Retry after the Retry-After delay.`, {
        retryAfterSeconds: f.retryAfterSeconds ?? 30, details: { vendor_status: f.status },
      });
    case 'unavailable':
      return new ServiceError('vendor_unavailable', `${connector} stayed unavailable; nothing was created.`, {
        retryAfterSeconds: f.retryAfterSeconds ?? 30, details: { vendor_status: f.status },
      });
    case 'validation':
      return problemsError(connector, f.problems?.length ? f.problems : [{ field: 'body', message: f.message }]);
    default:
      return new ServiceError('vendor_error', `${connector} refused the write (HTTP ${f.status}).`, { details: { vendor_status: f.status } });
  }
}
