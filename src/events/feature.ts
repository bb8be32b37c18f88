/** Events: change detection in sync (a reaction to each written page) and the events feed. */
import type { FeatureModule } from '../operations/feature-module';
import { operationsUsing, tenantOf } from '../operations/operation';
import { afterKey, envelopeOf } from '../shared/paging';
import { TenantPath } from '../shared/request';
import { eventsPageReaction } from './change-listener';
import { reactTo } from '../shared/committed-changes';
import { toEvent } from './event-view';
import { EventList, EventsQuery, IsvEventsQuery } from './events.schemas';
import { EVENTS_CURSOR, ISV_EVENTS_CURSOR, type EventsService } from './events.service';
import type { AccessService } from '../access/access.service';
import type { ConnectionStates } from './connection-states.store';
import type { Logger } from 'pino';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface EventsServices {
  access: AccessService;
  connectionStates: ConnectionStates;
  events: EventsService;
  logger: Logger;
}
const defineOperation = operationsUsing<EventsServices>();

const listEvents = defineOperation({
  name: 'list_events', kind: 'query', summary: 'Change events and health rows', tag: 'Events', role: 'reader',
  description: 'Events the service wrote when a sync found a change the MSP made in its PSA or RMM, oldest first. ' +
    '`kind` selects an exact kind, a family or `sandbox_reset`; a kind whose grant this key lacks gives `grant_missing` ' +
    '(ticket.* needs psa.ticket.events, device.* rmm.device.events, company.* psa.company.events, health either ' +
    'rmm.device.events or psa.ticket.events); the `connection` family (connection.added|removed|credentials_failed|' +
    'permission_missing|sync_failing|restored, connect_session.completed|expired: one per change of a connection\'s state, ' +
    'never one per failed sync) needs no grant. Without `kind`, every kind this key is granted. Page with `next_cursor`; ' +
    'pages never skip or repeat an event, also while new events are being written. To poll, keep the `id` of the last ' +
    'event you processed and ask again with `after=<id>`: you never miss or repeat one, whether or not `next_cursor` was ' +
    'null. The first sync of a connection imports without events.',
  http: { method: 'get', path: '/tenants/{tenant_id}/connections/events', documented: true },
  path: TenantPath, query: EventsQuery,
  responses: [{ status: 200, schema: EventList, description: 'One page of events, oldest first.' }],
  errors: ['grant_missing', 'validation'],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    const visibility = ctx.services.access.eventVisibility(access);
    const page = await ctx.services.events.page(access.tenant.id, visibility, {
      kind: query.kind ?? null, after: afterKey(EVENTS_CURSOR, query)?.[0] ?? null, afterEventId: query.after ?? null,
      limit: query.limit, updatedSince: query.updated_since ?? null,
    });
    return envelopeOf('events', { items: page.items.map(toEvent), next_cursor: page.next_cursor }, access.tenant.sandbox);
  },
});

const listIsvEvents = defineOperation({
  name: 'list_isv_events', kind: 'query', summary: 'Events of every tenant this key sees', tag: 'Events', role: 'reader',
  description: 'Our addition: the events feed across tenants, oldest first, each event carrying its `tenant_id`: for an ISV key, ' +
    'every tenant it holds a grant on, with only the kinds its grants there allow (the same rules as each tenant\'s ' +
    '`/tenants/{tenant_id}/connections/events`), and its own events of no tenant (`connect_session.expired` of a link for a ' +
    'new MSP, `tenant_id` null); the `connection` family needs no grant. An MSP key reads its own tenant\'s events here. ' +
    'The same `kind`, `after` and cursor rules as the tenant feed: keep the `id` of the last event you processed and ask ' +
    'again with `after=<id>`; pages never skip or repeat an event, also while events of several tenants are being written.',
  http: { method: 'get', path: '/events', documented: false },
  query: IsvEventsQuery,
  responses: [{ status: 200, schema: EventList, description: 'One page of events of every tenant this key sees, oldest first.' }],
  errors: ['grant_missing', 'validation'],
  handle: async ({ query }, ctx) => {
    const scope = await ctx.services.access.isvWideVisibility(ctx.caller);
    const page = await ctx.services.events.isvWidePage(
      { tenantIds: scope.tenants.map((t) => t.id), isvId: scope.isvId, visibility: scope.visibility, healthTenants: scope.healthTenants },
      { kind: query.kind ?? null, after: afterKey(ISV_EVENTS_CURSOR, query)?.[0] ?? null, afterEventId: query.after ?? null, limit: query.limit, updatedSince: query.updated_since ?? null },
    );
    const sandbox = scope.tenants.length > 0 && scope.tenants.every((t) => t.sandbox);
    return envelopeOf('events', { items: page.items.map(toEvent), next_cursor: page.next_cursor }, sandbox);
  },
});

export const eventsFeature: FeatureModule<EventsServices> = {
  name: 'events',
  operations: [listEvents, listIsvEvents],
  reactions: (services) => [
    reactTo('records.page_written', 'events: change detection', eventsPageReaction(services.events)),
    // Connection events: a sync's outcome may change the connection's state.
    reactTo('sync.ended', 'events: connection state', ({ connection, outcome }) => services.connectionStates.recordSync(connection, outcome)),
    // A created connection is `connection.added`.
    reactTo('tenants.connection_added', 'events: connection added', (c) => services.connectionStates.added(c)),
  ],
  install(services) {
    services.connectionStates.useLogger(services.logger);
  },
};
