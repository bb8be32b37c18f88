/**
 * Event kinds, the families the feed filters by, and the grant each needs (interface document,
 * Events table; docs/architecture.md, Events and webhooks). Health rows are one kind, `health`, told apart by `type`.
 * `sandbox_reset` and the `connection` family (connection.*, connect_session.*) need no grant.
 * Declared with access, which decides who sees each family (event-visibility.ts); src/events writes them.
 */
import { Grant, type GrantKey } from './caller';

export const TICKET_KINDS = ['ticket.created', 'ticket.updated', 'ticket.noted', 'ticket.closed', 'ticket.reopened', 'ticket.deleted'] as const;
export const DEVICE_KINDS = ['device.created', 'device.updated', 'device.deleted'] as const;
export const COMPANY_KINDS = ['company.created', 'company.updated', 'company.deleted'] as const;
export const HEALTH_KIND = 'health';
export const SANDBOX_RESET_KIND = 'sandbox_reset';
/**
 * Connection events (family `connection`, no grant: every ISV that sees the tenant gets them): one per change
 * of a connection's state (src/events/connection-state.ts), never one per failed sync, and the connect
 * sessions' ends.
 */
export const CONNECTION_KINDS = [
  'connection.added', 'connection.removed', 'connection.credentials_failed', 'connection.permission_missing',
  'connection.sync_failing', 'connection.restored', 'connect_session.completed', 'connect_session.expired',
] as const;
export const CONNECTION_FAMILY = 'connection';
export type ConnectionEventKind = (typeof CONNECTION_KINDS)[number];

export type EventKind =
  | (typeof TICKET_KINDS)[number] | (typeof DEVICE_KINDS)[number] | (typeof COMPANY_KINDS)[number]
  | typeof HEALTH_KIND | typeof SANDBOX_RESET_KIND | ConnectionEventKind;

export type HealthType = 'attention_needed' | 'resolved';

export const EVENT_FAMILIES = ['ticket', 'device', 'company', HEALTH_KIND] as const;
export type EventFamily = (typeof EVENT_FAMILIES)[number];

/** Every value the feed's `kind` parameter accepts. */
export const KIND_FILTERS: readonly string[] = [
  ...TICKET_KINDS, ...DEVICE_KINDS, ...COMPANY_KINDS, ...EVENT_FAMILIES, SANDBOX_RESET_KIND, ...CONNECTION_KINDS, CONNECTION_FAMILY,
];

/** Kinds anyone who sees the tenant may see, with no grant: sandbox_reset and the connection family. */
export function needsNoGrant(kind: string): boolean {
  return kind === SANDBOX_RESET_KIND || (CONNECTION_KINDS as readonly string[]).includes(kind);
}

/** Whether a kind filter is the connection family or one of its kinds. */
export function isConnectionFilter(filter: string): boolean {
  return filter === CONNECTION_FAMILY || (CONNECTION_KINDS as readonly string[]).includes(filter);
}

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

/** The family of a kind filter or stored kind; null for sandbox_reset and the connection family (visible to anyone who sees the tenant). */
export function familyOf(kind: string): EventFamily | null {
  const prefix = kind.split('.')[0];
  return (EVENT_FAMILIES as readonly string[]).includes(prefix) ? (prefix as EventFamily) : null;
}
