/**
 * A dependency that went away (docs/architecture.md, Faults an operator will meet): the database or
 * Redis unreachable, or the database giving up a transaction it may retry, is 503 `service_unavailable`
 * with Retry-After on every surface, never a 500. The one place that recognises the drivers' errors:
 * the runner (every operation, whichever surface) and the app's last error handler (the authenticator,
 * pages) ask it.
 */
import { ServiceError } from '../errors/service-error';

/** A dependency is usually back, or known to be down for longer, within this. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

/** Node socket errors of a connection that failed or broke (ENOENT: the embedded database's socket is gone). */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that cannot serve now: class 08 (connection exception), 57P01-03
 * (shut down, crashed, starting), 53300 (too many connections). Transient refusals of one transaction:
 * 40P01 (deadlock_detected) and 40001 (serialization_failure), left over after src/db/retry.ts retried.
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300|40P01|40001)$/;

/** What the drivers say when a connection is gone (pg, pg-pool, ioredis, BullMQ's client). */
const GONE_MESSAGES = [
  /^Connection terminated/, // pg: unexpectedly, or due to connection timeout
  /^timeout exceeded when trying to connect/, // pg-pool: no connection within connectionTimeoutMillis
  /^Query read timeout/, // pg: no answer within query_timeout (src/db/database.ts, QUERY_TIMEOUT_MS)
  /^Client has encountered a connection error/,
  /^Connection is closed\.?$/, // ioredis
  /^Reached the max retries per request limit/, // ioredis MaxRetriesPerRequestError
  /^Stream isn't writeable/, // ioredis without its offline queue
];

/** The error and its causes (TypeORM's driverError, Error.cause), bounded. */
function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const o = e as Record<string, unknown>;
    out.push(o);
    e = o.driverError ?? o.cause;
  }
  return out;
}

/** Which dependency an error says is unreachable, or null when it is no such error. */
export function unreachableDependency(err: unknown): 'database' | 'queue' | 'unknown' | null {
  for (const e of chain(err)) {
    const name = typeof e.name === 'string' ? e.name : '';
    const message = typeof e.message === 'string' ? e.message : '';
    const code = typeof e.code === 'string' ? e.code : '';
    // "Command timed out": ioredis's commandTimeout (jobs/queue/bullmq.ts), a Redis that does not answer.
    if (name === 'MaxRetriesPerRequestError' || /^(Connection is closed|Stream isn't writeable|Command timed out)/.test(message)) return 'queue';
    if (UNAVAILABLE_SQLSTATES.test(code)) return 'database';
    if (GONE_MESSAGES.some((m) => m.test(message))) return 'database';
    // A bare socket error does not say whose socket it was.
    if (SOCKET_CODES.has(code) || (code === 'ENOENT' && e.syscall === 'connect')) return 'unknown';
  }
  return null;
}

/** The 503 a dependency failure answers, or null when `err` is not one. */
export function dependencyFailure(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return null;
  const which = unreachableDependency(err);
  if (!which) return null;
  const what = which === 'database' ? 'The service\'s database' : which === 'queue' ? 'The service\'s job queue' : 'A dependency of the service';
  return new ServiceError('service_unavailable', `${what} is unreachable right now; nothing was lost. Retry after Retry-After seconds (a commit with the same idempotency_key lands once).`, {
    retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS, details: { dependency: which },
  });
}

/** `err` as the caller should see it: a dependency failure becomes its 503, anything else is as it was. */
export function asDependencyError(err: unknown): unknown {
  return dependencyFailure(err) ?? err;
}
