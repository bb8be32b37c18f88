/**
 * Which events an ISV's webhook receives: exactly what its key would see in the events feed, through
 * the one visibility policy (src/access/event-visibility.ts) built from the ISV's grant rows.
 */
import type { Grant } from '../../entities';
import { canSee, eventVisibility, type EventVisibility } from '../access/event-visibility';
import { isGrantKey, type GrantKey } from '../access/caller';
import {
  COMPANY_KINDS, DEVICE_KINDS, EVENT_FAMILIES, FAMILY_GRANTS, HEALTH_KIND, SANDBOX_RESET_KIND, TICKET_KINDS, type EventFamily,
} from '../events/event-kinds';

/** Registering a webhook needs at least one of these on the tenant. */
export const EVENT_GRANTS = ['psa.ticket.events', 'rmm.device.events', 'psa.company.events'] as const satisfies readonly GrantKey[];

const KINDS_OF_FAMILY: Record<EventFamily, readonly string[]> = {
  ticket: TICKET_KINDS, device: DEVICE_KINDS, company: COMPANY_KINDS, health: [HEALTH_KIND],
};

/** The kinds a webhook receives given the grant keys its ISV holds on the tenant. */
export function kindsForGrants(held: Iterable<string>): string[] {
  const keys = new Set(held);
  return [...EVENT_FAMILIES.filter((f) => FAMILY_GRANTS[f].some((k) => keys.has(k))).flatMap((f) => KINDS_OF_FAMILY[f]), SANDBOX_RESET_KIND];
}

/** The feed's visibility for an ISV, from its grant rows on the tenant; null when it sees no tenant. */
export function visibilityOfGrants(grants: Grant[]): EventVisibility | null {
  const held = grants.filter((g) => g.keys.length > 0);
  if (held.length === 0) return null;
  const keys = new Map(held.map((g) => [g.connectionId, new Set(g.keys.filter(isGrantKey))]));
  return eventVisibility([...keys.keys()], (c, k) => keys.get(c)?.has(k) ?? false);
}

export interface RoutableEvent {
  kind: string;
  connectionId: string | null;
  detail: Record<string, unknown> | null;
}

/** Whether an ISV whose visibility is `v` (null: it sees no tenant) receives the event. */
export function entitledTo(v: EventVisibility | null, event: RoutableEvent): boolean {
  return v !== null && canSee(v, event);
}
