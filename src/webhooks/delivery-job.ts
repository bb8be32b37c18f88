/**
 * The `webhook.deliver` job's payload and how one try ends: shared by the service that enqueues it, the
 * delivery lanes that run it and the processor, without an import cycle among them.
 */

/** Wakes one webhook's delivery lane (delivery-lanes.ts): it sends whatever of that webhook is due, in order. */
export interface WebhookDeliverJob {
  tenantId: string;
  webhookId: string;
  [key: string]: unknown;
}

/** How one try ended; the processor turns it into the queue's retry or finish. */
export type DeliveryOutcome =
  | { kind: 'delivered'; statusCode: number }
  | { kind: 'disabled' }
  | { kind: 'blocked' }
  | { kind: 'failed'; error: string }
  | { kind: 'retry'; delayMs: number; error: string }
  | { kind: 'gave_up'; error: string }
  | { kind: 'skipped'; reason: string };

declare module '../../jobs/queue/types' {
  interface JobPayloads {
    'webhook.deliver': WebhookDeliverJob;
  }
}
