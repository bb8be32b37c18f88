/** Webhook registration, listing, removal and the delivery log, for the caller's ISV. */
import { Arg, Args, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { WebhookDelivery } from '../../entities';
import { ServiceError } from '../errors/service-error';
import type { GraphContext } from '../graphql/context';
import { TenantArgs } from '../records/list-args';
import { toRfc3339 } from '../records/record-lists';
import { decodeCursor, encodeCursor } from '../records/records.service';
import { RegisteredWebhook, WebhookDeliveryList, WebhookDeliveryView, WebhookList } from './webhook.types';

const deliveryView = (d: WebhookDelivery): WebhookDeliveryView => ({
  id: d.id, event_id: d.eventId, status: d.status, attempts: d.attempts, last_status_code: d.lastStatusCode,
  last_error: d.lastError, delivered_at: toRfc3339(d.deliveredAt), created_at: toRfc3339(d.createdAt)!, updated_at: toRfc3339(d.updatedAt)!,
});

@Resolver()
export class WebhooksResolver {
  @Mutation(() => RegisteredWebhook, { description: 'Needs at least one event grant (psa.ticket.events, rmm.device.events, psa.company.events).' })
  async register_webhook(
    @Args() { tenant_id }: TenantArgs, @Arg('url') url: string, @Ctx() { caller, services }: GraphContext,
  ): Promise<RegisteredWebhook> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    if (caller.kind !== 'isv') throw new ServiceError('request_invalid', 'A webhook belongs to an ISV: register it with that ISV\'s API key.');
    const { webhook, secret, kinds } = await services.webhooks.register(access, caller.isvId, url);
    return { id: webhook.id, url: webhook.url, secret, created_at: toRfc3339(webhook.createdAt)!, enabled: webhook.enabled, kinds };
  }

  @Query(() => WebhookList, { description: "The caller's webhooks on the tenant (never the secret)." })
  async webhooks(@Args() { tenant_id }: TenantArgs, @Ctx() { caller, services }: GraphContext): Promise<WebhookList> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    const rows = await services.webhooks.list(access, caller.kind === 'isv' ? caller.isvId : null);
    return {
      webhooks: rows.map(({ webhook: w, deliveries }) => ({
        id: w.id, url: w.url, enabled: w.enabled, disabled_reason: w.disabledReason, created_at: toRfc3339(w.createdAt)!, deliveries,
      })),
      sandbox: access.tenant.sandbox,
    };
  }

  @Mutation(() => Boolean)
  async delete_webhook(
    @Args() { tenant_id }: TenantArgs, @Arg('webhook_id', () => ID) webhookId: string, @Ctx() { caller, services }: GraphContext,
  ): Promise<boolean> {
    const access = await services.access.tenantAccess(caller, tenant_id);
    await services.webhooks.remove(access, caller.kind === 'isv' ? caller.isvId : null, webhookId);
    return true;
  }

  @Query(() => WebhookDeliveryList, { description: 'The delivery log of one webhook, newest first.' })
  async webhook_deliveries(
    @Args() { tenant_id }: TenantArgs,
    @Arg('webhook_id', () => ID) webhookId: string,
    @Arg('limit', () => Int, { defaultValue: 100, description: '1 to 500' }) limit: number,
    @Arg('cursor', () => String, { nullable: true }) cursor: string | null,
    @Ctx() { caller, services }: GraphContext,
  ): Promise<WebhookDeliveryList> {
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new ServiceError('request_invalid', 'limit must be an integer from 1 to 500.');
    const after = cursor ? decodeCursor(cursor) : null;
    if (cursor && !after) throw new ServiceError('request_invalid', 'cursor is not a next_cursor this service issued.');
    const access = await services.access.tenantAccess(caller, tenant_id);
    const page = await services.webhooks.deliveryLog(access, caller.kind === 'isv' ? caller.isvId : null, webhookId, limit, after);
    return { deliveries: page.items.map(deliveryView), next_cursor: page.next ? encodeCursor(page.next) : null };
  }
}
