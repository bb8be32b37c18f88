/** Ticket write-back, time and findings (issue: write-back). */
import type { FeatureModule } from '../feature';
import { vendorWriteProcessor } from './vendor-write';
import { TicketWritesResolver } from './tickets.resolver';
import { TICKET_DOCUMENTS, TICKET_ROUTES } from './tickets.routes';

export const ticketsFeature: FeatureModule = {
  name: 'tickets',
  routes: TICKET_ROUTES,
  resolvers: [TicketWritesResolver],
  documents: TICKET_DOCUMENTS,
  install(services) {
    services.queue.register('vendor.write', vendorWriteProcessor(services.ds, services.box, services.http), { concurrency: 8 });
  },
};
