/**
 * What every audit entry written while a request runs should also say about where the decision came
 * from, beyond the caller: the MSP's console sets `{ via: 'console', console_session }` around the
 * operations a page runs, so the log tells a console decision from a REST one without any operation
 * knowing about pages (docs/architecture.md, Connect sessions and console).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const context = new AsyncLocalStorage<Record<string, unknown>>();

/** Runs `fn` with `detail` added to every audit entry it writes. */
export function withAuditDetail<T>(detail: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  return context.run({ ...(context.getStore() ?? {}), ...detail }, fn);
}

/** The detail the running request adds to its audit entries (empty outside withAuditDetail). */
export function auditDetailOfRequest(): Record<string, unknown> {
  return context.getStore() ?? {};
}
