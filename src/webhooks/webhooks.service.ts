/**
 * Signed webhooks (design.md section 8): an ISV registers a receiver per tenant, every committed event
 * its grants cover becomes one delivery (one row in the delivery log, one `webhook.deliver` job), and
 * each try signs the Event the Standard Webhooks way. The signing secret is shown once and kept only
 * encrypted; it is never logged.
 */
import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { In, type DataSource } from 'typeorm';
import { EventRecord, Grant, Webhook, WebhookDelivery } from '../../entities';
import type { JobQueue } from '../../jobs/queue/types';
import type { AppConfig } from '../config/config';
import { ServiceError } from '../errors/service-error';
import type { SecretBox } from '../security/secret-box';
import type { TenantAccess } from '../access/access.service';
import { toEvent } from '../events/event-view';
import type { EventRow } from '../events/events.service';
import { entitledTo, EVENT_GRANTS, kindsForGrants, visibilityOfGrants } from './event-access';
import { DELIVERY_ATTEMPTS, nextDelayMs, RETRY_SCHEDULE_SECONDS } from './retry-schedule';
import { BLOCKED_PRIVATE, checkReceiverUrl, parseReceiverUrl, ReceiverUrlRefused, systemResolver, type HostResolver } from './ssrf-guard';
import { postToReceiver } from './webhook-sender';

export interface WebhookDeliverJob {
  tenantId: string;
  webhookId: string;
  eventId: string;
  deliveryId: string;
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

export interface DeliveryCounts {
  delivered: number;
  failed: number;
  pending: number;
}

/** Enough for any honest use; a runaway client cannot fan one event out without bound. */
export const MAX_WEBHOOKS_PER_ISV_TENANT = 10;
export const DELIVERY_TIMEOUT_MS = 15_000;
export const GONE_REASON = 'receiver answered 410';
const FAN_OUT_CHUNK = 500;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const USER_AGENT = 'msp-integration-service-webhooks/1';

export const deliverJobId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

export class WebhooksService {
  /** Multiplies every retry delay (WEBHOOK_RETRY_SCALE); tests shrink it, production keeps 1. */
  retryScale = this.config.webhookRetryScale;
  timeoutMs = DELIVERY_TIMEOUT_MS;
  /** DNS for the SSRF guard; tests inject their own answers. */
  resolve: HostResolver = systemResolver;

  constructor(readonly ds: DataSource, readonly box: SecretBox, readonly queue: JobQueue, readonly config: AppConfig) {}

  // ---- registration -------------------------------------------------------------------------

  async register(access: TenantAccess, isvId: string, url: string): Promise<{ webhook: Webhook; secret: string; kinds: string[] }> {
    const held = heldEventGrants(access);
    if (held.size === 0) throw ServiceError.grantMissing('psa.ticket.events');
    // Refused here only what is refused for certain (design.md section 8): not https, credentials, a
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
    return { webhook, secret, kinds: kindsForGrants(held) };
  }

  /** The caller's webhooks on the tenant (admin: every ISV's), oldest first, with delivery counts. */
  async list(access: TenantAccess, isvId: string | null): Promise<{ webhook: Webhook; deliveries: DeliveryCounts }[]> {
    const hooks = await this.ds.getRepository(Webhook).find({
      where: { tenantId: access.tenant.id, ...(isvId ? { isvId } : {}) }, order: { createdAt: 'ASC', id: 'ASC' },
    });
    if (hooks.length === 0) return [];
    const rows: { webhook_id: string; status: string; n: string }[] = await this.ds.query(
      'SELECT webhook_id, status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = ANY($1) GROUP BY webhook_id, status',
      [hooks.map((h) => h.id)],
    );
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
  }

  /** The delivery log, newest first; `afterId` is the last delivery of the previous page. */
  async deliveryLog(
    access: TenantAccess, isvId: string | null, webhookId: string, limit: number, afterId: string | null,
  ): Promise<{ items: WebhookDelivery[]; next: string | null }> {
    const hook = await this.owned(access, isvId, webhookId);
    const qb = this.ds.getRepository(WebhookDelivery).createQueryBuilder('d')
      .where('d.webhook_id = :hook', { hook: hook.id })
      .orderBy('d.created_at', 'DESC').addOrderBy('d.id', 'DESC')
      .limit(limit + 1);
    if (afterId) {
      // Compare against the stored row, not a timestamp in the cursor: no precision is lost.
      qb.andWhere('(d.created_at, d.id) < (SELECT c.created_at, c.id FROM webhook_deliveries c WHERE c.id = :after AND c.webhook_id = :hook)', { after: afterId });
    }
    const rows = await qb.getMany();
    const more = rows.length > limit;
    const items = more ? rows.slice(0, limit) : rows;
    return { items, next: more ? items[items.length - 1].id : null };
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
   * After events committed: one delivery per (enabled webhook, event its ISV is granted), queued.
   * Re-running for the same events adds nothing (unique per webhook and event).
   */
  async enqueueForEvents(tenantId: string, eventIds: string[]): Promise<number> {
    if (eventIds.length === 0) return 0;
    const hooks = await this.ds.getRepository(Webhook).find({ where: { tenantId, enabled: true } });
    if (hooks.length === 0) return 0;
    const grants = await this.ds.getRepository(Grant).find({ where: { tenantId, isvId: In([...new Set(hooks.map((h) => h.isvId))]) } });
    const visibility = new Map([...new Set(hooks.map((h) => h.isvId))].map((isv) => [isv, visibilityOfGrants(grants.filter((g) => g.isvId === isv))]));
    let queued = 0;
    // Bounded statements: a large sync announces thousands of events at once.
    for (const ids of chunks(eventIds, FAN_OUT_CHUNK)) {
      const events = await this.ds.getRepository(EventRecord).find({
        where: { tenantId, id: In(ids) }, select: { id: true, kind: true, connectionId: true, detail: true }, order: { seq: 'ASC' },
      });
      const rows: Partial<WebhookDelivery>[] = [];
      for (const event of events) {
        for (const hook of hooks) {
          if (entitledTo(visibility.get(hook.isvId) ?? null, event)) {
            rows.push({ webhookId: hook.id, tenantId, eventId: event.id, status: 'pending', attempts: 0 });
          }
        }
      }
      for (const batch of chunks(rows, FAN_OUT_CHUNK)) {
        const inserted = await this.ds.createQueryBuilder().insert().into(WebhookDelivery).values(batch).orIgnore()
          .returning(['id', 'webhook_id', 'event_id']).execute();
        for (const d of (inserted.raw as { id: string; webhook_id: string; event_id: string }[]) ?? []) {
          await this.queueTry({ tenantId, webhookId: d.webhook_id, eventId: d.event_id, deliveryId: d.id }, 0, RETRY_SCHEDULE_SECONDS[0] * 1000 * this.retryScale);
          queued++;
        }
      }
    }
    return queued;
  }

  /**
   * Queues the remaining tries of deliveries still pending, each when its next try is due. The
   * embedded queue keeps delayed retries in memory only, so a restart would otherwise strand them;
   * on Redis a job that still exists makes this a no-op (same job id).
   */
  async resumePending(limit = 10_000): Promise<number> {
    const pending = await this.ds.getRepository(WebhookDelivery).find({ where: { status: 'pending' }, order: { createdAt: 'ASC' }, take: limit });
    for (const d of pending) {
      const due = d.attempts === 0 ? 0 : d.updatedAt.getTime() + nextDelayMs(d.attempts, null, this.retryScale) - Date.now();
      await this.queueTry({ tenantId: d.tenantId, webhookId: d.webhookId, eventId: d.eventId, deliveryId: d.id }, d.attempts, Math.max(0, due));
    }
    return pending.length;
  }

  private async queueTry(job: WebhookDeliverJob, attemptsMade: number, delayMs: number): Promise<void> {
    await this.queue.add('webhook.deliver', job, {
      jobId: deliverJobId(job.deliveryId), attempts: Math.max(1, DELIVERY_ATTEMPTS - attemptsMade), delay: delayMs,
    });
  }

  // ---- one try ------------------------------------------------------------------------------

  /**
   * One try of one delivery; records the outcome in the log. The schedule follows the tries on
   * record (the log is the truth, also for a delivery resumed after a restart); `jobAttempt` of
   * `jobAttempts` only tells whether the queue has a further try to give.
   */
  async attemptDelivery(job: WebhookDeliverJob, jobAttempt: number, jobAttempts: number): Promise<DeliveryOutcome> {
    const deliveries = this.ds.getRepository(WebhookDelivery);
    const delivery = await deliveries.findOne({ where: { id: job.deliveryId } });
    if (!delivery) return { kind: 'skipped', reason: 'delivery no longer exists (webhook deleted)' };
    if (delivery.status !== 'pending') return { kind: 'skipped', reason: `delivery already ${delivery.status}` };
    const hook = await this.ds.getRepository(Webhook).findOne({ where: { id: delivery.webhookId } });
    if (!hook) return { kind: 'skipped', reason: 'webhook deleted' };
    const record = (patch: Partial<WebhookDelivery>) => deliveries.update({ id: delivery.id }, patch);

    if (!hook.enabled) {
      await record({ status: 'failed', lastError: `webhook disabled (${hook.disabledReason ?? 'no reason'})` });
      return { kind: 'failed', error: 'webhook disabled' };
    }
    const [event]: EventRow[] = await this.ds.query('SELECT * FROM "events" WHERE id = $1 AND tenant_id = $2', [delivery.eventId, delivery.tenantId]);
    if (!event) {
      await record({ status: 'failed', lastError: 'event no longer exists' });
      return { kind: 'failed', error: 'event no longer exists' };
    }
    const attemptsMade = delivery.attempts + 1;
    const lastTry = attemptsMade >= DELIVERY_ATTEMPTS || jobAttempt >= jobAttempts;

    // The guard runs again at every try: the name may resolve elsewhere now, or the flag may be off.
    let target;
    try {
      target = await checkReceiverUrl(hook.url, { allowLoopback: this.config.webhookAllowLoopback, resolve: this.resolve });
    } catch (err) {
      if (!(err instanceof ReceiverUrlRefused)) throw err;
      if (err.reason === 'unresolvable') return this.failedTry(delivery.id, attemptsMade, lastTry, null, err.message, null);
      const lastError = err.reason === 'private' ? BLOCKED_PRIVATE : `blocked: ${err.message}`;
      await record({ status: 'failed', attempts: attemptsMade, lastStatusCode: null, lastError });
      return { kind: 'blocked' };
    }

    // Exactly the Event the feed shows for this row.
    const body = JSON.stringify(toEvent(event));
    const now = new Date();
    const signature = new StandardWebhook(this.box.open(hook.secretEncrypted)).sign(event.id, now, body);
    const result = await postToReceiver(target, body, {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
      'Service-Signature': signature,
    }, this.timeoutMs);

    const code = result.statusCode;
    if (code !== null && code >= 200 && code < 300) {
      await record({ status: 'delivered', attempts: attemptsMade, lastStatusCode: code, lastError: null, deliveredAt: new Date() });
      return { kind: 'delivered', statusCode: code };
    }
    if (code === 410) {
      // The receiver says it is gone for good: stop at once, for this delivery and every later event.
      await this.ds.getRepository(Webhook).update({ id: hook.id }, { enabled: false, disabledReason: GONE_REASON });
      await record({ status: 'failed', attempts: attemptsMade, lastStatusCode: 410, lastError: `${GONE_REASON}; webhook disabled` });
      return { kind: 'disabled' };
    }
    const error = code === null ? result.error ?? 'no answer'
      : code >= 300 && code < 400 ? `redirect not followed (HTTP ${code})` : `HTTP ${code}`;
    return this.failedTry(delivery.id, attemptsMade, lastTry, code, error, result.retryAfter);
  }

  private async failedTry(
    deliveryId: string, attemptsMade: number, last: boolean, code: number | null, error: string, retryAfter: string | null,
  ): Promise<DeliveryOutcome> {
    await this.ds.getRepository(WebhookDelivery).update({ id: deliveryId }, {
      status: last ? 'gave_up' : 'pending', attempts: attemptsMade, lastStatusCode: code, lastError: error,
    });
    if (last) return { kind: 'gave_up', error };
    return { kind: 'retry', delayMs: nextDelayMs(attemptsMade, retryAfter, this.retryScale), error };
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
