/**
 * Which events an ISV's webhook receives: exactly what its key would see in the events feed, through
 * the one visibility policy (src/access/event-visibility.ts), built by the access module from the ISV's
 * grants; the fan-out applies the feed's own SQL predicate of it (webhooks.store.ts).
 */
import { Grant, type GrantKey } from '../access/caller';
import {
  COMPANY_KINDS, CONNECTION_FAMILY, CONNECTION_KINDS, DEVICE_KINDS, EVENT_FAMILIES, FAMILY_GRANTS, HEALTH_KIND, SANDBOX_RESET_KIND, TICKET_KINDS, isKindFilter, type EventFamily,
} from '../access/event-kinds';

/** Registering a webhook needs at least one of these on the tenant. */
export const EVENT_GRANTS = [Grant.TicketEvents, Grant.DeviceEvents, Grant.CompanyEvents] as const satisfies readonly GrantKey[];

const KINDS_OF_FAMILY: Record<EventFamily, readonly string[]> = {
  ticket: TICKET_KINDS, device: DEVICE_KINDS, company: COMPANY_KINDS, health: [HEALTH_KIND],
};

/** The kinds a webhook receives given the grant keys its ISV holds on the tenant. */
export function kindsForGrants(held: Iterable<string>): string[] {
  const keys = new Set(held);
  // sandbox_reset and the connection family need no grant: every ISV that sees the tenant gets them.
  return [...EVENT_FAMILIES.filter((f) => FAMILY_GRANTS[f].some((k) => keys.has(k))).flatMap((f) => KINDS_OF_FAMILY[f]), SANDBOX_RESET_KIND, ...CONNECTION_KINDS];
}

/**
 * A webhook's kinds filter names what the events feed's `kind` takes: exact kinds and families. Answers
 * the entries it does not know (whatever kinds the feed learns are known here too).
 */
export function unknownKinds(kinds: readonly string[]): string[] {
  return [...new Set(kinds.filter((k) => !isKindFilter(k)))];
}

/**
 * A kinds filter as the fan-out's SQL tests it (webhooks.store.ts): an event passes when its kind is one of
 * `exact` or its prefix (before the dot) one of `prefixes`. A family whose kinds do not share its name
 * (the connection family holds `connect_session.*`) is spelt out.
 */
export function kindFilterTerms(filter: readonly string[]): { exact: string[]; prefixes: string[] } {
  const spelt = filter.includes(CONNECTION_FAMILY) ? CONNECTION_KINDS : [];
  return { exact: [...new Set([...filter, ...spelt])], prefixes: [...filter] };
}

/** Whether an event kind passes a kinds filter: named exactly, or its family named (the in-memory twin of the SQL). */
export function kindMatches(kind: string, filter: readonly string[]): boolean {
  const { exact, prefixes } = kindFilterTerms(filter);
  return exact.includes(kind) || prefixes.includes(kind.split('.')[0]);
}
