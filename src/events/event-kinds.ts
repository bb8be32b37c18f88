/**
 * Event kinds, the families the feed filters by, and the grant each needs (interface document,
 * Events table; docs/architecture.md, Events and webhooks). Health rows are one kind, `health`, told apart by `type`.
 */
import { Grant, type GrantKey } from '../access/caller';

export const TICKET_KINDS = ['ticket.created', 'ticket.updated', 'ticket.noted', 'ticket.closed', 'ticket.reopened', 'ticket.deleted'] as const;
export const DEVICE_KINDS = ['device.created', 'device.updated', 'device.deleted'] as const;
export const COMPANY_KINDS = ['company.created', 'company.updated', 'company.deleted'] as const;
export const HEALTH_KIND = 'health';
export const SANDBOX_RESET_KIND = 'sandbox_reset';

export type EventKind =
  | (typeof TICKET_KINDS)[number] | (typeof DEVICE_KINDS)[number] | (typeof COMPANY_KINDS)[number]
  | typeof HEALTH_KIND | typeof SANDBOX_RESET_KIND;

export type HealthType = 'attention_needed' | 'resolved';

export const EVENT_FAMILIES = ['ticket', 'device', 'company', HEALTH_KIND] as const;
export type EventFamily = (typeof EVENT_FAMILIES)[number];

/** Every value the feed's `kind` parameter accepts. */
export const KIND_FILTERS: readonly string[] = [
  ...TICKET_KINDS, ...DEVICE_KINDS, ...COMPANY_KINDS, ...EVENT_FAMILIES, SANDBOX_RESET_KIND,
];

export function isKindFilter(value: string): boolean {
  return KIND_FILTERS.includes(value);
}

/**
 * The grants that let a key see a family. Health rows of devices need the device grant; health rows
 * of routed findings (detail.finding_id) are ticket-side, so either grant shows them.
 */
export const FAMILY_GRANTS: Record<EventFamily, readonly GrantKey[]> = {
  ticket: [Grant.TicketEvents],
  device: [Grant.DeviceEvents],
  company: [Grant.CompanyEvents],
  health: [Grant.DeviceEvents, Grant.TicketEvents],
};

/** The family of a kind filter or stored kind; null for sandbox_reset (visible to anyone who sees the tenant). */
export function familyOf(kind: string): EventFamily | null {
  const prefix = kind.split('.')[0];
  return (EVENT_FAMILIES as readonly string[]).includes(prefix) ? (prefix as EventFamily) : null;
}
