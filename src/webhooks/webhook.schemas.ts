/** Webhook registration, listing and the delivery log, as the API answers them. */
import { listEnvelope } from '../shared/paging';
import { text, z } from '../shared/request';

const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });

export const WebhookBody = z.object({
  url: text(2048).min(1).openapi({ description: 'HTTPS URL of the receiver, on a public address. Refused at once: not https, credentials in it, spaces or control characters, a private or loopback IP literal, a special-use name (localhost, .local, .internal, .home.arpa) or a name resolving to a private address now. A name that does not resolve yet is accepted: every delivery resolves it again, connects only to a public address and records why in the delivery log. Stored normalised (as the URL standard writes it).', example: 'https://hooks.example.com/msp-events' }),
}).strict().openapi('WebhookBody');

export const RegisteredWebhook = z.object({
  id: z.string(),
  url: z.string(),
  secret: z.string().openapi({ description: '`whsec_<base64>` Standard Webhooks signing secret. Shown here once; never again.' }),
  created_at: z.string(),
  enabled: z.boolean(),
  kinds: z.array(z.string()).openapi({ description: 'Event kinds delivered under your current grants.' }),
}).strict().openapi('RegisteredWebhook');

export const WebhookInfo = z.object({
  id: z.string(), url: z.string(), enabled: z.boolean(),
  disabled_reason: z.string().nullable().openapi({ description: 'Why deliveries stopped, e.g. `receiver answered 410`.' }),
  created_at: z.string(),
  deliveries: z.object({ delivered: z.number().int(), failed: z.number().int(), pending: z.number().int() }).strict(),
}).strict().openapi('WebhookInfo');

export const WebhookList = listEnvelope('WebhookList', '/tenants/{tenant_id}/ticket-events/webhook', WebhookInfo);

export const WebhookDelivery = z.object({
  id: z.string(),
  event_id: z.string().openapi({ description: 'The Event delivered; also the `webhook-id` header, stable across retries.' }),
  status: z.enum(['pending', 'delivered', 'failed', 'gave_up']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  delivered_at: ts, created_at: z.string(), updated_at: z.string(),
}).strict().openapi('WebhookDelivery');

export const WebhookDeliveryList = listEnvelope('WebhookDeliveryList', '/tenants/{tenant_id}/ticket-events/webhook/{webhook_id}/deliveries', WebhookDelivery);

