/**
 * The job pieces that name no job: the payload every job carries, backoff options and the errors a
 * handler throws to steer its retries. Payload modules (a feature's job) and the retry policy import
 * these without the typed job registry (types.ts, which re-exports them), so the registry can name
 * every payload without an import cycle (docs/architecture.md, Folders).
 */

/** Every job payload carries its tenant id. */
export interface JobPayload {
  tenantId: string;
  /** Where the job was added in a trace, when tracing is on (src/telemetry/job-spans.ts); handlers never see it. */
  trace?: JobTrace;
}

/** A job's trace context: W3C `traceparent`/`tracestate` and the request id of the request that added it. */
export interface JobTrace {
  traceparent?: string;
  tracestate?: string;
  requestId?: string;
}

export interface BackoffOptions {
  type: 'exponential' | 'fixed';
  /** Base delay in ms. Exponential: delay * 2^(attemptsMade-1). */
  delay: number;
  /** 0..1: a delay is reduced by a random share of up to `jitter` of itself. */
  jitter?: number;
}

/**
 * Thrown by a handler to be retried after an explicit delay (a vendor's Retry-After) instead of the
 * backoff schedule. It counts as a failed attempt; when attempts are spent the job fails with `cause`.
 */
export class RetryAfterError extends Error {
  constructor(readonly delayMs: number, override readonly cause?: unknown) {
    super(`retry after ${delayMs} ms`);
    this.name = 'RetryAfterError';
  }
}

/** Thrown by a handler when a retry cannot help: the job fails at once whatever attempts remain. */
export class UnrecoverableJobError extends Error {
  constructor(message: string, override readonly cause?: unknown) {
    super(message);
    this.name = 'UnrecoverableJobError';
  }
}
