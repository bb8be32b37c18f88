/**
 * What a `vendor.write` job carries and answers (the job itself: jobs/processors/vendor-write.processor.ts).
 * A final failure crosses the job boundary as a typed field of the result, not as text in an error.
 */
import type { JobPayload } from '../../jobs/queue/job';
import type { WriteCall } from '../connectors/vendor-writes';

export interface VendorWriteJob extends JobPayload {
  tenantId: string;
  connectionId: string;
  /** The write by name and its input; the processor asks the registry for it (src/connectors/vendor-writes.ts). */
  write: WriteCall;
  /** An earlier commit under the same idempotency key failed or died: reconcile before sending. */
  reconcile?: boolean;
  /** The reservation (idempotency record) and its generation: the fence the job takes (write-fence.ts). */
  reservationId?: string;
  generation?: number;
  /** The lease the reservation was made with, handed to its first job (write-fence.ts adopt). */
  lease?: { token: string; takenAt: number; sendBy?: number };
  /**
   * ISO time by which the waiting request answers. The job sends nothing after it, and gives up at once
   * (with the vendor's Retry-After) when a retry could not start before it: the caller is never told
   * "not created" while the job lands the write later.
   */
  answerBy?: string;
  /**
   * The only job of its run: it hands its lease back in its result (`handedLease`) instead of freeing
   * it, and the waiting request frees it in the statement that stores the outcome.
   */
  handBack?: boolean;
}

/** What every answer of the job may carry: the lease it handed back to the waiting request (write-fence.ts). */
interface LeaseHandBack {
  handedLease?: string;
  /**
   * With a handed-back lease: a write of the job whose outcome is unknown may still land this long after
   * the answer (ms; relative, as the processes' clocks may differ). Absent: every write was answered.
   */
  landInMs?: number;
}

export interface VendorWriteDone extends LeaseHandBack {
  ok: true;
  ticketRef: string | null;
  noteRef: string | null;
  timeEntryRef: string | null;
  /** A company created at a distributor. */
  companyRef: string | null;
  /** project.note / project.item: the created note, project ticket or task. */
  itemRef?: string | null;
  native: Record<string, unknown> | null;
  /** The write had already landed (found by its marker) and was not sent again. */
  reconciled: boolean;
  /** agreement.line.*: the line written (its source_id at the vendor). */
  lineRef?: string | null;
  /** Device deploy: the device was offline and the run waits for it. */
  queued?: boolean;
}

/**
 * Why a write did not land: throttled 429, unavailable 503, a vendor field rule, a definite refusal, or
 * `unknown`: no answer or a gateway error, and no look-up by marker found it before the request answers.
 */
export interface VendorWriteFailure extends LeaseHandBack {
  ok: false;
  /**
   * `budget_spent`: our budget for the connection (shared by every ISV of the MSP) admits no call in time;
   * `not_supported`: the connector does not declare the write; nothing was sent in either.
   */
  kind: 'throttled' | 'budget_spent' | 'unavailable' | 'validation' | 'refused' | 'not_supported' | 'unknown';
  status: number;
  retryAfterSeconds: number | null;
  problems: { field: string; message: string }[];
  message: string;
}

export type VendorWriteResult = VendorWriteDone | VendorWriteFailure;

export const VENDOR_WRITE_ATTEMPTS = 5;
export const VENDOR_WRITE_BACKOFF = { type: 'exponential' as const, delay: 500, jitter: 0.5 };
export const VENDOR_WRITE_JOB_OPTIONS = { attempts: VENDOR_WRITE_ATTEMPTS, backoff: VENDOR_WRITE_BACKOFF };

declare module '../../jobs/queue/types' {
  interface JobPayloads {
    'vendor.write': VendorWriteJob;
  }
}
