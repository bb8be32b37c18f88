/** Every job processor, registered in one place against the typed job registry (jobs/queue/types.ts). */
import type { JobQueue } from '../queue/types';
import type { Services } from '../../src/services';
import { syncConnectionProcessor } from './sync-connection.processor';
import { vendorWriteProcessor } from './vendor-write.processor';
import { webhookDeliverProcessor } from './webhook-deliver.processor';
import { countedJob } from '../../src/http/metrics';
import { DeliveryFailureLog } from '../../src/webhooks/delivery-log';

export function registerProcessors(queue: JobQueue, services: Services): void {
  // Every try counted for /metrics (src/http/metrics.ts).
  // Syncs wait on their vendors most of the time: many run at once (SYNC_CONCURRENCY), each inside its connection's budget.
  queue.register('sync.connection', countedJob('sync.connection', syncConnectionProcessor(services.sync)), { concurrency: services.config.syncConcurrency });
  queue.register('vendor.write', countedJob('vendor.write', vendorWriteProcessor(services.access, services.box, services.http, services.budgets, services.writeFence, services.vendorNow)), { concurrency: 8 });
  queue.register('webhook.deliver', countedJob('webhook.deliver', webhookDeliverProcessor(services.webhooks, new DeliveryFailureLog(services.logger))), { concurrency: 4 });
}
