/**
 * The webhooks service's data access (docs/architecture.md, Events and webhooks): the endpoints and
 * their delivery log, the fan-out of committed events into deliveries, deliveries counted per webhook and state,
 * and the lanes with deliveries still pending. The lanes' own statements are in delivery-lanes.ts, the
 * store of delivery order.
 */
import { IsNull, type DataSource, type FindOptionsWhere } from 'typeorm';
import { Webhook, WebhookDelivery } from '../../entities';
import { eventVisibility, visibleWhere, type EventVisibility } from '../access/event-visibility';
import { kindFilterTerms } from './event-access';

export class WebhooksStore {
  constructor(private readonly ds: DataSource) {}

  /** How many endpoints the ISV has on the tenant (null: ISV-wide). */
  countOf(tenantId: string | null, isvId: string): Promise<number> {
    return this.ds.getRepository(Webhook).count({ where: { tenantId: tenantId ?? IsNull(), isvId } });
  }

  create(values: Partial<Webhook>): Promise<Webhook> {
    const repo = this.ds.getRepository(Webhook);
    return repo.save(repo.create(values));
  }

  /** The webhooks `where` selects, oldest first (`ordered` false: in no order, as the fan-out reads them). */
  hooksWhere(where: FindOptionsWhere<Webhook> | FindOptionsWhere<Webhook>[], ordered = true): Promise<Webhook[]> {
    return this.ds.getRepository(Webhook).find({ where, ...(ordered ? { order: { createdAt: 'ASC', id: 'ASC' } as const } : {}) });
  }

  hookWhere(where: FindOptionsWhere<Webhook>): Promise<Webhook | null> {
    return this.ds.getRepository(Webhook).findOne({ where });
  }

  async change(webhookId: string, patch: Partial<Webhook>): Promise<void> {
    await this.ds.getRepository(Webhook).update({ id: webhookId }, patch);
  }

  delivery(deliveryId: string): Promise<WebhookDelivery> {
    return this.ds.getRepository(WebhookDelivery).findOneByOrFail({ id: deliveryId });
  }

  /** A webhook and its deliveries, in one transaction. */
  async remove(webhookId: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      await m.getRepository(WebhookDelivery).delete({ webhookId });
      await m.getRepository(Webhook).delete({ id: webhookId });
    });
  }

  /**
   * One page of a webhook's delivery log, newest first: keyset on (created_at, id) of the delivery `afterId`,
   * compared against the stored row (no timestamp precision is lost in a cursor).
   */
  deliveryPage(webhookId: string, afterId: string | null, updatedSince: Date | null, limit: number): Promise<WebhookDelivery[]> {
    const qb = this.ds.getRepository(WebhookDelivery).createQueryBuilder('d')
      .where('d.webhook_id = :hook', { hook: webhookId })
      .orderBy('d.created_at', 'DESC').addOrderBy('d.id', 'DESC')
      .limit(limit);
    if (afterId) {
      qb.andWhere('(d.created_at, d.id) < (SELECT c.created_at, c.id FROM webhook_deliveries c WHERE c.id = :after AND c.webhook_id = :hook)', { after: afterId });
    }
    if (updatedSince) qb.andWhere('d.updated_at >= :since', { since: updatedSince });
    return qb.getMany();
  }

  /**
   * One pending delivery per (webhook, event among `eventIds` the webhook's ISV may see), in one
   * statement: the events feed's own visibility predicate picks the events of each webhook, and each
   * delivery carries its event's position. A delivery that exists already is left as it is. Answers how
   * many were added per webhook.
   */
  insertDeliveries(tenantId: string, eventIds: string[], hooks: { id: string; visibility: EventVisibility; kinds: readonly string[] | null }[]): Promise<{ webhook_id: string; n: number }[]> {
    if (eventIds.length === 0 || hooks.length === 0) return Promise.resolve([]);
    const params: unknown[] = [tenantId, eventIds];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    const perHook = hooks.map((h) => `SELECT ${p(h.id)}::uuid AS webhook_id, id, seq FROM announced
      WHERE tenant_id = $1 AND ${visibleWhere(h.visibility, null, p)}${kindsWhere(h.kinds, p)}`);
    // The events are found by id alone (materialized first): with the tenant in the same condition, a
    // planner without statistics (the embedded store never gathers any) reads all of the tenant's events.
    return this.ds.query(
      `WITH announced AS MATERIALIZED (
         SELECT id, seq, tenant_id, kind, connection_id, detail FROM events WHERE id = ANY($2::uuid[])),
       added AS (
         INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_seq)
         SELECT x.webhook_id, $1, x.id, x.seq FROM (${perHook.join(' UNION ALL ')}) x
         ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING webhook_id)
       SELECT webhook_id, count(*)::int AS n FROM added GROUP BY webhook_id`, params);
  }

  /**
   * One pending delivery per (ISV-wide webhook of the ISV, event of the ISV's own among `eventIds`): events
   * of no tenant, which need no grant (the visibility of an ISV that holds none), narrowed by each
   * webhook's kinds. Answers how many were added per webhook.
   */
  insertOwnDeliveries(isvId: string, eventIds: string[], hooks: { id: string; kinds: readonly string[] | null }[]): Promise<{ webhook_id: string; n: number }[]> {
    if (eventIds.length === 0 || hooks.length === 0) return Promise.resolve([]);
    const params: unknown[] = [isvId, eventIds];
    const p = (v: unknown) => { params.push(v); return `$${params.length}`; };
    const none = eventVisibility([], () => false);
    const perHook = hooks.map((h) => `SELECT ${p(h.id)}::uuid AS webhook_id, id, seq FROM announced
      WHERE ${visibleWhere(none, null, p)}${kindsWhere(h.kinds, p)}`);
    return this.ds.query(
      `WITH announced AS MATERIALIZED (
         SELECT id, seq, kind, connection_id, detail FROM events WHERE id = ANY($2::uuid[]) AND tenant_id IS NULL AND isv_id = $1),
       added AS (
         INSERT INTO webhook_deliveries (webhook_id, tenant_id, event_id, event_seq)
         SELECT x.webhook_id, NULL, x.id, x.seq FROM (${perHook.join(' UNION ALL ')}) x
         ON CONFLICT (webhook_id, event_id) DO NOTHING RETURNING webhook_id)
       SELECT webhook_id, count(*)::int AS n FROM added GROUP BY webhook_id`, params);
  }

  deliveryCounts(webhookIds: string[]): Promise<{ webhook_id: string; status: string; n: string }[]> {
    return this.ds.query(
      'SELECT webhook_id, status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = ANY($1) GROUP BY webhook_id, status',
      [webhookIds],
    );
  }

  /**
   * Every webhook whose lane head (its first pending delivery in feed order) has been due for `overdueMs`
   * or longer (its retry's time, or for a first try its last change, that long ago), with its tenant: a
   * lane whose wake-up never came. A lane held by a retry due later is not one, whatever waits behind it.
   */
  overdueLanes(overdueMs: number): Promise<{ webhook_id: string; tenant_id: string }[]> {
    return this.ds.query(
      `SELECT webhook_id, tenant_id FROM (
         SELECT DISTINCT ON (webhook_id) webhook_id, tenant_id, next_attempt_at, updated_at FROM webhook_deliveries
         WHERE status = 'pending' ORDER BY webhook_id, event_seq) head
       WHERE COALESCE(next_attempt_at <= $2::timestamptz, updated_at <= now() - ($1::int * interval '1 millisecond'))`,
      // Each column against the clock that wrote it: next_attempt_at is this process's (delivery-lanes.ts), updated_at the database's.
      [overdueMs, new Date(Date.now() - overdueMs)]);
  }

  /** A paused webhook's pending deliveries fail with `reason` (they are retried by hand, if at all). */
  async failPending(webhookId: string, reason: string): Promise<void> {
    await this.ds.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, updated_at = now()
      WHERE webhook_id = $1 AND status = 'pending'`, [webhookId, reason]);
  }

  /**
   * The delivery pending again, due now (a replay): null when the webhook has no such delivery or its
   * event is gone. Its tries so far stay counted.
   */
  async requeue(webhookId: string, deliveryId: string): Promise<{ tenant_id: string | null } | null> {
    const [rows]: [{ tenant_id: string | null }[], number] = await this.ds.query(
      `UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = NULL, updated_at = now()
       WHERE d.id = $1 AND d.webhook_id = $2 AND EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id)
       RETURNING d.tenant_id`, [deliveryId, webhookId]);
    return rows[0] ?? null;
  }

  /** The kind of each event (the delivery log shows it). */
  async kindsOf(eventIds: string[]): Promise<Map<string, string>> {
    if (eventIds.length === 0) return new Map();
    const rows: { id: string; kind: string }[] = await this.ds.query('SELECT id, kind FROM events WHERE id = ANY($1::uuid[])', [eventIds]);
    return new Map(rows.map((r) => [r.id, r.kind]));
  }

  /** Every webhook with a delivery pending, with its tenant. */
  pendingLanes(): Promise<{ webhook_id: string; tenant_id: string }[]> {
    return this.ds.query(
      "SELECT DISTINCT webhook_id, tenant_id FROM webhook_deliveries WHERE status = 'pending'");
  }
}

/** A kinds filter names exact kinds or families (event-access.ts, kindMatches): the same test in SQL; '' for none. */
function kindsWhere(kinds: readonly string[] | null, p: (v: unknown) => string): string {
  if (!kinds) return '';
  const { exact, prefixes } = kindFilterTerms(kinds);
  return ` AND (kind = ANY(${p(exact)}::text[]) OR split_part(kind, '.', 1) = ANY(${p(prefixes)}::text[]))`;
}
