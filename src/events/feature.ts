/** Events: change detection in sync (a page listener) and the events feed (graph query + REST). */
import type { FeatureModule } from '../feature';
import { eventsSyncListener } from './change-listener';
import { EventsResolver } from './events.resolver';
import { EVENTS_DOCUMENT, EVENTS_ROUTES } from './events.routes';

export const eventsFeature: FeatureModule = {
  name: 'events',
  routes: EVENTS_ROUTES,
  resolvers: [EventsResolver],
  documents: [EVENTS_DOCUMENT],
  install(services) {
    services.events.useLogger(services.logger);
    services.sync.addListener(eventsSyncListener(services.events));
  },
};
