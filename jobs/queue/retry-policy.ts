/**
 * Retry rules shared by both drivers, so the in-process runner and BullMQ decide the same way.
 * The backoff formula is BullMQ's own (Backoffs.builtinStrategies), reproduced so the BullMQ driver can
 * route every retry through one custom strategy (needed to honour RetryAfterError) without changing it.
 */
import { BackoffOptions, RetryAfterError, UnrecoverableJobError } from './job';

/**
 * Delay before the next try after `attemptsMade` tries failed (1 after the first failure).
 * exponential: delay * 2^(attemptsMade-1); fixed: delay. With jitter j the delay d becomes
 * floor(random * d * j + d * (1 - j)), i.e. it is reduced by a random share of up to j of itself.
 */
export function computeBackoffDelay(
  backoff: BackoffOptions | undefined,
  attemptsMade: number,
  random: () => number = Math.random,
): number {
  if (!backoff) return 0;
  const full =
    backoff.type === 'exponential' ? Math.round(Math.pow(2, attemptsMade - 1) * backoff.delay) : backoff.delay;
  const jitter = backoff.jitter ?? 0;
  if (jitter <= 0) return full;
  return Math.floor(random() * full * jitter + full * (1 - jitter));
}

/** Delay before the next try: a RetryAfterError's own delay wins over the backoff schedule. */
export function retryDelayMs(
  err: unknown,
  backoff: BackoffOptions | undefined,
  attemptsMade: number,
  random: () => number = Math.random,
): number {
  if (isRetryAfter(err)) return Math.max(0, err.delayMs);
  return computeBackoffDelay(backoff, attemptsMade, random);
}

export function isRetryAfter(err: unknown): err is RetryAfterError {
  return err instanceof RetryAfterError || (err instanceof Error && err.name === 'RetryAfterError' && 'delayMs' in err);
}

/** A retry cannot help: fail at once. BullMQ's own UnrecoverableError counts too. */
export function isUnrecoverable(err: unknown): boolean {
  return (
    err instanceof UnrecoverableJobError ||
    (err instanceof Error && (err.name === 'UnrecoverableJobError' || err.name === 'UnrecoverableError'))
  );
}

/** Handlers may throw anything; queues record Error messages. */
export function toError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  return new Error(typeof thrown === 'string' ? thrown : JSON.stringify(thrown) ?? String(thrown));
}

/**
 * The error a job is finally failed with. A RetryAfterError on the last try fails with its cause (the
 * vendor's 429/503), not with "retry after N ms".
 */
export function finalError(err: Error): Error {
  if (isRetryAfter(err) && err.cause !== undefined) return toError(err.cause);
  return err;
}

/** Same checks BullMQ applies (Job.validateOptions), so a job the embedded runner accepts also runs on Redis. */
export function validateBackoff(backoff: BackoffOptions | undefined): void {
  if (!backoff) return;
  if (!(backoff.delay >= 0)) throw new Error('Backoff delay must be a number >= 0');
  if (backoff.jitter !== undefined && (backoff.jitter < 0 || backoff.jitter > 1)) {
    throw new Error('Jitter should be between 0 and 1');
  }
}
