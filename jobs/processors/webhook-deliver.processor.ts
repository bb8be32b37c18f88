/**
 * The `webhook.deliver` job: one try of one delivery. A failed try is thrown as RetryAfterError with
 * the webhook schedule's delay (the queue's own backoff is not used); a refusal that no retry can
 * change (private address, webhook disabled) fails the job at once; the last failed try fails it.
 */
import { RetryAfterError, UnrecoverableJobError, type JobContext } from '../queue/types';
import type { DeliveryOutcome, WebhookDeliverJob, WebhooksService } from '../../src/webhooks/webhooks.service';

export function webhookDeliverProcessor(webhooks: WebhooksService) {
  return async (job: JobContext<WebhookDeliverJob>): Promise<DeliveryOutcome> => {
    const outcome = await webhooks.attemptDelivery(job.data, job.attempt, job.attempts);
    switch (outcome.kind) {
      case 'retry':
        throw new RetryAfterError(outcome.delayMs, new Error(outcome.error));
      case 'gave_up':
        throw new UnrecoverableJobError(`gave up: ${outcome.error}`);
      case 'blocked':
        throw new UnrecoverableJobError('blocked: private address');
      case 'failed':
        throw new UnrecoverableJobError(outcome.error);
      default:
        return outcome;
    }
  };
}
