/**
 * How long finished jobs are kept. While kept, adding the same job id is a no-op (BullMQ ignores an add
 * whose id exists in any state) and waitFor answers from the record.
 */
export interface KeepFinished {
  /** Finished jobs kept per job name (per completed / per failed on BullMQ). */
  count: number;
  ageMs: number;
}

export const DEFAULT_KEEP_FINISHED: KeepFinished = { count: 1000, ageMs: 60 * 60 * 1000 };

/** waitFor's timeout when the caller gives none. */
export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
