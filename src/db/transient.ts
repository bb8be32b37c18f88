/**
 * The one retry of a transaction PostgreSQL gave up on its own (docs/architecture.md, Faults an operator
 * will meet): deadlock_detected (40P01) and serialization_failure (40001) roll back only the victim, and
 * running it again is the documented cure. A sandbox reset deleting a tenant's rows beside a cost commit
 * writing them deadlocked (1 round in 3) and answered 500.
 */
import { setTimeout as sleep } from 'node:timers/promises';

const TRANSIENT = new Set(['40P01', '40001']);
const ATTEMPTS = 4;

/** The SQLSTATE of a driver error, through TypeORM's wrapping. */
function sqlState(err: unknown): string | undefined {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.driverError?.code ?? e?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isTransientTransactionError(err: unknown): boolean {
  const code = sqlState(err);
  return code !== undefined && TRANSIENT.has(code);
}

/**
 * Runs `transaction` (a whole transaction: begun and committed inside it) again when PostgreSQL chose it
 * as a deadlock's victim or could not serialise it, a few times after a short random pause; what is left
 * is answered 503 `service_unavailable` (src/http/dependency-errors.ts).
 */
export async function retryingTransient<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (err) {
      if (attempt >= ATTEMPTS || !isTransientTransactionError(err)) throw err;
      // Apart, so the two transactions do not meet again in the same order.
      await sleep(10 + Math.floor(Math.random() * 40 * attempt));
    }
  }
}
