/**
 * Which events an ISV's webhook receives: exactly what its key would see in the events feed
 * (src/events: a family's grant on the event's connection; health rows of devices need the device
 * grant, those of routed findings either grant; sandbox_reset goes to anyone who sees the tenant).
 */
import type { Grant } from '../../entities';
import {
  COMPANY_KINDS, DEVICE_KINDS, EVENT_FAMILIES, FAMILY_GRANTS, familyOf, HEALTH_KIND, SANDBOX_RESET_KIND, TICKET_KINDS,
  type EventFamily,
} from '../events/event-kinds';
import type { GrantKey } from '../tenants/caller';

/** Registering a webhook needs at least one of these on the tenant. */
export const EVENT_GRANTS = ['psa.ticket.events', 'rmm.device.events', 'psa.company.events'] as const satisfies readonly GrantKey[];

const KINDS_OF_FAMILY: Record<EventFamily, readonly string[]> = {
  ticket: TICKET_KINDS, device: DEVICE_KINDS, company: COMPANY_KINDS, health: [HEALTH_KIND],
};

const holdsAny = (keys: readonly string[], wanted: readonly string[]) => keys.includes('*') || wanted.some((k) => keys.includes(k));

/** The kinds a webhook receives given the grant keys its ISV holds on the tenant. */
export function kindsForGrants(held: Iterable<string>): string[] {
  const keys = [...held];
  return [...EVENT_FAMILIES.filter((f) => holdsAny(keys, FAMILY_GRANTS[f])).flatMap((f) => KINDS_OF_FAMILY[f]), SANDBOX_RESET_KIND];
}

export interface RoutableEvent {
  kind: string;
  connectionId: string | null;
  detail: Record<string, unknown> | null;
}

/** Whether an ISV with these grants (rows of the event's tenant) may receive the event. */
export function entitledTo(grants: Grant[], event: RoutableEvent): boolean {
  if (event.kind === SANDBOX_RESET_KIND) return grants.length > 0;
  const family = familyOf(event.kind);
  if (!family) return false;
  const onConnection = (wanted: readonly string[]) =>
    grants.some((g) => g.connectionId === event.connectionId && holdsAny(g.keys, wanted));
  if (family !== HEALTH_KIND) return onConnection(FAMILY_GRANTS[family]);
  if (event.detail?.finding_id == null) return onConnection(FAMILY_GRANTS.device);
  // A routed finding's health row: either grant on its connection, or anywhere when it names none.
  if (event.connectionId === null) return grants.some((g) => holdsAny(g.keys, FAMILY_GRANTS.health));
  return onConnection(FAMILY_GRANTS.health);
}
