/**
 * The span of one webhook try (src/webhooks/delivery-lanes.ts), PRODUCER kind, in the trace of the job
 * that woke the lane (itself under the sync whose changes raised the events): the webhook, delivery and
 * event ids, the event's kind, the try's number, the receiver's host (never its path or query, which a
 * receiver may use as a secret), and how the try ended. Never the body or the signature.
 */
import { SpanKind } from '@opentelemetry/api';
import { inSpan } from './spans';

export interface WebhookTry {
  webhookId: string;
  deliveryId: string;
  eventId: string;
  eventKind: string;
  attempt: number;
  /** The webhook's URL: only its host is kept. */
  receiver: string;
}

const hostOf = (url: string): string => (URL.canParse(url) ? new URL(url).hostname : 'invalid');

export function inWebhookTrySpan<T extends { kind: string; statusCode?: number }>(t: WebhookTry, fn: () => Promise<T>): Promise<T> {
  return inSpan('webhook delivery', {
    kind: SpanKind.PRODUCER,
    attributes: {
      'http.request.method': 'POST',
      'server.address': hostOf(t.receiver),
      'msp.webhook.id': t.webhookId,
      'msp.webhook.delivery_id': t.deliveryId,
      'msp.event.id': t.eventId,
      'msp.event.kind': t.eventKind,
      'msp.webhook.attempt': t.attempt,
    },
  }, async (span) => {
    const outcome = await fn();
    span.setAttribute('msp.webhook.outcome', outcome.kind);
    if (typeof outcome.statusCode === 'number') span.setAttribute('http.response.status_code', outcome.statusCode);
    return outcome;
  });
}
