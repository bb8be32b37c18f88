/**
 * Signed webhooks: registration, listing, updates (url, kinds, pause and resume), secret rotation with
 * an overlap, a test event, removal, the delivery log and a delivery's replay (operations), per tenant
 * and ISV-wide; and the subscriber that turns committed events into deliveries. A `webhook.deliver` job
 * wakes a webhook's lane.
 */
import type { FeatureModule } from '../operations/feature-module';
import { isvOf } from '../access/access.service';
import { isvOfCaller } from '../access/caller';
import { EVENT_GRANTS } from './event-access';
import { operationsUsing, tenantOf, type OperationContext } from '../operations/operation';
import { toRfc3339 } from '../shared/dates';
import { envelopeOf, pageOfAll, pageQuery, updatedSince } from '../shared/paging';
import { pathId, TenantPath, z } from '../shared/request';
import { DELIVERIES_CURSOR, WEBHOOKS_CURSOR, type DeliveryCounts, type HookScope, type WebhooksService } from './webhooks.service';
import {
  IsvWebhookDeliveryList, IsvWebhookList, RegisteredIsvWebhook, RegisteredWebhook, RotatedSecret, RotateSecretBody, WebhookBody,
  WebhookDeliveryList, WebhookInfo, WebhookList, WebhookTestResult, WebhookUpdateBody, WebhookDelivery as DeliverySchema,
} from './webhook.schemas';
import type { Webhook, WebhookDelivery } from '../../entities';
import type { Database } from '../db/database';
import type { EventsService } from '../events/events.service';
import type { Logger } from 'pino';
import { reactTo } from '../shared/committed-changes';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface WebhooksServices {
  db: Pick<Database, 'kind'>;
  events: EventsService;
  logger: Logger;
  webhooks: WebhooksService;
}
const defineOperation = operationsUsing<WebhooksServices>();
type Ctx = OperationContext<WebhooksServices>;

const BASE = '/tenants/{tenant_id}/ticket-events/webhook';
const ISV_BASE = '/webhooks';
const WebhookPath = TenantPath.extend({ webhook_id: pathId('webhook_id') }).strict();
const DeliveryPath = WebhookPath.extend({ delivery_id: pathId('delivery_id') }).strict();
const IsvWebhookPath = z.object({ webhook_id: pathId('webhook_id') }).strict();
const IsvDeliveryPath = IsvWebhookPath.extend({ delivery_id: pathId('delivery_id') }).strict();
const NoQuery = z.object({}).strict();
/** An ISV sees its own webhooks; an MSP key every ISV's on its tenant. */
const ownerOf = isvOfCaller;
/** A webhook of the tenant: the caller's own (an MSP key or the admin token: any ISV's). */
const onTenant = (ctx: Ctx): HookScope => ({ tenant: tenantOf(ctx), isvId: ownerOf(ctx.caller) });
/** One of the calling ISV's ISV-wide endpoints. */
const isvWide = (ctx: Ctx): HookScope => ({ tenant: null, isvId: isvOf(ctx.caller) });
/** The same for a read; the admin token (internal support) reads any ISV's. */
const isvWideRead = (ctx: Ctx): HookScope => ({ tenant: null, isvId: isvOfCaller(ctx.caller) });

const FILTER_NOTE = '`kinds` (exact kinds or families, as the feed\'s `kind` takes them) narrows what it receives; an unknown kind is 422 naming it.';
const ISV_WIDE_NOTE = 'Our addition: an endpoint of your ISV, not of one tenant. It receives the events of every tenant you see, now and later (a tenant that connects after you registered is covered with no new registration), each filtered by your grants on that tenant exactly as the tenant\'s feed is.';
const PAUSE_NOTE = 'A paused endpoint (enabled false) receives nothing while paused, like a disabled Stripe endpoint: no delivery is made for events of that time, and deliveries still pending are marked failed (`webhook paused`); retry them by hand once resumed.';

function hookView({ webhook: w, deliveries }: { webhook: Webhook; deliveries: DeliveryCounts }) {
  const overlap = w.previousSecretExpiresAt && new Date(w.previousSecretExpiresAt).getTime() > Date.now() ? toRfc3339(w.previousSecretExpiresAt) : null;
  return {
    id: w.id, url: w.url, enabled: w.enabled, disabled_reason: w.disabledReason, created_at: toRfc3339(w.createdAt)!,
    tenant_id: w.tenantId, kinds: w.kinds, previous_secret_expires_at: overlap, deliveries,
  };
}

function deliveryView(d: WebhookDelivery & { eventKind?: string | null }): z.infer<typeof DeliverySchema> {
  return {
    id: d.id, event_id: d.eventId, event_kind: d.eventKind ?? null, tenant_id: d.tenantId, status: d.status, attempts: d.attempts,
    last_status_code: d.lastStatusCode, last_error: d.lastError, latency_ms: d.lastLatencyMs, next_attempt_at: toRfc3339(d.nextAttemptAt),
    delivered_at: toRfc3339(d.deliveredAt), created_at: toRfc3339(d.createdAt)!, updated_at: toRfc3339(d.updatedAt)!,
  };
}

// ---- per tenant ---------------------------------------------------------------------------------

const registerWebhook = defineOperation({
  name: 'register_webhook', kind: 'mutation', summary: 'Register the signed webhook', tag: 'Events', role: 'isv',
  // Any one event grant on any connection; which kinds it receives follows the grants it holds.
  grant: { key: EVENT_GRANTS },
  description: `Delivers ticket, device and company events (per your grants) and \`sandbox_reset\` as Standard Webhooks: headers \`webhook-id\` (the event id), \`webhook-timestamp\`, \`webhook-signature\` and \`Service-Signature\` (same value). Body: the Event. The receiver must be \`https://\` on a public address. Retries: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (Retry-After honoured); 410 disables the webhook; 3xx counts as a failure. ${FILTER_NOTE}`,
  http: { method: 'post', path: BASE, documented: true },
  path: TenantPath, body: WebhookBody,
  responses: [{ status: 201, schema: RegisteredWebhook, description: 'Registered. The secret is in this answer only.' }],
  errors: ['grant_missing', 'validation', 'request_invalid', 'role_required'],
  handle: async ({ body }, ctx) => {
    const { webhook, secret, kinds } = await ctx.services.webhooks.register(tenantOf(ctx), isvOf(ctx.caller), body.url, body.kinds ?? null);
    return { id: webhook.id, url: webhook.url, secret, created_at: toRfc3339(webhook.createdAt)!, enabled: webhook.enabled, kinds: kinds ?? [] };
  },
});

const listWebhooks = defineOperation({
  name: 'list_webhooks', kind: 'query', summary: 'Webhooks on the tenant', tag: 'Events', role: 'reader',
  description: 'Your webhooks (an MSP key: every ISV\'s). Never includes the secret.',
  http: { method: 'get', path: BASE, documented: false },
  path: TenantPath, query: pageQuery(WEBHOOKS_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: WebhookList, description: 'Webhooks with their delivery counts, oldest first.' }],
  errors: [],
  handle: async ({ query }, ctx) => {
    const access = tenantOf(ctx);
    // At most MAX_WEBHOOKS_PER_ISV_TENANT per ISV: paged after reading them all.
    const rows = updatedSince(await ctx.services.webhooks.list(access, ownerOf(ctx.caller)), query, (r) => r.webhook.updatedAt);
    const page = pageOfAll(rows, query, WEBHOOKS_CURSOR, ['time', 'uuid'], (r) => [r.webhook.createdAt.toISOString(), r.webhook.id]);
    return envelopeOf(BASE, { items: page.items.map(hookView), next_cursor: page.next_cursor }, access.tenant.sandbox);
  },
});

const getWebhook = defineOperation({
  name: 'get_webhook', kind: 'query', summary: 'A webhook on the tenant', tag: 'Events', role: 'reader',
  description: 'Its url, kinds filter, whether it is paused, a rotation\'s overlap and its delivery counts. Never the secret. Our addition.',
  http: { method: 'get', path: `${BASE}/{webhook_id}`, documented: false },
  path: WebhookPath, query: NoQuery,
  responses: [{ status: 200, schema: WebhookInfo, description: 'The webhook.' }],
  errors: [],
  handle: async ({ path }, ctx) => hookView(await ctx.services.webhooks.get(onTenant(ctx), path.webhook_id)),
});

const updateWebhook = defineOperation({
  name: 'update_webhook', kind: 'mutation', summary: 'Change a webhook: url, kinds, pause or resume', tag: 'Events', role: 'isv', grant: 'none',
  description: `Only the fields sent change. ${FILTER_NOTE} ${PAUSE_NOTE} Our addition.`,
  http: { method: 'patch', path: `${BASE}/{webhook_id}`, documented: false },
  path: WebhookPath, body: WebhookUpdateBody,
  responses: [{ status: 200, schema: WebhookInfo, description: 'The webhook as it is now.' }],
  errors: ['validation', 'role_required'],
  handle: async ({ path, body }, ctx) => hookView(await ctx.services.webhooks.update(onTenant(ctx), path.webhook_id, body)),
});

const Deleted = z.object({ id: z.string(), deleted: z.literal(true) }).strict().openapi('DeletedWebhook');

const deleteWebhook = defineOperation({
  // The ISV's own webhook: an MSP key reads the tenant's webhooks but removes none (as it registers none).
  name: 'delete_webhook', kind: 'mutation', summary: 'Delete a webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: 'Stops its deliveries and removes its delivery log.',
  http: { method: 'delete', path: `${BASE}/{webhook_id}`, documented: false },
  path: WebhookPath,
  responses: [{ status: 204, schema: Deleted, description: 'Deleted (no body over REST).' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => {
    await ctx.services.webhooks.remove(onTenant(ctx), path.webhook_id);
    return { id: path.webhook_id, deleted: true as const };
  },
});

const ROTATE_DESCRIPTION = 'A new signing secret, in this answer only. During the overlap (`overlap_seconds`, at most 7 days) every delivery carries two signatures in `webhook-signature`, space-separated as Standard Webhooks allows: `v1,<new> v1,<old>`; after it, only the new one. Verify with either secret meanwhile, then drop the old. A secret replaced by an earlier rotation stops at once. Our addition.';

const rotateSecret = defineOperation({
  name: 'rotate_webhook_secret', kind: 'mutation', summary: 'Rotate a webhook\'s signing secret, with an overlap', tag: 'Events', role: 'isv', grant: 'none',
  description: ROTATE_DESCRIPTION,
  http: { method: 'post', path: `${BASE}/{webhook_id}/rotate-secret`, documented: false },
  path: WebhookPath, body: RotateSecretBody,
  responses: [{ status: 200, schema: RotatedSecret, description: 'The new secret (shown once) and when the old one stops signing.' }],
  errors: ['role_required'],
  handle: async ({ path, body }, ctx) => rotated(await ctx.services.webhooks.rotateSecret(onTenant(ctx), path.webhook_id, body.overlap_seconds)),
});

const TEST_DESCRIPTION = 'Sends one `webhook.test` event to the receiver now, signed like every delivery (both secrets during a rotation\'s overlap) and through the same address checks, and answers how it went. Not an event of any feed, not kept in the delivery log; works on every tenant, not only the sandbox. Our addition.';

const testWebhook = defineOperation({
  name: 'test_webhook', kind: 'mutation', summary: 'Send a test event to a webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: TEST_DESCRIPTION,
  http: { method: 'post', path: `${BASE}/{webhook_id}/test`, documented: false },
  path: WebhookPath,
  responses: [{ status: 200, schema: WebhookTestResult, description: 'How the receiver answered.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => ctx.services.webhooks.sendTest(onTenant(ctx), path.webhook_id),
});

const listDeliveries = defineOperation({
  name: 'list_webhook_deliveries', kind: 'query', summary: 'Delivery log of a webhook', tag: 'Events', role: 'reader',
  description: 'Newest first: status, tries, the last HTTP status, error and latency, and when the next try is due.',
  http: { method: 'get', path: `${BASE}/{webhook_id}/deliveries`, documented: false },
  path: WebhookPath, query: pageQuery(DELIVERIES_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: WebhookDeliveryList, description: 'One page of the delivery log.' }],
  errors: [],
  handle: async ({ path, query }, ctx) => {
    const access = tenantOf(ctx);
    const page = await ctx.services.webhooks.deliveryLog(onTenant(ctx), path.webhook_id, query);
    return envelopeOf(`${BASE}/{webhook_id}/deliveries`, { items: page.items.map(deliveryView), next_cursor: page.next_cursor }, access.tenant.sandbox);
  },
});

const RETRY_DESCRIPTION = 'Sends the delivery\'s event again, with the same `webhook-id`, as one more try in its log (attempts grows): it is pending again and tried at once, in the webhook\'s order. Should that try fail, the retry schedule goes on from the tries it had made. A paused webhook is refused (422). Our addition.';

const retryDelivery = defineOperation({
  name: 'retry_webhook_delivery', kind: 'mutation', summary: 'Send a delivery again', tag: 'Events', role: 'isv', grant: 'none',
  description: RETRY_DESCRIPTION,
  http: { method: 'post', path: `${BASE}/{webhook_id}/deliveries/{delivery_id}/retry`, documented: false },
  path: DeliveryPath,
  responses: [{ status: 202, schema: DeliverySchema, description: 'Pending again; its lane tries it now.' }],
  errors: ['request_invalid', 'role_required'],
  handle: async ({ path }, ctx) => deliveryView(await ctx.services.webhooks.retryDelivery(onTenant(ctx), path.webhook_id, path.delivery_id)),
});

// ---- ISV-wide -----------------------------------------------------------------------------------

const registerIsvWebhook = defineOperation({
  name: 'register_isv_webhook', kind: 'mutation', summary: 'Register an ISV-wide webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: `${ISV_WIDE_NOTE} Signed and retried exactly as a tenant's webhook (Standard Webhooks; body: the Event, with its \`tenant_id\`). ${FILTER_NOTE}`,
  http: { method: 'post', path: ISV_BASE, documented: false },
  body: WebhookBody,
  responses: [{ status: 201, schema: RegisteredIsvWebhook, description: 'Registered. The secret is in this answer only.' }],
  errors: ['validation', 'request_invalid', 'role_required'],
  handle: async ({ body }, ctx) => {
    const { webhook, secret, kinds } = await ctx.services.webhooks.register(null, isvOf(ctx.caller), body.url, body.kinds ?? null);
    return { id: webhook.id, url: webhook.url, secret, created_at: toRfc3339(webhook.createdAt)!, enabled: webhook.enabled, kinds };
  },
});

const listIsvWebhooks = defineOperation({
  name: 'list_isv_webhooks', kind: 'query', summary: 'Your ISV-wide webhooks', tag: 'Events', role: 'isv', grant: 'none',
  description: 'Oldest first, with their delivery counts. Never includes the secret. (Internal support with the admin token sees every ISV\'s.) Our addition. (`sandbox` is false: the list is not one tenant\'s.)',
  http: { method: 'get', path: ISV_BASE, documented: false },
  query: pageQuery(WEBHOOKS_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: IsvWebhookList, description: 'One page of your ISV-wide webhooks.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => {
    const rows = updatedSince(await ctx.services.webhooks.listIsvWide(isvOfCaller(ctx.caller)), query, (r) => r.webhook.updatedAt);
    const page = pageOfAll(rows, query, WEBHOOKS_CURSOR, ['time', 'uuid'], (r) => [r.webhook.createdAt.toISOString(), r.webhook.id]);
    return envelopeOf(ISV_BASE, { items: page.items.map(hookView), next_cursor: page.next_cursor }, false);
  },
});

const getIsvWebhook = defineOperation({
  name: 'get_isv_webhook', kind: 'query', summary: 'An ISV-wide webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: 'Its url, kinds filter, whether it is paused, a rotation\'s overlap and its delivery counts. Never the secret. Another ISV\'s is 404. Our addition.',
  http: { method: 'get', path: `${ISV_BASE}/{webhook_id}`, documented: false },
  path: IsvWebhookPath, query: NoQuery,
  responses: [{ status: 200, schema: WebhookInfo, description: 'The webhook.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => hookView(await ctx.services.webhooks.get(isvWideRead(ctx), path.webhook_id)),
});

const updateIsvWebhook = defineOperation({
  name: 'update_isv_webhook', kind: 'mutation', summary: 'Change an ISV-wide webhook: url, kinds, pause or resume', tag: 'Events', role: 'isv', grant: 'none',
  description: `Only the fields sent change. ${FILTER_NOTE} ${PAUSE_NOTE} Our addition.`,
  http: { method: 'patch', path: `${ISV_BASE}/{webhook_id}`, documented: false },
  path: IsvWebhookPath, body: WebhookUpdateBody,
  responses: [{ status: 200, schema: WebhookInfo, description: 'The webhook as it is now.' }],
  errors: ['validation', 'role_required'],
  handle: async ({ path, body }, ctx) => hookView(await ctx.services.webhooks.update(isvWide(ctx), path.webhook_id, body)),
});

const deleteIsvWebhook = defineOperation({
  name: 'delete_isv_webhook', kind: 'mutation', summary: 'Delete an ISV-wide webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: 'Stops its deliveries and removes its delivery log. Our addition.',
  http: { method: 'delete', path: `${ISV_BASE}/{webhook_id}`, documented: false },
  path: IsvWebhookPath,
  responses: [{ status: 204, schema: Deleted, description: 'Deleted (no body over REST).' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => {
    await ctx.services.webhooks.remove(isvWide(ctx), path.webhook_id);
    return { id: path.webhook_id, deleted: true as const };
  },
});

const rotateIsvSecret = defineOperation({
  name: 'rotate_isv_webhook_secret', kind: 'mutation', summary: 'Rotate an ISV-wide webhook\'s signing secret, with an overlap', tag: 'Events', role: 'isv', grant: 'none',
  description: ROTATE_DESCRIPTION,
  http: { method: 'post', path: `${ISV_BASE}/{webhook_id}/rotate-secret`, documented: false },
  path: IsvWebhookPath, body: RotateSecretBody,
  responses: [{ status: 200, schema: RotatedSecret, description: 'The new secret (shown once) and when the old one stops signing.' }],
  errors: ['role_required'],
  handle: async ({ path, body }, ctx) => rotated(await ctx.services.webhooks.rotateSecret(isvWide(ctx), path.webhook_id, body.overlap_seconds)),
});

const testIsvWebhook = defineOperation({
  name: 'test_isv_webhook', kind: 'mutation', summary: 'Send a test event to an ISV-wide webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: TEST_DESCRIPTION,
  http: { method: 'post', path: `${ISV_BASE}/{webhook_id}/test`, documented: false },
  path: IsvWebhookPath,
  responses: [{ status: 200, schema: WebhookTestResult, description: 'How the receiver answered.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => ctx.services.webhooks.sendTest(isvWide(ctx), path.webhook_id),
});

const listIsvDeliveries = defineOperation({
  name: 'list_isv_webhook_deliveries', kind: 'query', summary: 'Delivery log of an ISV-wide webhook', tag: 'Events', role: 'isv', grant: 'none',
  description: 'Newest first: each delivery\'s tenant, status, tries, the last HTTP status, error and latency, and when the next try is due. Our addition.',
  http: { method: 'get', path: `${ISV_BASE}/{webhook_id}/deliveries`, documented: false },
  path: IsvWebhookPath, query: pageQuery(DELIVERIES_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: IsvWebhookDeliveryList, description: 'One page of the delivery log.' }],
  errors: ['role_required'],
  handle: async ({ path, query }, ctx) => {
    const page = await ctx.services.webhooks.deliveryLog(isvWideRead(ctx), path.webhook_id, query);
    return envelopeOf(`${ISV_BASE}/{webhook_id}/deliveries`, { items: page.items.map(deliveryView), next_cursor: page.next_cursor }, false);
  },
});

const retryIsvDelivery = defineOperation({
  name: 'retry_isv_webhook_delivery', kind: 'mutation', summary: 'Send an ISV-wide webhook\'s delivery again', tag: 'Events', role: 'isv', grant: 'none',
  description: RETRY_DESCRIPTION,
  http: { method: 'post', path: `${ISV_BASE}/{webhook_id}/deliveries/{delivery_id}/retry`, documented: false },
  path: IsvDeliveryPath,
  responses: [{ status: 202, schema: DeliverySchema, description: 'Pending again; its lane tries it now.' }],
  errors: ['request_invalid', 'role_required'],
  handle: async ({ path }, ctx) => deliveryView(await ctx.services.webhooks.retryDelivery(isvWide(ctx), path.webhook_id, path.delivery_id)),
});

function rotated({ webhook, secret }: { webhook: Webhook; secret: string }) {
  return { id: webhook.id, secret, previous_secret_expires_at: toRfc3339(webhook.previousSecretExpiresAt) };
}

export const webhooksFeature: FeatureModule<WebhooksServices> = {
  name: 'webhooks',
  operations: [
    registerWebhook, listWebhooks, getWebhook, updateWebhook, deleteWebhook, rotateSecret, testWebhook, listDeliveries, retryDelivery,
    registerIsvWebhook, listIsvWebhooks, getIsvWebhook, updateIsvWebhook, deleteIsvWebhook, rotateIsvSecret, testIsvWebhook, listIsvDeliveries, retryIsvDelivery,
  ],
  install(services) {
    // Several worker processes share PostgreSQL: a webhook's lane then runs under an advisory lock.
    services.webhooks.lanes.crossProcess = services.db.kind === 'postgres';
    // Retries the embedded queue lost in a restart are due again (a lane already running just looks again).
    services.webhooks.resumePending().catch((err: Error) => services.logger.error({ err: err.message }, 'resuming webhook deliveries failed'));
  },
  reactions: (services) => [
    reactTo('events.committed', 'webhooks: fan-out', async ({ tenantId, eventIds }) => {
      try {
        await services.webhooks.enqueueForEvents(tenantId, eventIds);
      } catch (err) {
        // Events are committed and readable from the feed; a failed fan-out must not fail the sync.
        services.logger.error({ tenantId, events: eventIds.length, err: (err as Error).message }, 'webhook fan-out failed');
      }
    }),
    // An ISV's own events (no tenant) go to its ISV-wide endpoints.
    reactTo('events.isv_committed', 'webhooks: ISV-wide fan-out', async ({ isvId, eventIds }) => {
      try {
        await services.webhooks.enqueueForIsvEvents(isvId, eventIds);
      } catch (err) {
        services.logger.error({ isvId, events: eventIds.length, err: (err as Error).message }, 'webhook fan-out failed');
      }
    }),
    // Registering, removing or disabling a webhook announces itself as an access change: the enabled hooks are read again.
    reactTo('access.caches_cleared', 'webhooks: enabled hooks', () => services.webhooks.forgetEnabledHooks()),
  ],
};
