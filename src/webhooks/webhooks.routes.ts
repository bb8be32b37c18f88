/** REST for webhooks: each route runs one graph operation (the rules live in WebhooksService). */
import { decodeCursor } from '../records/records.service';
import { defineRoute, type RouteDef } from '../rest/route';
import { TenantPath, uuid, z } from '../rest/schemas';

const ts = z.string().nullable().openapi({ description: 'RFC 3339 UTC timestamp', example: '2026-11-22T10:00:00Z' });

export const WebhookBody = z.object({
  url: z.string().min(1).max(2048).openapi({ description: 'HTTPS URL of the receiver, on a public address.', example: 'https://hooks.example.com/msp-events' }),
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

export const WebhookList = z.object({ webhooks: z.array(WebhookInfo), sandbox: z.boolean() }).strict().openapi('WebhookList');

export const WebhookDelivery = z.object({
  id: z.string(),
  event_id: z.string().openapi({ description: 'The Event delivered; also the `webhook-id` header, stable across retries.' }),
  status: z.enum(['pending', 'delivered', 'failed', 'gave_up']),
  attempts: z.number().int(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  delivered_at: ts, created_at: z.string(), updated_at: z.string(),
}).strict().openapi('WebhookDelivery');

export const WebhookDeliveryList = z.object({
  deliveries: z.array(WebhookDelivery),
  next_cursor: z.string().nullable().openapi({ description: 'Null when there is no further page.' }),
}).strict().openapi('WebhookDeliveryList');

const WebhookPath = TenantPath.extend({ webhook_id: uuid.openapi({ param: { name: 'webhook_id', in: 'path' } }) }).strict();

const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100).openapi({ description: 'Page size, 1 to 500 (default 100).' }),
  cursor: z.string().min(1).refine((c) => decodeCursor(c) !== null, { message: 'is not a next_cursor this service issued' })
    .optional().openapi({ description: '`next_cursor` of the previous page.' }),
}).strict();

const WEBHOOK_FIELDS = 'id url enabled disabled_reason created_at deliveries { delivered failed pending }';
const DELIVERY_FIELDS = 'id event_id status attempts last_status_code last_error delivered_at created_at updated_at';

export const REGISTER_WEBHOOK = 'mutation R($tenant_id: ID!, $url: String!) { register_webhook(tenant_id: $tenant_id, url: $url) { id url secret created_at enabled kinds } }';
export const LIST_WEBHOOKS = `query W($tenant_id: ID!) { webhooks(tenant_id: $tenant_id) { webhooks { ${WEBHOOK_FIELDS} } sandbox } }`;
export const DELETE_WEBHOOK = 'mutation D($tenant_id: ID!, $webhook_id: ID!) { delete_webhook(tenant_id: $tenant_id, webhook_id: $webhook_id) }';
export const WEBHOOK_DELIVERIES = `query L($tenant_id: ID!, $webhook_id: ID!, $limit: Int!, $cursor: String) { webhook_deliveries(tenant_id: $tenant_id, webhook_id: $webhook_id, limit: $limit, cursor: $cursor) { deliveries { ${DELIVERY_FIELDS} } next_cursor } }`;

export const WEBHOOK_DOCUMENTS = [REGISTER_WEBHOOK, LIST_WEBHOOKS, DELETE_WEBHOOK, WEBHOOK_DELIVERIES];

const BASE = '/tenants/{tenant_id}/ticket-events/webhook';

export const WEBHOOK_ROUTES: RouteDef[] = [
  defineRoute({
    method: 'post', path: BASE, operationId: 'register_webhook', summary: 'Register the signed webhook', tag: 'Events',
    description: 'Delivers ticket, device and company events (per your grants) and `sandbox_reset` as Standard Webhooks: headers `webhook-id` (the event id), `webhook-timestamp`, `webhook-signature` and `Service-Signature` (same value). Body: the Event. The receiver must be `https://` on a public address. Retries: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (Retry-After honoured); 410 disables the webhook; 3xx counts as a failure.',
    params: TenantPath, body: WebhookBody,
    response: { status: 201, schema: RegisteredWebhook, description: 'Registered. The secret is in this answer only.' },
    errors: ['not_found', 'grant_missing', 'validation', 'request_invalid'], documented: true,
    handle: async ({ params, body, caller, graph }) => ({
      status: 201,
      body: (await graph.run<{ register_webhook: unknown }>(REGISTER_WEBHOOK, { tenant_id: params.tenant_id, url: body.url }, caller)).register_webhook,
    }),
  }),
  defineRoute({
    method: 'get', path: BASE, operationId: 'list_webhooks', summary: 'Your webhooks on the tenant', tag: 'Events',
    description: 'Never includes the secret.',
    params: TenantPath, query: z.object({}).strict(),
    response: { status: 200, schema: WebhookList, description: 'Webhooks with their delivery counts.' },
    errors: ['not_found'], documented: false,
    handle: async ({ params, caller, graph }) => ({ body: (await graph.run<{ webhooks: unknown }>(LIST_WEBHOOKS, params, caller)).webhooks }),
  }),
  defineRoute({
    method: 'delete', path: `${BASE}/{webhook_id}`, operationId: 'delete_webhook', summary: 'Delete a webhook', tag: 'Events',
    description: 'Stops its deliveries and removes its delivery log.',
    params: WebhookPath,
    response: { status: 204, schema: z.null(), description: 'Deleted.' },
    errors: ['not_found'], documented: false,
    handle: async ({ params, caller, graph }) => {
      await graph.run(DELETE_WEBHOOK, params, caller);
      return { status: 204, body: null };
    },
  }),
  defineRoute({
    method: 'get', path: `${BASE}/{webhook_id}/deliveries`, operationId: 'list_webhook_deliveries', summary: 'Delivery log of a webhook', tag: 'Events',
    description: 'Newest first: status, tries, the last HTTP status and error of every delivery.',
    params: WebhookPath, query: DeliveriesQuery,
    response: { status: 200, schema: WebhookDeliveryList, description: 'One page of the delivery log.' },
    errors: ['not_found'], documented: false,
    handle: async ({ params, query, caller, graph }) => ({
      body: (await graph.run<{ webhook_deliveries: unknown }>(WEBHOOK_DELIVERIES, {
        tenant_id: params.tenant_id, webhook_id: params.webhook_id, limit: query.limit, cursor: query.cursor ?? null,
      }, caller)).webhook_deliveries,
    }),
  }),
];
