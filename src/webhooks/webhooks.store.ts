/**
 * The webhooks service's statements beside its repository calls (docs/architecture.md, Events and
 * webhooks): deliveries counted per webhook and state, and the lanes with deliveries still pending.
 * The lanes' own statements are in delivery-lanes.ts, the store of delivery order.
 */
import type { DataSource } from 'typeorm';

export class WebhooksStore {
  constructor(private readonly ds: DataSource) {}

  deliveryCounts(webhookIds: string[]): Promise<{ webhook_id: string; status: string; n: string }[]> {
    return this.ds.query(
      'SELECT webhook_id, status, count(*) AS n FROM webhook_deliveries WHERE webhook_id = ANY($1) GROUP BY webhook_id, status',
      [webhookIds],
    );
  }

  /** Every webhook with a delivery pending, with its tenant. */
  pendingLanes(): Promise<{ webhook_id: string; tenant_id: string }[]> {
    return this.ds.query(
      "SELECT DISTINCT webhook_id, tenant_id FROM webhook_deliveries WHERE status = 'pending'");
  }
}
