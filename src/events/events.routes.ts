/** GET /tenants/{tenant_id}/connections/events: the events feed (polling), declared once. */
import { defineRoute, type RouteDef } from '../rest/route';
import { TenantPath } from '../rest/schemas';
import { EventList, EventsQuery } from './events.schemas';

const FIELDS = 'id event_id tenant_id connection_id kind type occurred_at actor summary subject_ref incident_id ' +
  'canonical_ticket_id canonical_device_id canonical_company_id previous_status new_status vendor vendor_id vendor_url detail';

export const EVENTS_DOCUMENT =
  'query Events($tenant_id: ID!, $kind: String, $cursor: String, $limit: Int!) { ' +
  `events(tenant_id: $tenant_id, kind: $kind, cursor: $cursor, limit: $limit) { events { ${FIELDS} } sandbox next_cursor } }`;

export const EVENTS_ROUTES: RouteDef[] = [
  defineRoute({
    method: 'get', path: '/tenants/{tenant_id}/connections/events', operationId: 'list_events',
    summary: 'Change events and health rows', tag: 'Events',
    description: 'Events the service wrote when a sync found a change the MSP made in its PSA or RMM, oldest first. ' +
      '`kind` selects an exact kind, a family or `sandbox_reset`; a kind whose grant this key lacks gives `grant_missing` ' +
      '(ticket.* needs psa.ticket.events, device.* rmm.device.events, company.* psa.company.events, health either ' +
      'rmm.device.events or psa.ticket.events). Without `kind`, every kind this key is granted. Page with `next_cursor`; ' +
      'pages never skip or repeat an event, also while new events are being written. The first sync of a connection ' +
      'imports without events.',
    params: TenantPath, query: EventsQuery,
    response: { status: 200, schema: EventList, description: 'One page of events, oldest first.' },
    errors: ['not_found', 'grant_missing'], documented: true,
    handle: async ({ params, query, caller, graph }) => {
      const data = await graph.run<{ events: unknown }>(EVENTS_DOCUMENT, {
        tenant_id: params.tenant_id, kind: query.kind ?? null, cursor: query.cursor ?? null, limit: query.limit,
      }, caller);
      return { body: data.events };
    },
  }),
];
