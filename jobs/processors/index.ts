/** Every job processor, registered in one place against the typed job registry (jobs/queue/types.ts). */
import type { JobQueue } from '../queue/types';
import type { Services } from '../../src/services';
import { syncConnectionProcessor } from './sync-connection.processor';
import { vendorWriteProcessor } from './vendor-write.processor';
import { webhookDeliverProcessor } from './webhook-deliver.processor';

export function registerProcessors(queue: JobQueue, services: Services): void {
  queue.register('sync.connection', syncConnectionProcessor(services.sync), { concurrency: 2 });
  queue.register('vendor.write', vendorWriteProcessor(services.access, services.box, services.http, services.budgets, services.writeFence), { concurrency: 8 });
  queue.register('webhook.deliver', webhookDeliverProcessor(services.webhooks), { concurrency: 4 });
}
