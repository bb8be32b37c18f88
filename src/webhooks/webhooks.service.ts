/**
 * Signed webhooks (docs/architecture.md, Events and webhooks): an ISV registers a receiver per tenant, every committed event
 * its grants cover becomes one delivery (one row in the delivery log), sent in feed order by the
 * webhook's delivery lane (delivery-lanes.ts), and each try signs the Event the Standard Webhooks way. The signing secret is shown once and kept only
 * encrypted; it is never logged.
 */
import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { Webhook, WebhookDelivery } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { AppConfig } from '../config/config';
import { ServiceError } from '../errors/service-error';
import type { SecretBox } from '../security/secret-box';
import type { AccessService, TenantAccess } from '../access/access.service';
import { EVENT_GRANTS, kindsForGrants } from './event-access';
import { BLOCKED_PRIVATE, checkReceiverUrl, parseReceiverUrl, ReceiverUrlRefused, systemResolver, type HostResolver } from './ssrf-guard';
import { DeliveryLanes } from './delivery-lanes';
import { WebhooksStore } from './webhooks.store';
import { afterKey, listCursor, rowsToFetch, toPage, type Page, type PageRequest } from '../shared/paging';
import { TtlCache } from '../shared/ttl-cache';

/** Webhooks page oldest first on (created_at, id); their deliveries newest first on the delivery id's stored position. */
export const WEBHOOKS_CURSOR = listCursor('webhooks', ['time', 'uuid']);
export const DELIVERIES_CURSOR = listCursor('webhook_deliveries', ['uuid']);

export interface DeliveryCounts {
  delivered: number;
  failed: number;
  pending: number;
}

/** Enough for any honest use; a runaway client cannot fan one event out without bound. */
export const MAX_WEBHOOKS_PER_ISV_TENANT = 10;
export const DELIVERY_TIMEOUT_MS = 15_000;
export { GONE_REASON } from './delivery-lanes';
const FAN_OUT_CHUNK = 2_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Tries of a lane wake-up the queue makes when the lane itself failed (the store, not a receiver). */
const WAKE_ATTEMPTS = 5;
/**
 * A lane with a delivery due this long ago was not woken (a delayed wake-up lost, a process gone while it
 * held one): where jobs run, lanes are swept for such deliveries this often (WebhooksService.wakeOverdue).
 */
export const OVERDUE_LANE_MS = 30_000;
/** How long the fan-out keeps a tenant's enabled webhooks at most (any change clears them at once). */
const HOOKS_CACHE_MS = 5_000;

export class WebhooksService {
  /** Multiplies every retry delay (WEBHOOK_RETRY_SCALE); tests shrink it, production keeps 1. */
  retryScale = this.config.webhookRetryScale;
  timeoutMs = DELIVERY_TIMEOUT_MS;
  /** DNS for the SSRF guard; tests inject their own answers. */
  resolve: HostResolver = systemResolver;

  /** One ordered lane per webhook: what the `webhook.deliver` job runs. */
  readonly lanes: DeliveryLanes;
  private readonly store: WebhooksStore;
  /**
   * Each tenant's enabled webhooks, as the fan-out reads them at every committed page: cached like the
   * access lookups and cleared with them, so registering, removing or disabling a webhook (which
   * announces itself as an access change) clears them here and in every other process.
   */
  private readonly enabledHooks = new TtlCache<Webhook[]>(HOOKS_CACHE_MS);
  private hooksGeneration = 0;

  constructor(readonly ds: DataSource, readonly box: SecretBox, readonly queue: JobQueue, readonly config: AppConfig, private readonly access: AccessService) {
    this.lanes = new DeliveryLanes(ds, this);
    this.store = new WebhooksStore(ds);
    access.onCachesCleared(() => {
      this.hooksGeneration++;
      this.enabledHooks.clear();
    });
  }

  /** A webhook was registered, removed or disabled: the fan-out of every process reads the tenant's webhooks again. */
  hooksChanged(): Promise<void> {
    return this.access.invalidate();
  }

  // ---- registration -------------------------------------------------------------------------

  async register(access: TenantAccess, isvId: string, url: string): Promise<{ webhook: Webhook; secret: string; kinds: string[] }> {
    const held = heldEventGrants(access);
    if (held.size === 0) throw ServiceError.grantMissing(EVENT_GRANTS[0]);
    // Refused here only what is refused for certain (docs/architecture.md, Events and webhooks): not https, credentials, a
    // private literal or special-use name, a name that resolves to a private address now. A name that
    // does not resolve now is accepted (the sandbox has no outside DNS); every delivery resolves it again.
    let normalised: string;
    try {
      normalised = parseReceiverUrl(url).href;
      await checkReceiverUrl(normalised, { allowLoopback: this.config.webhookAllowLoopback, resolve: this.resolve })
        .catch((err: unknown) => { if (!(err instanceof ReceiverUrlRefused && err.reason === 'unresolvable')) throw err; });
    } catch (err) {
      if (!(err instanceof ReceiverUrlRefused)) throw err;
      const message = err.reason === 'private' ? `url must point at a public address (${BLOCKED_PRIVATE}).` : err.message;
      throw new ServiceError('validation', message, { details: { field: 'url', reason: err.message } });
    }
    const repo = this.ds.getRepository(Webhook);
    const count = await repo.count({ where: { tenantId: access.tenant.id, isvId } });
    if (count >= MAX_WEBHOOKS_PER_ISV_TENANT) {
      throw new ServiceError('request_invalid', `At most ${MAX_WEBHOOKS_PER_ISV_TENANT} webhooks per tenant; delete one first.`);
    }
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const webhook = await repo.save(repo.create({
      tenantId: access.tenant.id, isvId, url: normalised, secretEncrypted: this.box.seal(secret), enabled: true, disabledReason: null,
    }));
    await this.hooksChanged();
    return { webhook, secret, kinds: kindsForGrants(held) };
  }

  /** The caller's webhooks on the tenant (admin: every ISV's), oldest first, with delivery counts. */
  async list(access: TenantAccess, isvId: string | null): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
    const hooks = await this.ds.getRepository(Webhook).find({
      where: { tenantId: access.tenant.id, ...(isvId ? { isvId } : {}) }, order: { createdAt: 'ASC', id: 'ASC' },
    });
    if (hooks.length === 0) return [];
    const rows = await this.store.deliveryCounts(hooks.map((h) => h.id));
    return hooks.map((webhook) => {
      const counts: DeliveryCounts = { delivered: 0, failed: 0, pending: 0 };
      for (const r of rows.filter((x) => x.webhook_id === webhook.id)) {
        const n = Number(r.n);
        if (r.status === 'delivered') counts.delivered += n;
        else if (r.status === 'pending') counts.pending += n;
        else counts.failed += n;
      }
      return { webhook, deliveries: counts };
    });
  }

  async remove(access: TenantAccess, isvId: string | null, webhookId: string): Promise<void> {
    const hook = await this.owned(access, isvId, webhookId);
    await this.ds.transaction(async (m) => {
      await m.getRepository(WebhookDelivery).delete({ webhookId: hook.id });
      await m.getRepository(Webhook).delete({ id: hook.id });
    });
    await this.hooksChanged();
  }

  /**
   * The delivery log, newest first: keyset on (created_at, id) of the cursor's delivery, compared against
   * the stored row (no timestamp precision is lost in a cursor).
   */
  async deliveryLog(access: TenantAccess, isvId: string | null, webhookId: string, q: PageRequest): Promise<Page<WebhookDelivery>> {
    const hook = await this.owned(access, isvId, webhookId);
    const afterId = afterKey(DELIVERIES_CURSOR, q)?.[0] ?? null;
    const qb = this.ds.getRepository(WebhookDelivery).createQueryBuilder('d')
      .where('d.webhook_id = :hook', { hook: hook.id })
      .orderBy('d.created_at', 'DESC').addOrderBy('d.id', 'DESC')
      .limit(rowsToFetch(q.limit));
    if (afterId) {
      qb.andWhere('(d.created_at, d.id) < (SELECT c.created_at, c.id FROM webhook_deliveries c WHERE c.id = :after AND c.webhook_id = :hook)', { after: afterId });
    }
    if (q.updated_since) qb.andWhere('d.updated_at >= :since', { since: new Date(q.updated_since) });
    return toPage(await qb.getMany(), q.limit, DELIVERIES_CURSOR, (d) => [d.id]);
  }

  private async owned(access: TenantAccess, isvId: string | null, webhookId: string): Promise<Webhook> {
    const hook = UUID.test(webhookId)
      ? await this.ds.getRepository(Webhook).findOne({ where: { id: webhookId, tenantId: access.tenant.id, ...(isvId ? { isvId } : {}) } })
      : null;
    // Another ISV's webhook is as invisible as one that does not exist.
    if (!hook) throw ServiceError.notFound('Webhook');
    return hook;
  }

  // ---- fan-out ------------------------------------------------------------------------------

  /**
   * After events committed: one delivery per (enabled webhook, event its ISV is granted), and each
   * webhook that got one has its lane woken at once. Re-running for the same events adds nothing
   * (unique per webhook and event).
   */
  async enqueueForEvents(tenantId: string, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const hooks = await this.enabledOf(tenantId);
    if (hooks.length === 0) return 0;
    const visibility = await this.access.eventVisibilityOfIsvs(tenantId, hooks.map((h) => h.isvId));
    // An ISV that sees nothing of the tenant (no grant left) gets nothing.
    const seeing = hooks.flatMap((h) => { const v = visibility.get(h.isvId); return v ? [{ id: h.id, visibility: v }] : []; });
    let queued = 0;
    // One statement per chunk, in bounded size: a large sync announces thousands of events at once.
    for (const ids of chunks(eventIds, FAN_OUT_CHUNK)) {
      const added = await this.store.insertDeliveries(tenantId, ids, seeing);
      for (const a of added) queued += a.n;
      // Each chunk's lanes are woken as soon as it is stored: the first deliveries leave while later chunks are written.
      await this.wake(tenantId, added.map((a) => a.webhook_id));
    }
    return queued;
  }

  private async enabledOf(tenantId: string): Promise<Webhook[]> {
    const hit = this.enabledHooks.get(tenantId);
    if (hit) return hit;
    const generation = this.hooksGeneration;
    const hooks = await this.ds.getRepository(Webhook).find({ where: { tenantId, enabled: true } });
    // Not kept when a change cleared the cache while this was read: it may be from before the change.
    if (generation === this.hooksGeneration) this.enabledHooks.set(tenantId, hooks);
    return hooks;
  }

  /** Queues a wake-up of each webhook's lane, now or after `delayMs` (a retry that is due then). */
  async wake(tenantId: string, webhookIds: string[], delayMs = 0): Promise<void> {
    for (const webhookId of webhookIds) {
      await this.queue.add('webhook.deliver', { tenantId, webhookId }, {
        attempts: WAKE_ATTEMPTS, backoff: { type: 'exponential', delay: 1_000, jitter: 0.5 }, delay: Math.max(0, Math.round(delayMs)),
      });
    }
  }

  /**
   * Wakes every lane whose head delivery was due `overdueMs` ago or longer: its wake-up never came, and nothing
   * else would send it before the next event of the webhook or a restart. A lane already running just
   * looks again. Answers how many were woken.
   */
  async wakeOverdue(overdueMs = OVERDUE_LANE_MS): Promise<number> {
    return this.wakeLanes(await this.store.overdueLanes(overdueMs));
  }

  /**
   * Wakes every lane with pending deliveries. The embedded queue keeps delayed wake-ups in memory
   * only, so a restart would otherwise strand them; a lane whose head is not due yet queues its own
   * wake-up for when it is.
   */
  async resumePending(): Promise<number> {
    return this.wakeLanes(await this.store.pendingLanes());
  }

  /** Wakes each lane of `lanes` now; answers how many. */
  private async wakeLanes(lanes: { webhook_id: string; tenant_id: string }[]): Promise<number> {
    for (const r of lanes) await this.wake(r.tenant_id, [r.webhook_id]);
    return lanes.length;
  }
}

/** The event grants the caller holds on any connection of the tenant. */
function heldEventGrants(access: TenantAccess): Set<string> {
  const held = new Set<string>();
  for (const keys of access.grants.values()) {
    for (const g of EVENT_GRANTS) if (keys.has(g)) held.add(g);
  }
  return held;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
