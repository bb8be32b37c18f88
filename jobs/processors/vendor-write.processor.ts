/**
 * The `vendor.write` job: every create is reconciled by its marker before it is sent when the job may
 * have run before (a retry, a worker that died mid-job, a key whose earlier commit failed); 429/503
 * and lost connections are retried with backoff honouring Retry-After; the last failure is returned as
 * a typed VendorWriteFailure to the request that waits for it.
 */
import type { AccessService } from '../../src/access/access.service';
import { computeBackoffDelay } from '../queue/retry-policy';
import { RetryAfterError, type JobContext } from '../queue/types';
import type { TimeEntryDraft, WriteConnector, WriteContext } from '../../src/connectors/write-types';
import { VendorHttpError, type VendorHttpClient } from '../../src/connectors/vendor-http';
import { agreementLineWriter, deviceWriter, distributorWriter, projectWriter, writeConnector } from '../../src/connectors/registry';
import type { SecretBox } from '../../src/security/secret-box';
import type { WriteFence } from '../../src/writes/write-fence';
import type { ConnectionBudgets } from '../../src/budget/connection-budgets';
import { BudgetSpent } from '../../src/budget/vendor-budget';
import {
  VENDOR_WRITE_BACKOFF, type VendorWriteDone, type VendorWriteFailure, type VendorWriteJob, type VendorWriteOp, type VendorWriteResult,
} from '../../src/writes/vendor-write';

function asProblems(err: unknown): { field: string; message: string }[] | null {
  const p = (err as { problems?: unknown })?.problems;
  return Array.isArray(p) ? (p as { field: string; message: string }[]) : null;
}

function failure(kind: VendorWriteFailure['kind'], status: number, message: string, extra: Partial<VendorWriteFailure> = {}): VendorWriteFailure {
  return { ok: false, kind, status, message, retryAfterSeconds: null, problems: [], ...extra };
}

export function vendorWriteProcessor(connections: Pick<AccessService, 'connection'>, box: SecretBox, http: VendorHttpClient, budgets: ConnectionBudgets | null = null, fence: WriteFence | null = null) {
  return async (job: JobContext<VendorWriteJob>): Promise<VendorWriteResult> => {
    const answerBy = job.data.answerBy ? Date.parse(job.data.answerBy) : Infinity;
    // The request has answered already (the worker took the job late): send nothing. A retry with the
    // same key takes the write over and reconciles first.
    if (Date.now() > answerBy) return failure('unavailable', 503, 'The request stopped waiting before this attempt could start; nothing was sent.', { retryAfterSeconds: 1 });
    // The fence (write-fence.ts): the reservation's lease across the vendor call; a job of a taken-over
    // generation sends nothing, and a call that may follow another reconciles first. Taken while the
    // connection is read (cached in access.service.ts; independent round trips).
    // The lease taken with the reservation is this job's when it runs where and when that allows (adopt),
    // and it may take it over by its token elsewhere on its first attempt.
    const { reservationId, generation } = job.data;
    const adopted = fence?.adopt(job.data.lease, job) ?? null;
    const reservedToken = job.attempt === 1 && !job.redelivered ? (job.data.lease?.token ?? null) : null;
    const [read, leased] = await Promise.allSettled([
      connections.connection(job.data.connectionId),
      adopted ?? (fence && reservationId && generation != null
        ? fence.acquire(reservationId, generation, `${job.id}:${job.attempt}`, Math.min(answerBy, Date.now() + 120_000), reservedToken)
        : null),
    ]);
    if (leased.status === 'rejected') throw leased.reason;
    const lease = leased.value;
    // Freed in the background: the answer does not wait for it (a lost release only delays the next holder).
    let handed = false;
    const release = () => { if (lease?.kind === 'held' && !handed) void fence!.release(reservationId!, lease.token).catch(() => undefined); };
    // Or handed back with the answer, when the request still waits for it (it frees the lease in the
    // statement that stores the outcome). A job that throws for a retry, or answers after the request
    // stopped waiting, frees it itself: nobody else would.
    const answer = (r: VendorWriteResult): VendorWriteResult => {
      if (lease?.kind !== 'held' || !job.data.handBack || Date.now() >= answerBy) return r;
      handed = true;
      return { ...r, handedLease: lease.token };
    };
    if (read.status === 'rejected') { release(); throw read.reason; }
    const connection = read.value;
    if (lease?.kind === 'stale') return failure('unavailable', 409, 'This write was taken over by a retry with the same idempotency_key; this attempt sent nothing.', { retryAfterSeconds: 1 });
    if (lease?.kind === 'busy') return failure('unavailable', 503, 'Another attempt of this write is still in flight at the vendor; nothing was sent. Retry with the same idempotency_key.', { retryAfterSeconds: 5 });
    try {
      const ctx: WriteContext = {
        baseUrl: connection.baseUrl.replace(/\/$/, ''),
        credentials: box.openJson<Record<string, string>>(connection.credentialsEncrypted),
        // Writes (and the reads a write makes) go first in the connection's budget.
        // A call the budget could not admit before the request answers is refused at once (BudgetSpent).
        http: budgets ? http.withBudget(budgets.gate(connection, 'write', Number.isFinite(answerBy) ? answerBy : undefined)) : http,
      };
      return answer(await perform(connection.connector, ctx, job.data.write, job.redelivered || job.data.reconcile === true || lease?.reconcile === true));
    } catch (err) {
      if (err instanceof BudgetSpent) return answer(failure('budget_spent', 429, err.message, { retryAfterSeconds: Math.max(1, Math.ceil(err.retryInMs / 1000)) }));
      const problems = asProblems(err);
      if (problems) return answer(failure('validation', 422, (err as Error).message, { problems }));
      if (err instanceof VendorHttpError && err.retryable) {
        const retryAfterSeconds = err.retryAfterMs != null ? Math.ceil(err.retryAfterMs / 1000) : null;
        const delay = Math.max(err.retryAfterMs ?? 0, computeBackoffDelay(VENDOR_WRITE_BACKOFF, job.attempt));
        // The last attempt answers, and so does one whose next try could not start before the request
        // answers (a long vendor Retry-After): the caller gets the vendor's 429 at once, and nothing lands later.
        if (job.attempt >= job.attempts || Date.now() + delay > answerBy) {
          return answer(failure(err.status === 429 ? 'throttled' : 'unavailable', err.status, err.message, { retryAfterSeconds }));
        }
        throw new RetryAfterError(delay, err);
      }
      if (err instanceof VendorHttpError) return answer(failure('refused', err.status, err.message));
      throw err;
    } finally {
      release();
    }
  };
}

/**
 * `redelivered`: this job may have run before, so the outcome of that earlier run is unknown: look
 * the marker up at the vendor before sending anything.
 */
async function perform(connector: string, ctx: WriteContext, w: VendorWriteOp, redelivered: boolean): Promise<VendorWriteDone> {
  const result: VendorWriteDone = { ok: true, ticketRef: null, noteRef: null, timeEntryRef: null, companyRef: null, native: null, reconciled: false };
  if (w.op === 'device.deploy') {
    // The RMM write side. No marker on a script run: the connector finds an earlier run in the
    // device's activity log since the commit was first reserved.
    const dw = deviceWriter(connector);
    const found = redelivered ? await dw.findDeploy(ctx, w.draft, new Date(w.since)) : null;
    const run = found ?? (await dw.deploy(ctx, w.draft));
    return { ...result, native: run.native, queued: run.queued, reconciled: Boolean(found) };
  }
  if (w.op === 'agreement.line.add' || w.op === 'agreement.line.rewrite' || w.op === 'agreement.line.end') {
    // Rewrite and end set absolute values, so sending them again is harmless; an add is found by its marker first.
    const lines = agreementLineWriter(connector);
    let line;
    if (w.op === 'agreement.line.add') {
      const found = redelivered ? await lines.findLineByMarker(ctx, w.draft.agreementSourceId, w.draft.marker) : null;
      line = found ?? (await lines.addLine(ctx, w.draft));
      result.reconciled = Boolean(found);
    } else if (w.op === 'agreement.line.rewrite') {
      line = await lines.rewriteLine(ctx, w.change);
    } else {
      line = await lines.endLine(ctx, w.end);
    }
    return { ...result, lineRef: line.lineRef, native: line.native };
  }
  if (w.op === 'company.create') {
    const companies = distributorWriter(connector);
    const found = redelivered ? await companies.findCompany(ctx, w.draft) : null;
    const created = found ?? (await companies.createCompany(ctx, w.draft));
    return { ...result, companyRef: created.companyRef, native: created.native, reconciled: Boolean(found) };
  }
  const writer: WriteConnector = writeConnector(connector);
  switch (w.op) {
    case 'ticket.create': {
      const found = redelivered ? await writer.findTicketByMarker(ctx, w.draft.marker) : null;
      const created = found ?? (await writer.createTicket(ctx, w.draft));
      return { ...result, ticketRef: created.ticketRef, native: created.native, reconciled: Boolean(found) };
    }
    case 'ticket.update': {
      if (w.patch && Object.keys(w.patch).length > 0) result.native = await writer.updateTicket(ctx, w.ticketRef, w.patch);
      if (w.note) {
        const found = redelivered ? await writer.findNoteByMarker(ctx, w.ticketRef, w.note.marker) : null;
        result.reconciled = Boolean(found);
        result.noteRef = (found ?? (await writer.addNote(ctx, w.ticketRef, w.note))).noteRef;
      }
      result.ticketRef = w.ticketRef;
      return result;
    }
    case 'time.create': {
      const entry: TimeEntryDraft = { ...w.entry, start: new Date(w.entry.start) };
      const found = redelivered ? await writer.findTimeEntryByMarker(ctx, entry) : null;
      result.reconciled = Boolean(found);
      result.timeEntryRef = (found ?? (await writer.createTimeEntry(ctx, entry))).timeEntryRef;
      result.ticketRef = entry.ticketRef;
      return result;
    }
    case 'project.write': {
      const found = redelivered ? await writer.findProjectWrite(ctx, w.projectRef, w.draft.marker) : null;
      if (found) return { ...result, ...found, reconciled: true };
      const r = await writer.writeToProject(ctx, w.projectRef, w.draft);
      return { ...result, ticketRef: r.ticketRef, noteRef: r.noteRef };
    }
    case 'project.note': {
      const pw = projectWriter(writer.name);
      const found = redelivered ? await pw.findNote(ctx, w.projectRef, w.note.marker) : null;
      const r = found ?? (await pw.addNote(ctx, w.projectRef, w.note));
      return { ...result, noteRef: r.ref, itemRef: r.ref, reconciled: Boolean(found) };
    }
    case 'project.item': {
      const pw = projectWriter(writer.name);
      const found = redelivered ? await pw.findItem(ctx, w.projectRef, w.item) : null;
      const r = found ?? (await pw.addItem(ctx, w.projectRef, w.item));
      // The limited connector's item is a note on the project: report it where findings read notes.
      return { ...result, ticketRef: r.ticketRef, noteRef: pw.itemKind === 'project_note' ? r.ref : null, itemRef: r.ref, reconciled: Boolean(found) };
    }
  }
}
