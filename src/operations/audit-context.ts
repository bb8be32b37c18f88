/**
 * What every audit entry written while a request runs says about where the decision came from
 * (docs/architecture.md, Connect sessions and console): its actor (a person, an ISV or
 * MSP key, the operator, or the system) and the surface it came through (`via`). Each surface names
 * itself around the operations it runs (`withAuditSurface`: REST `api`, `mcp`, `graphql`, the console,
 * the connect page); the runner names the caller as actor (`withAuditActor`) unless an outer surface
 * already named one, such as the person signed in to a console. The console adds its session too, so the
 * log tells a console decision from a REST one without any operation knowing about pages.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from '../access/caller';

const context = new AsyncLocalStorage<Record<string, unknown>>();

/** The surfaces a decision can come through. */
export type AuditVia = 'api' | 'mcp' | 'graphql' | 'console' | 'connect';

/** What an entry written outside any request (a sync, a delivery, the sandbox's start) names. */
export const SYSTEM_ORIGIN = { actor: { kind: 'system', id: 'service' } satisfies AuditActor, via: 'system' } as const;

/** Runs `fn` with `detail` added to every audit entry it writes. */
export function withAuditDetail<T>(detail: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
  return context.run({ ...(context.getStore() ?? {}), ...detail }, fn);
}

/** Runs `fn` as made through `via`: every audit entry it writes names that surface. */
export function withAuditSurface<T>(via: AuditVia, fn: () => Promise<T>): Promise<T> {
  return withAuditDetail({ via }, fn);
}

/** Runs `fn` with `actor` as the actor of its audit entries, unless an outer surface already named one. */
export function withAuditActor<T>(actor: AuditActor, fn: () => Promise<T>): Promise<T> {
  const store = context.getStore();
  if (store?.actor) return fn();
  return context.run({ ...(store ?? {}), actor }, fn);
}

/** The detail the running request adds to its audit entries (empty outside withAuditDetail). */
export function auditDetailOfRequest(): Record<string, unknown> {
  return context.getStore() ?? {};
}

/**
 * The detail an entry is stored with: the system as actor and origin by default, then the entry's own
 * detail, then the request's context; an actor or surface the entry names itself is kept (the connect
 * page names the person who completed it).
 */
export function auditDetailOf(detail: Record<string, unknown> = {}): Record<string, unknown> {
  const own = Object.fromEntries((['actor', 'via'] as const).filter((k) => detail[k] != null).map((k) => [k, detail[k]]));
  return { ...SYSTEM_ORIGIN, ...detail, ...auditDetailOfRequest(), ...own };
}
