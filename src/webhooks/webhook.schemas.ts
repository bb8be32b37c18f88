/** Webhook registration, listing, updates, rotation, tests and the delivery log, as the API answers them. */
import { listEnvelope } from '../shared/paging';
import { text, z } from '../shared/request';

const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });

/** The longest overlap a secret rotation takes: 7 days. */
export const MAX_ROTATION_OVERLAP_S = 7 * 24 * 3600;

const url = text(2048).min(1).openapi({ description: 'HTTPS URL of the receiver, on a public address. Refused at once: not https, credentials in it, spaces or control characters, a private or loopback IP literal, a special-use name (localhost, .local, .internal, .home.arpa) or a name resolving to a private address now. A name that does not resolve yet is accepted: every delivery resolves it again, connects only to a public address and records why in the delivery log. Stored normalised (as the URL standard writes it).', example: 'https://hooks.example.com/msp-events' });

const kinds = z.array(text(100).min(1)).min(1).max(100).openapi({
  description: 'Only these event kinds (exact kinds such as `ticket.created`, or families such as `ticket`, as the events feed\'s `kind` takes them). Absent: every kind your grants cover. An unknown kind is 422 naming it. Grants still apply: a kind listed here whose grant you lack is not delivered.',
  example: ['ticket.created', 'ticket.closed'],
});

export const WebhookBody = z.object({ url, kinds: kinds.optional() }).strict().openapi('WebhookBody');

export const WebhookUpdateBody = z.object({
  url: url.optional(),
  kinds: kinds.nullable().optional().openapi({ description: 'Replaces the kinds filter; null: every kind your grants cover again.' }),
  enabled: z.boolean().optional().openapi({ description: 'false pauses the endpoint: while paused it receives nothing (events of that time are never delivered to it, deliveries still pending are marked failed with `webhook paused`; retry them by hand after resuming). true resumes it (also after a 410 disabled it).' }),
}).strict().openapi('WebhookUpdateBody');

export const RotateSecretBody = z.object({
  overlap_seconds: z.number().int().min(0).max(MAX_ROTATION_OVERLAP_S).default(86_400).openapi({ description: 'How long the replaced secret keeps signing beside the new one (each delivery then carries two `v1,` signatures), at most 7 days; 0 stops it at once. Default one day.' }),
}).strict().openapi('RotateSecretBody');

export const RegisteredWebhook = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.string().openapi({ description: '`whsec_<base64>` Standard Webhooks signing secret. Shown here once; never again.' }),
  created_at: z.string(),
  enabled: z.boolean(),
  kinds: z.array(z.string()).openapi({ description: 'Event kinds delivered under your current grants (and your kinds filter, when given).' }),
}).strict().openapi('RegisteredWebhook');

export const RegisteredIsvWebhook = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.string().openapi({ description: '`whsec_<base64>` Standard Webhooks signing secret. Shown here once; never again.' }),
  created_at: z.string(),
  enabled: z.boolean(),
  kinds: z.array(z.string()).nullable().openapi({ description: 'The kinds filter; null: every kind your grants cover on each tenant.' }),
}).strict().openapi('RegisteredIsvWebhook');

const counts = z.object({ delivered: z.number().int(), failed: z.number().int(), pending: z.number().int() }).strict();

export const WebhookInfo = z.object({
  id: z.string(), url: z.string(), enabled: z.boolean(),
  disabled_reason: z.string().nullable().openapi({ description: 'Why deliveries stopped: `paused`, or e.g. `receiver answered 410`.' }),
  created_at: z.string(),
  tenant_id: z.string().nullable().openapi({ description: 'The tenant it receives; null for an ISV-wide endpoint (every tenant you see, now and later).' }),
  kinds: z.array(z.string()).nullable().openapi({ description: 'The kinds filter; null: every kind your grants cover.' }),
  previous_secret_expires_at: ts.openapi({ description: 'During a secret rotation\'s overlap: when the replaced secret stops signing. Null otherwise.' }),
  deliveries: counts,
}).strict().openapi('WebhookInfo');

export const WebhookList = listEnvelope('WebhookList', '/tenants/{tenant_id}/ticket-events/webhook', WebhookInfo);
export const IsvWebhookList = listEnvelope('IsvWebhookList', '/webhooks', WebhookInfo);

export const RotatedSecret = z.object({
  id: z.string(),
  secret: z.string().openapi({ description: 'The new `whsec_<base64>` secret. Shown here once; never again.' }),
  previous_secret_expires_at: ts.openapi({ description: 'Until then deliveries carry the replaced secret\'s signature too; null when it stopped at once.' }),
}).strict().openapi('RotatedWebhookSecret');

export const WebhookTestResult = z.object({
  webhook_id: z.string().openapi({ description: 'The test event\'s id: its `webhook-id` header.' }),
  kind: z.literal('webhook.test'),
  delivered: z.boolean().openapi({ description: 'The receiver answered 2xx.' }),
  status_code: z.number().int().nullable(),
  latency_ms: z.number().int(),
  error: z.string().nullable(),
}).strict().openapi('WebhookTestResult');

export const WebhookDelivery = z.object({
  id: z.string(),
  event_id: z.string().openapi({ description: 'The Event delivered; also the `webhook-id` header, stable across retries and replays.' }),
  event_kind: z.string().nullable(),
  tenant_id: z.string().nullable().openapi({ description: 'The tenant of the event; null for an event of your own (a connect session for a new MSP that expired).' }),
  status: z.enum(['pending', 'delivered', 'failed', 'gave_up']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable().openapi({ description: 'The receiver\'s HTTP status at the last try (null: no answer, or not tried yet).' }),
  last_error: z.string().nullable(),
  latency_ms: z.number().int().nullable().openapi({ description: 'How long the last try took.' }),
  next_attempt_at: ts.openapi({ description: 'When the next try is due after a failed one; null when none is scheduled.' }),
  delivered_at: ts, created_at: z.string(), updated_at: z.string(),
}).strict().openapi('WebhookDelivery');

export const WebhookDeliveryList = listEnvelope('WebhookDeliveryList', '/tenants/{tenant_id}/ticket-events/webhook/{webhook_id}/deliveries', WebhookDelivery);
export const IsvWebhookDeliveryList = listEnvelope('IsvWebhookDeliveryList', '/webhooks/{webhook_id}/deliveries', WebhookDelivery);
