/**
 * When a delivery is tried (docs/architecture.md, Events and webhooks): at once, then after 5 s, 5 min, 30 min, 2 h, 5 h,
 * 10 h, 14 h, 20 h and 24 h; ten tries in all, then the delivery gives up. A receiver's Retry-After
 * replaces the next delay when it asks for longer (capped at a day, so a receiver cannot park a
 * delivery forever). `scale` shrinks the unit for tests (WEBHOOK_RETRY_SCALE); 1 in production.
 */
import { parseRetryAfterMs } from '../shared/request';
export const RETRY_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600] as const;

/** Total tries, the first included (the job queue's `attempts`). */
export const DELIVERY_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length;

const MAX_RETRY_AFTER_SECONDS = 24 * 3600;

/** Retry-After as seconds (src/shared/request.ts parses it). */
export function parseRetryAfterSeconds(value: string | null | undefined, now: number = Date.now()): number | null {
  const ms = parseRetryAfterMs(value, now);
  return ms === null ? null : Math.ceil(ms / 1000);
}

/** Delay before the next try after try number `failedAttempt` (1 = the first) failed. */
export function nextDelayMs(failedAttempt: number, retryAfter: string | null, scale: number, now: number = Date.now()): number {
  const index = Math.min(Math.max(failedAttempt, 1), RETRY_SCHEDULE_SECONDS.length - 1);
  let seconds: number = RETRY_SCHEDULE_SECONDS[index];
  const asked = parseRetryAfterSeconds(retryAfter, now);
  if (asked !== null && asked > seconds) seconds = Math.min(asked, MAX_RETRY_AFTER_SECONDS);
  return Math.round(seconds * 1000 * scale);
}

