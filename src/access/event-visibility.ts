/**
 * Which events a caller may see, as one policy that yields both the SQL predicate (the events feed)
 * and the in-memory check (webhook fan-out); src/access/event-visibility.test.ts holds them equal.
 * - ticket.*, device.*, company.*: the family's grant on the event's connection;
 * - health rows of devices: the device grant on their connection; health rows of routed findings
 *   (detail.finding_id): either event grant on their connection, or any when they name none;
 * - sandbox_reset and the connection family (connection.*, connect_session.*): anyone who sees the tenant.
 */
import { ServiceError } from '../errors/service-error';
import {
  CONNECTION_FAMILY, CONNECTION_KINDS, EVENT_FAMILIES, FAMILY_GRANTS, HEALTH_KIND, SANDBOX_RESET_KIND, familyOf, isConnectionFilter, needsNoGrant, type EventFamily,
} from './event-kinds';
import type { GrantKey } from './caller';

export interface EventVisibility {
  /** For each family, the connections on which the caller holds one of its grants. */
  readonly families: Readonly<Record<EventFamily, readonly string[]>>;
}

export interface VisibleEvent {
  kind: string;
  connectionId: string | null;
  detail: Record<string, unknown> | null;
}

export function eventVisibility(connectionIds: readonly string[], holds: (connectionId: string, key: GrantKey) => boolean): EventVisibility {
  const families = {} as Record<EventFamily, string[]>;
  for (const f of EVENT_FAMILIES) families[f] = connectionIds.filter((c) => FAMILY_GRANTS[f].some((k) => holds(c, k)));
  return { families };
}

/** A kind filter that names a family the caller holds on no connection is grant_missing. */
export function checkKindFilter(v: EventVisibility, filter: string | null): void {
  if (!filter || filter === SANDBOX_RESET_KIND || isConnectionFilter(filter)) return;
  const family = familyOf(filter);
  if (family && v.families[family].length === 0) throw ServiceError.grantMissing(FAMILY_GRANTS[family][0]);
}

function matchesFilter(kind: string, filter: string | null): boolean {
  if (!filter) return true;
  if (filter === CONNECTION_FAMILY) return needsNoGrant(kind) && kind !== SANDBOX_RESET_KIND;
  return kind === filter || (filter !== SANDBOX_RESET_KIND && !filter.includes('.') && familyOf(kind) === filter);
}

function inFamily(kind: string, family: EventFamily): boolean {
  return family === HEALTH_KIND ? kind === HEALTH_KIND : kind.startsWith(`${family}.`);
}

/** The in-memory check. */
export function canSee(v: EventVisibility, e: VisibleEvent, filter: string | null = null): boolean {
  if (!matchesFilter(e.kind, filter)) return false;
  if (needsNoGrant(e.kind)) return true;
  const family = EVENT_FAMILIES.find((f) => inFamily(e.kind, f));
  if (!family || v.families[family].length === 0) return false;
  if (family !== HEALTH_KIND) return e.connectionId !== null && v.families[family].includes(e.connectionId);
  if (e.detail?.finding_id == null) return e.connectionId !== null && v.families.device.includes(e.connectionId);
  return e.connectionId === null || v.families.health.includes(e.connectionId);
}

/** The SQL predicate over the `events` table (columns kind, connection_id, detail); `p` binds a value. */
export function visibleWhere(v: EventVisibility, filter: string | null, p: (value: unknown) => string): string {
  const family = filter && filter !== SANDBOX_RESET_KIND ? familyOf(filter) : null;
  const clauses: string[] = [];
  if (!filter || filter === SANDBOX_RESET_KIND) clauses.push(`kind = '${SANDBOX_RESET_KIND}'`);
  if (!filter || isConnectionFilter(filter)) clauses.push(`kind IN (${CONNECTION_KINDS.map((k) => `'${k}'`).join(', ')})`);
  for (const f of EVENT_FAMILIES) {
    if (filter && f !== family) continue;
    if (v.families[f].length === 0) continue;
    if (f !== HEALTH_KIND) {
      clauses.push(`(kind LIKE '${f}.%' AND connection_id = ANY(${p(v.families[f])}::uuid[]))`);
    } else {
      clauses.push(`(kind = '${HEALTH_KIND}' AND (` +
        `((detail->>'finding_id') IS NULL AND connection_id = ANY(${p(v.families.device)}::uuid[])) OR ` +
        `((detail->>'finding_id') IS NOT NULL AND (connection_id IS NULL OR connection_id = ANY(${p(v.families.health)}::uuid[])))))`);
    }
  }
  if (clauses.length === 0) return 'FALSE';
  const visible = clauses.join(' OR ');
  return filter && filter.includes('.') ? `kind = ${p(filter)} AND (${visible})` : `(${visible})`;
}
