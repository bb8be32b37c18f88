/**
 * Signed webhooks (docs/architecture.md, Events and webhooks): an ISV registers a receiver per tenant, or
 * one ISV-wide (no tenant: every tenant it sees, now and later), every committed event its grants cover
 * (and its kinds filter admits) becomes one delivery (one row in the delivery log), sent in feed order by
 * the webhook's delivery lane (delivery-lanes.ts), and each try signs the Event the Standard Webhooks way.
 * The signing secret is shown once and kept only encrypted; it is never logged. A rotation keeps the
 * replaced secret signing beside the new one for an overlap of at most 7 days.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { IsNull, type DataSource } from 'typeorm';
import { Webhook, WebhookDelivery } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { AppConfig } from '../config/config';
import { ServiceError } from '../errors/service-error';
import type { SecretBox } from '../security/secret-box';
import type { AccessService, TenantAccess } from '../access/access.service';
import { EVENT_GRANTS, kindMatches, kindsForGrants, unknownKinds } from './event-access';
import { BLOCKED_PRIVATE, checkReceiverUrl, namesLoopback, parseReceiverUrl, ReceiverUrlRefused, systemResolver, type HostResolver } from './ssrf-guard';
import { signersOf } from './signing';
import { postToReceiver } from './webhook-sender';
import { TEST_EVENT_KIND, USER_AGENT } from './delivery-lanes';
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
/** ISV-wide endpoints per ISV, for the same reason. */
export const MAX_ISV_WIDE_WEBHOOKS = 10;
/** Why a paused endpoint receives nothing, in `disabled_reason` and in the deliveries it left pending. */
export const PAUSED_REASON = 'paused';

/**
 * Where a webhook lives: on one tenant (the ISV's own there, or every ISV's for an MSP key or the admin
 * token: `isvId` null), or ISV-wide (no tenant; `isvId` null: the admin token's reads, any ISV's).
 */
export type HookScope =
  | { tenant: TenantAccess; isvId: string | null }
  | { tenant: null; isvId: string | null };

export interface WebhookChange {
  url?: string;
  kinds?: string[] | null;
  enabled?: boolean;
}

export interface TestResult {
  webhook_id: string;
  kind: typeof TEST_EVENT_KIND;
  delivered: boolean;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}
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
  }

  /** The access caches were cleared (`access.caches_cleared`, the webhooks feature's reaction): the enabled hooks are read again. */
  forgetEnabledHooks(): void {
    this.hooksGeneration++;
    this.enabledHooks.clear();
  }

  /** A webhook was registered, removed or disabled: the fan-out of every process reads the tenant's webhooks again. */
  hooksChanged(): Promise<void> {
    return this.access.invalidate();
  }

  // ---- registration -------------------------------------------------------------------------

  /**
   * Registers an endpoint of the ISV: on the tenant of `access`, or ISV-wide (`access` null: every tenant
   * the ISV sees, now and later, each filtered by its grants there as the tenant's feed is).
   */
  async register(access: TenantAccess | null, isvId: string, url: string, kinds: string[] | null = null): Promise<{ webhook: Webhook; secret: string; kinds: string[] | null }> {
    let delivered: string[] | null = null;
    if (access) {
      const held = heldEventGrants(access);
      if (held.size === 0) throw ServiceError.grantMissing(EVENT_GRANTS[0]);
      delivered = kindsForGrants(held).filter((k) => !kinds || kindMatches(k, kinds));
    }
    const filter = checkedKinds(kinds);
    const normalised = await this.checkedUrl(url);
    const count = await this.store.countOf(access ? access.tenant.id : null, isvId);
    const max = access ? MAX_WEBHOOKS_PER_ISV_TENANT : MAX_ISV_WIDE_WEBHOOKS;
    if (count >= max) {
      throw new ServiceError('request_invalid', `At most ${max} webhooks ${access ? 'per tenant' : 'ISV-wide'}; delete one first.`);
    }
    const secret = newSecret();
    const webhook = await this.store.create({
      tenantId: access ? access.tenant.id : null, isvId, url: normalised, secretEncrypted: this.box.seal(secret), enabled: true, disabledReason: null,
      kinds: filter, previousSecretEncrypted: null, previousSecretExpiresAt: null,
    });
    await this.hooksChanged();
    return { webhook, secret, kinds: access ? delivered : filter };
  }

  /**
   * The URL as stored, refused here only for what is refused for certain (docs/architecture.md, Events and webhooks): not https, credentials, a
   * private literal or special-use name, a name that resolves to a private address now. A name that
   * does not resolve now is accepted (the sandbox has no outside DNS); every delivery resolves it again.
   */
  private async checkedUrl(url: string): Promise<string> {
    let normalised: string | null = null;
    try {
      normalised = parseReceiverUrl(url).href;
      await checkReceiverUrl(normalised, { allowLoopback: this.config.webhookAllowLoopback, resolve: this.resolve })
        .catch((err: unknown) => { if (!(err instanceof ReceiverUrlRefused && err.reason === 'unresolvable')) throw err; });
      return normalised;
    } catch (err) {
      if (!(err instanceof ReceiverUrlRefused)) throw err;
      // A developer pointing a webhook at this machine is told the one setting that admits it.
      const local = normalised && !this.config.webhookAllowLoopback && namesLoopback(new URL(normalised))
        ? ' A receiver on this machine (local development) is accepted over http or https when the service runs with WEBHOOK_ALLOW_LOOPBACK=true.' : '';
      const message = `${err.reason === 'private' ? `url must point at a public address (${BLOCKED_PRIVATE}).` : err.message}${local}`;
      throw new ServiceError('validation', message, { details: { field: 'url', reason: err.message } });
    }
  }

  /** The ISV's ISV-wide endpoints (null: every ISV's, for internal support), oldest first, with delivery counts. */
  async listIsvWide(isvId: string | null): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
    const hooks = await this.store.hooksWhere({ tenantId: IsNull(), ...(isvId ? { isvId } : {}) });
    return this.withCounts(hooks);
  }

  /** Every endpoint of the ISV, ISV-wide ones first, then per tenant, oldest first (the console's list). */
  async ofIsv(isvId: string): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
    const hooks = await this.store.hooksWhere({ isvId });
    return this.withCounts([...hooks.filter((h) => h.tenantId === null), ...hooks.filter((h) => h.tenantId !== null)]);
  }

  /** One endpoint of the ISV by id, either scope; null when it is none of the ISV's. */
  async findOfIsv(isvId: string, webhookId: string): Promise<Webhook | null> {
    return UUID.test(webhookId) ? this.store.hookWhere({ id: webhookId, isvId }) : null;
  }

  /** One webhook of the scope with its delivery counts (404 when it is another's or none). */
  async get(scope: HookScope, webhookId: string): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }> {
    const [row] = await this.withCounts([await this.owned(scope, webhookId)]);
    return row;
  }

  /**
   * Changes url, kinds or enabled. Pausing (enabled false) is like Stripe's disabled endpoint: nothing is
   * delivered while paused (no delivery is made for events of that time) and what was still pending is
   * marked failed (`webhook paused`), to be retried by hand; resuming delivers the events from then on.
   */
  async update(scope: HookScope, webhookId: string, change: WebhookChange): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }> {
    const hook = await this.owned(scope, webhookId);
    const patch: Partial<Webhook> = {};
    if (change.url !== undefined) patch.url = await this.checkedUrl(change.url);
    if (change.kinds !== undefined) patch.kinds = checkedKinds(change.kinds);
    if (change.enabled === true && !hook.enabled) Object.assign(patch, { enabled: true, disabledReason: null });
    if (change.enabled === false && hook.enabled) Object.assign(patch, { enabled: false, disabledReason: PAUSED_REASON });
    if (Object.keys(patch).length > 0) {
      await this.store.change(hook.id, patch);
      if (patch.enabled === false) await this.store.failPending(hook.id, `webhook ${PAUSED_REASON}`);
      await this.hooksChanged();
    }
    return this.get(scope, webhookId);
  }

  /**
   * A new secret, shown once. The one it replaces keeps signing beside it for `overlapSeconds` (at most
   * 7 days; 0: it stops at once), so a receiver can move to the new one without missing a delivery; a
   * secret replaced by an earlier rotation stops now.
   */
  async rotateSecret(scope: HookScope, webhookId: string, overlapSeconds: number): Promise<{ webhook: Webhook; secret: string }> {
    const hook = await this.owned(scope, webhookId);
    const secret = newSecret();
    const until = overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000) : null;
    await this.store.change(hook.id, {
      secretEncrypted: this.box.seal(secret),
      previousSecretEncrypted: until ? hook.secretEncrypted : null,
      previousSecretExpiresAt: until,
    });
    return { webhook: await this.owned(scope, webhookId), secret };
  }

  /**
   * Sends the delivery's event again, with the same `webhook-id`, as one more try in its log: it is
   * pending again and its lane tries it at once. If that try fails, the retry schedule goes on from the
   * tries it had made (a delivery past its ten gives up after this one). A paused endpoint is refused.
   */
  async retryDelivery(scope: HookScope, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const hook = await this.owned(scope, webhookId);
    if (!hook.enabled) {
      throw new ServiceError('request_invalid', `The webhook is ${hook.disabledReason === PAUSED_REASON ? 'paused' : 'disabled'}: resume it (PATCH enabled: true) first.`, { details: { disabled_reason: hook.disabledReason } });
    }
    const row = UUID.test(deliveryId) ? await this.store.requeue(hook.id, deliveryId) : null;
    if (!row) throw ServiceError.notFound('Delivery');
    await this.wake(row.tenant_id ?? '', [hook.id]);
    return this.store.delivery(deliveryId);
  }

  /**
   * A `webhook.test` event sent now, signed like every delivery (both secrets during a rotation's
   * overlap), through the same address guard; answered with how it went. It is not an event of any feed
   * and is not kept in the delivery log. Also outside the sandbox.
   */
  async sendTest(scope: HookScope, webhookId: string): Promise<TestResult> {
    const hook = await this.owned(scope, webhookId);
    const id = randomUUID();
    const now = new Date();
    const result = (o: Omit<TestResult, 'webhook_id' | 'kind'>): TestResult => ({ webhook_id: id, kind: TEST_EVENT_KIND, ...o });
    let target;
    try {
      target = await checkReceiverUrl(hook.url, { allowLoopback: this.config.webhookAllowLoopback, resolve: this.resolve });
    } catch (err) {
      if (!(err instanceof ReceiverUrlRefused)) throw err;
      return result({ delivered: false, status_code: null, latency_ms: 0, error: err.reason === 'private' ? BLOCKED_PRIVATE : `blocked: ${err.message}` });
    }
    const body = JSON.stringify({
      id, event_id: id, kind: TEST_EVENT_KIND, tenant_id: hook.tenantId, occurred_at: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      summary: 'A test event sent from the webhooks page or API. It is not part of any feed.', detail: { webhook_id: hook.id },
    });
    const signature = signersOf(this.box, hook).sign(id, now, body);
    const started = performance.now();
    const sent = await postToReceiver(target, body, {
      'content-type': 'application/json', 'user-agent': USER_AGENT,
      'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature, 'Service-Signature': signature,
    }, this.timeoutMs);
    const code = sent.statusCode;
    return result({
      delivered: code !== null && code >= 200 && code < 300, status_code: code, latency_ms: Math.round(performance.now() - started),
      error: code === null ? sent.error ?? 'no answer' : code >= 200 && code < 300 ? null : code >= 300 && code < 400 ? `redirect not followed (HTTP ${code})` : `HTTP ${code}`,
    });
  }

  /** The caller's webhooks on the tenant (admin: every ISV's), oldest first, with delivery counts. */
  async list(access: TenantAccess, isvId: string | null): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
    const hooks = await this.store.hooksWhere({ tenantId: access.tenant.id, ...(isvId ? { isvId } : {}) });
    return this.withCounts(hooks);
  }

  private async withCounts(hooks: Webhook[]): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
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

  async remove(scope: HookScope, webhookId: string): Promise<void> {
    const hook = await this.owned(scope, webhookId);
    await this.store.remove(hook.id);
    await this.hooksChanged();
  }

  /**
   * The delivery log, newest first: keyset on (created_at, id) of the cursor's delivery, compared against
   * the stored row (no timestamp precision is lost in a cursor).
   */
  async deliveryLog(scope: HookScope, webhookId: string, q: PageRequest): Promise<Page<WebhookDelivery & { eventKind: string | null }>> {
    const hook = await this.owned(scope, webhookId);
    const afterId = afterKey(DELIVERIES_CURSOR, q)?.[0] ?? null;
    const rows = await this.store.deliveryPage(hook.id, afterId, q.updated_since ? new Date(q.updated_since) : null, rowsToFetch(q.limit));
    const kinds = await this.store.kindsOf(rows.map((d) => d.eventId));
    return toPage(rows.map((d) => Object.assign(d, { eventKind: kinds.get(d.eventId) ?? null })), q.limit, DELIVERIES_CURSOR, (d) => [d.id]);
  }

  private async owned(scope: HookScope, webhookId: string): Promise<Webhook> {
    const where = scope.tenant
      ? { id: webhookId, tenantId: scope.tenant.tenant.id, ...(scope.isvId ? { isvId: scope.isvId } : {}) }
      : { id: webhookId, tenantId: IsNull(), ...(scope.isvId ? { isvId: scope.isvId } : {}) };
    const hook = UUID.test(webhookId) ? await this.store.hookWhere(where) : null;
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
    // Per-tenant and ISV-wide endpoints alike: the ISV's visibility on this tenant, narrowed by the endpoint's kinds.
    const seeing = hooks.flatMap((h) => { const v = visibility.get(h.isvId); return v ? [{ id: h.id, visibility: v, kinds: h.kinds }] : []; });
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

  /**
   * After an ISV's own events (no tenant) committed: one delivery per (enabled ISV-wide webhook of the
   * ISV, event its kinds admit); each webhook that got one has its lane woken at once.
   */
  async enqueueForIsvEvents(isvId: string, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const hooks = await this.store.hooksWhere({ isvId, tenantId: IsNull(), enabled: true }, false);
    if (hooks.length === 0) return 0;
    let queued = 0;
    for (const ids of chunks(eventIds, FAN_OUT_CHUNK)) {
      const added = await this.store.insertOwnDeliveries(isvId, ids, hooks.map((h) => ({ id: h.id, kinds: h.kinds })));
      for (const a of added) queued += a.n;
      await this.wake('', added.map((a) => a.webhook_id));
    }
    return queued;
  }

  /** The tenant's enabled webhooks and every enabled ISV-wide one (the fan-out keeps those whose ISV sees the tenant). */
  private async enabledOf(tenantId: string): Promise<Webhook[]> {
    const hit = this.enabledHooks.get(tenantId);
    if (hit) return hit;
    const generation = this.hooksGeneration;
    const hooks = await this.store.hooksWhere([{ tenantId, enabled: true }, { tenantId: IsNull(), enabled: true }], false);
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

function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** A kinds filter as stored (deduplicated), or 422 `validation` naming every kind the feed does not know. */
function checkedKinds(kinds: string[] | null): string[] | null {
  if (kinds === null) return null;
  const unknown = unknownKinds(kinds);
  if (unknown.length > 0) {
    throw new ServiceError('validation', `Unknown event ${unknown.length === 1 ? 'kind' : 'kinds'}: ${unknown.join(', ')}.`, { details: { field: 'kinds', unknown } });
  }
  return [...new Set(kinds)];
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
