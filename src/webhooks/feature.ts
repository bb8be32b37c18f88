/**
 * Signed webhooks: REST routes and graph operations, the `webhook.deliver` job, and the listener that
 * turns committed events into deliveries.
 */
import { webhookDeliverProcessor } from '../../jobs/processors/webhook-deliver.processor';
import type { FeatureModule } from '../feature';
import { WebhooksResolver } from './webhooks.resolver';
import { WEBHOOK_DOCUMENTS, WEBHOOK_ROUTES } from './webhooks.routes';

export const webhooksFeature: FeatureModule = {
  name: 'webhooks',
  routes: WEBHOOK_ROUTES,
  resolvers: [WebhooksResolver],
  documents: WEBHOOK_DOCUMENTS,
  install(services) {
    services.queue.register('webhook.deliver', webhookDeliverProcessor(services.webhooks), { concurrency: 4 });
    // Retries the embedded queue lost in a restart are due again (a no-op for jobs Redis still holds).
    services.webhooks.resumePending().catch((err: Error) => services.logger.error({ err: err.message }, 'resuming webhook deliveries failed'));
    services.events.onEventsCommitted(async (tenantId, eventIds) => {
      try {
        await services.webhooks.enqueueForEvents(tenantId, eventIds);
      } catch (err) {
        // Events are committed and readable from the feed; a failed fan-out must not fail the sync.
        services.logger.error({ tenantId, events: eventIds.length, err: (err as Error).message }, 'webhook fan-out failed');
      }
    });
  },
};
