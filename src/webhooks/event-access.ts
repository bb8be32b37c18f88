/**
 * Which events an ISV's webhook receives: exactly what its key would see in the events feed, through
 * the one visibility policy (src/access/event-visibility.ts), built by the access module from the ISV's
 * grants; the fan-out applies the feed's own SQL predicate of it (webhooks.store.ts).
 */
import { Grant, type GrantKey } from '../access/caller';
import {
  COMPANY_KINDS, DEVICE_KINDS, EVENT_FAMILIES, FAMILY_GRANTS, HEALTH_KIND, SANDBOX_RESET_KIND, TICKET_KINDS, type EventFamily,
} from '../events/event-kinds';

/** Registering a webhook needs at least one of these on the tenant. */
export const EVENT_GRANTS = [Grant.TicketEvents, Grant.DeviceEvents, Grant.CompanyEvents] as const satisfies readonly GrantKey[];

const KINDS_OF_FAMILY: Record<EventFamily, readonly string[]> = {
  ticket: TICKET_KINDS, device: DEVICE_KINDS, company: COMPANY_KINDS, health: [HEALTH_KIND],
};

/** The kinds a webhook receives given the grant keys its ISV holds on the tenant. */
export function kindsForGrants(held: Iterable<string>): string[] {
  const keys = new Set(held);
  return [...EVENT_FAMILIES.filter((f) => FAMILY_GRANTS[f].some((k) => keys.has(k))).flatMap((f) => KINDS_OF_FAMILY[f]), SANDBOX_RESET_KIND];
}
