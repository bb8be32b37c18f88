/**
 * The `webhook.deliver` job: wakes one webhook's delivery lane (src/webhooks/delivery-lanes.ts), which
 * sends what is due in feed order and queues its own wake-up for a retry that is due later. Every try is
 * counted (metrics) and a receiver's failures go to the failure log; a lane that fails itself (the store,
 * a bug) fails the job, and the queue wakes it again on its backoff.
 */
import type { JobContext } from '../queue/types';
import type { WebhooksService } from '../../src/webhooks/webhooks.service';
import type { WebhookDeliverJob } from '../../src/webhooks/delivery-job';
import type { DeliveryFailureLog } from '../../src/webhooks/delivery-log';
import { recordDelivery } from '../../src/http/metrics';

/** `log`: what the receiver's failures write to the service log (delivery-log.ts; the queue's own lines are at debug). */
export function webhookDeliverProcessor(webhooks: WebhooksService, log: DeliveryFailureLog) {
  return async (job: JobContext<WebhookDeliverJob>): Promise<{ tries: number }> => {
    try {
      return await webhooks.lanes.run(job.data, (delivery, outcome, started) => {
        recordDelivery(outcome.kind, started);
        if (outcome.kind === 'delivered') log.delivered(delivery);
        else if (outcome.kind !== 'skipped' && outcome.kind !== 'failed') log.failed(delivery, outcome.kind, 'error' in outcome ? outcome.error : outcome.kind);
      });
    } catch (err) {
      // Not the receiver: the store or a bug. The operator's to see.
      log.unexpected(job.data, err);
      throw err;
    }
  };
}
