/**
 * Signed webhooks: registration, listing, removal and the delivery log (operations), and the
 * subscriber that turns committed events into deliveries. A `webhook.deliver` job wakes a webhook's lane.
 */
import type { FeatureModule } from '../feature';
import { isvOf } from '../access/access.service';
import { isvOfCaller } from '../access/caller';
import { EVENT_GRANTS } from './event-access';
import { operationsUsing, tenantOf } from '../operations/operation';
import { toRfc3339 } from '../records/record-lists';
import { envelopeOf, pageOfAll, pageQuery, updatedSince } from '../shared/paging';
import { pathId, TenantPath, z } from '../shared/request';
import { DELIVERIES_CURSOR, WEBHOOKS_CURSOR, type WebhooksService } from './webhooks.service';
import { RegisteredWebhook, WebhookBody, WebhookDeliveryList, WebhookList } from './webhook.schemas';
import type { Database } from '../db/database';
import type { EventsService } from '../events/events.service';
import type { Logger } from 'pino';

/** The services this feature's operations use, and all they see of the service graph (src/feature.ts). */
export interface WebhooksServices {
  db: Pick<Database, 'kind'>;
  events: EventsService;
  logger: Logger;
  webhooks: WebhooksService;
}
const defineOperation = operationsUsing<WebhooksServices>();

const BASE = '/tenants/{tenant_id}/ticket-events/webhook';
const WebhookPath = TenantPath.extend({ webhook_id: pathId('webhook_id') }).strict();
/** An ISV sees its own webhooks; an MSP key every ISV's on its tenant. */
const ownerOf = isvOfCaller;

const registerWebhook = defineOperation({
  name: 'register_webhook', kind: 'mutation', summary: 'Register the signed webhook', tag: 'Events', role: 'isv',
  // Any one event grant on any connection; which kinds it receives follows the grants it holds.
  grant: { key: EVENT_GRANTS },
  description: 'Delivers ticket, device and company events (per your grants) and `sandbox_reset` as Standard Webhooks: headers `webhook-id` (the event id), `webhook-timestamp`, `webhook-signature` and `Service-Signature` (same value). Body: the Event. The receiver must be `https://` on a public address. Retries: 0 s, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h (Retry-After honoured); 410 disables the webhook; 3xx counts as a failure.',
  http: { method: 'post', path: BASE, documented: true },
  path: TenantPath, body: WebhookBody,
  responses: [{ status: 201, schema: RegisteredWebhook, description: 'Registered. The secret is in this answer only.' }],
  errors: ['grant_missing', 'validation', 'request_invalid', 'role_required'],
  handle: async ({ body }, ctx) => {
    const { webhook, secret, kinds } = await ctx.services.webhooks.register(tenantOf(ctx), isvOf(ctx.caller), body.url);
    return { id: webhook.id, url: webhook.url, secret, created_at: toRfc3339(webhook.createdAt)!, enabled: webhook.enabled, kinds };
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
    return envelopeOf(BASE, {
      items: page.items.map(({ webhook: w, deliveries }) => ({
        id: w.id, url: w.url, enabled: w.enabled, disabled_reason: w.disabledReason, created_at: toRfc3339(w.createdAt)!, deliveries,
      })),
      next_cursor: page.next_cursor,
    }, access.tenant.sandbox);
  },
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
    await ctx.services.webhooks.remove(tenantOf(ctx), ownerOf(ctx.caller), path.webhook_id);
    return { id: path.webhook_id, deleted: true as const };
  },
});

const listDeliveries = defineOperation({
  name: 'list_webhook_deliveries', kind: 'query', summary: 'Delivery log of a webhook', tag: 'Events', role: 'reader',
  description: 'Newest first: status, tries, the last HTTP status and error of every delivery.',
  http: { method: 'get', path: `${BASE}/{webhook_id}/deliveries`, documented: false },
  path: WebhookPath, query: pageQuery(DELIVERIES_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: WebhookDeliveryList, description: 'One page of the delivery log.' }],
  errors: [],
  handle: async ({ path, query }, ctx) => {
    const access = tenantOf(ctx);
    const page = await ctx.services.webhooks.deliveryLog(access, ownerOf(ctx.caller), path.webhook_id, query);
    return envelopeOf(`${BASE}/{webhook_id}/deliveries`, {
      items: page.items.map((d) => ({
        id: d.id, event_id: d.eventId, status: d.status, attempts: d.attempts, last_status_code: d.lastStatusCode,
        last_error: d.lastError, delivered_at: toRfc3339(d.deliveredAt), created_at: toRfc3339(d.createdAt)!, updated_at: toRfc3339(d.updatedAt)!,
      })),
      next_cursor: page.next_cursor,
    }, access.tenant.sandbox);
  },
});

export const webhooksFeature: FeatureModule<WebhooksServices> = {
  name: 'webhooks',
  operations: [registerWebhook, listWebhooks, deleteWebhook, listDeliveries],
  install(services) {
    // Several worker processes share PostgreSQL: a webhook's lane then runs under an advisory lock.
    services.webhooks.lanes.crossProcess = services.db.kind === 'postgres';
    // Retries the embedded queue lost in a restart are due again (a lane already running just looks again).
    services.webhooks.resumePending().catch((err: Error) => services.logger.error({ err: err.message }, 'resuming webhook deliveries failed'));
    services.events.onEventsCommitted(async (tenantId, eventIds) => {
      try {
        await services.webhooks.enqueueForEvents(tenantId, eventIds);
      } catch (err) {
        // Events are committed and readable from the feed; a failed fan-out must not fail the sync.
        services.logger.error({ tenantId, events: eventIds.length, err: (err as Error).message }, 'webhook fan-out failed');
      }
    });
  },
};
