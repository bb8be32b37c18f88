/** Events: change detection in sync (a page listener) and the events feed (one operation). */
import type { FeatureModule } from '../feature';
import { operationsUsing, tenantOf } from '../operations/operation';
import { afterKey, envelopeOf } from '../shared/paging';
import { TenantPath } from '../shared/request';
import { eventsSyncListener } from './change-listener';
import { toEvent } from './event-view';
import { EventList, EventsQuery } from './events.schemas';
import { EVENTS_CURSOR, type EventsService } from './events.service';
import type { AccessService } from '../access/access.service';
import type { SyncService } from '../sync/sync.service';
import type { Logger } from 'pino';

/** The services this feature's operations use, and all they see of the service graph (src/feature.ts). */
export interface EventsServices {
  access: AccessService;
  events: EventsService;
  logger: Logger;
  sync: SyncService;
}
const defineOperation = operationsUsing<EventsServices>();

const listEvents = defineOperation({
  name: 'list_events', kind: 'query', summary: 'Change events and health rows', tag: 'Events', role: 'reader',
  description: 'Events the service wrote when a sync found a change the MSP made in its PSA or RMM, oldest first. ' +
    '`kind` selects an exact kind, a family or `sandbox_reset`; a kind whose grant this key lacks gives `grant_missing` ' +
    '(ticket.* needs psa.ticket.events, device.* rmm.device.events, company.* psa.company.events, health either ' +
    'rmm.device.events or psa.ticket.events). Without `kind`, every kind this key is granted. Page with `next_cursor`; ' +
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

export const eventsFeature: FeatureModule<EventsServices> = {
  name: 'events',
  operations: [listEvents],
  install(services) {
    services.events.useLogger(services.logger);
    services.sync.addListener(eventsSyncListener(services.events));
  },
};
