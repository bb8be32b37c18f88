/**
 * Vendor writes as jobs (`vendor.write`): every create is reconciled by its marker before it is sent
 * (a previous attempt, or a worker that died mid-job, may have landed it), 429/503 and lost connections
 * are retried with backoff honouring Retry-After, and a final failure carries the vendor's status and
 * Retry-After back to the request that waits for it.
 */
import type { DataSource } from 'typeorm';
import { Connection } from '../../entities';
import { RetryAfterError, UnrecoverableJobError, type JobContext, type JobPayload } from '../../jobs/queue/types';
import { computeBackoffDelay } from '../../jobs/queue/retry-policy';
import type { NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, WriteConnector, WriteContext } from '../connectors/write-types';
import { VendorHttpError, type VendorHttpClient } from '../connectors/vendor-http';
import { writeConnector } from '../connectors/write-registry';
import type { SecretBox } from '../security/secret-box';

export type VendorWriteOp =
  | { op: 'ticket.create'; draft: TicketDraft }
  | { op: 'ticket.update'; ticketRef: string; patch: TicketPatch | null; note: NoteDraft | null }
  | { op: 'time.create'; entry: Omit<TimeEntryDraft, 'start'> & { start: string } }
  | { op: 'project.write'; projectRef: string; draft: TicketDraft };

export interface VendorWriteJob extends JobPayload {
  tenantId: string;
  connectionId: string;
  write: VendorWriteOp;
  /** An earlier commit under the same idempotency key failed or died: reconcile before sending. */
  reconcile?: boolean;
}

export interface VendorWriteResult {
  ticketRef: string | null;
  noteRef: string | null;
  timeEntryRef: string | null;
  native: Record<string, unknown> | null;
  /** The write had already landed (found by its marker) and was not sent again. */
  reconciled: boolean;
}

export const VENDOR_WRITE_ATTEMPTS = 5;
const BACKOFF = { type: 'exponential' as const, delay: 500, jitter: 0.5 };
export const VENDOR_WRITE_JOB_OPTIONS = { attempts: VENDOR_WRITE_ATTEMPTS, backoff: BACKOFF };

/** How a failed write travels from the job to the waiting request: as the job's error message. */
export interface VendorWriteFailure {
  kind: 'throttled' | 'unavailable' | 'validation' | 'refused';
  status: number;
  retryAfterSeconds: number | null;
  problems?: { field: string; message: string }[];
  message: string;
}
const FAILURE_PREFIX = 'vendor-write-failed ';

export function encodeFailure(f: VendorWriteFailure): string {
  return FAILURE_PREFIX + JSON.stringify(f);
}
export function decodeFailure(message: string | undefined): VendorWriteFailure | null {
  if (!message) return null;
  const i = message.indexOf(FAILURE_PREFIX);
  if (i < 0) return null;
  try { return JSON.parse(message.slice(i + FAILURE_PREFIX.length)) as VendorWriteFailure; } catch { return null; }
}

function asProblems(err: unknown): { field: string; message: string }[] | null {
  const p = (err as { problems?: unknown })?.problems;
  return Array.isArray(p) ? (p as { field: string; message: string }[]) : null;
}

export function vendorWriteProcessor(ds: DataSource, box: SecretBox, http: VendorHttpClient) {
  return async (job: JobContext<VendorWriteJob>): Promise<VendorWriteResult> => {
    const connection = await ds.getRepository(Connection).findOneByOrFail({ id: job.data.connectionId });
    const writer = writeConnector(connection.connector);
    const ctx: WriteContext = {
      baseUrl: connection.baseUrl.replace(/\/$/, ''),
      credentials: box.openJson<Record<string, string>>(connection.credentialsEncrypted),
      http,
    };
    try {
      return await perform(writer, ctx, job.data.write, job.redelivered || job.data.reconcile === true);
    } catch (err) {
      const problems = asProblems(err);
      if (problems) {
        throw new UnrecoverableJobError(encodeFailure({ kind: 'validation', status: 422, retryAfterSeconds: null, problems, message: (err as Error).message }));
      }
      if (err instanceof VendorHttpError && err.retryable) {
        const failure = encodeFailure({
          kind: err.status === 429 ? 'throttled' : 'unavailable',
          status: err.status,
          retryAfterSeconds: err.retryAfterMs != null ? Math.ceil(err.retryAfterMs / 1000) : null,
          message: err.message,
        });
        const backoff = computeBackoffDelay(BACKOFF, job.attempt);
        throw new RetryAfterError(Math.max(err.retryAfterMs ?? 0, backoff), new Error(failure));
      }
      if (err instanceof VendorHttpError) {
        throw new UnrecoverableJobError(encodeFailure({ kind: 'refused', status: err.status, retryAfterSeconds: null, message: err.message }));
      }
      throw err;
    }
  };
}

/**
 * `redelivered`: this job may have run before (a retry, or a re-run after its worker died), so the
 * outcome of that earlier run is unknown: look the marker up at the vendor before sending anything.
 */
async function perform(writer: WriteConnector, ctx: WriteContext, w: VendorWriteOp, redelivered: boolean): Promise<VendorWriteResult> {
  const result: VendorWriteResult = { ticketRef: null, noteRef: null, timeEntryRef: null, native: null, reconciled: false };
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
  }
}
