/**
 * The workers' heartbeat (docs/architecture.md, Faults an operator will meet): a started queue (a process
 * that runs jobs) beats, and an api process's /readyz says whether any worker has beaten lately. Jobs of
 * an api with no worker would otherwise just wait while it answers ready.
 */

/** How often a worker beats; well under the staleness an api allows (WORKER_HEARTBEAT_STALE_SECONDS, 60 s). */
export const DEFAULT_HEARTBEAT_MS = 10_000;

/** Beats older than this are dropped from Redis: a worker gone for good leaves no member behind. */
export const HEARTBEAT_FORGET_MS = 3600_000;

/** Calls `beat` now and every `everyMs` until the returned stop is called; a failed beat just waits for the next. */
export function beating(beat: () => Promise<unknown>, everyMs: number): () => void {
  const run = () => { beat().catch(() => undefined); };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
