/**
 * The delivery lanes' statements (delivery-lanes.ts, the order of deliveries per receiver): the lane's
 * cross-process lock, its pending deliveries in feed order, and each try's outcome on record.
 */
import type { DataSource, QueryRunner } from 'typeorm';
import { Webhook } from '../../entities';
import type { EventRow } from '../events/events.service';

/** Namespace of the lane's advisory lock (first key of the two-key form): 'WHLN'. */
const LANE_LOCK_NAMESPACE = 0x57484c4e & 0x7fffffff;

/**
 * The rows are named by id twice: `d.id = ANY($1)` lets the planner find them by primary key even
 * without statistics (the embedded store gathers none), where the join alone read the whole table.
 */
const RECORD_DELIVERED_SQL =
  `UPDATE webhook_deliveries d SET status = 'delivered', attempts = x.attempts, last_status_code = x.code, last_error = NULL,
   delivered_at = x.at, next_attempt_at = NULL, last_latency_ms = x.latency, updated_at = now()
   FROM unnest($1::uuid[], $2::integer[], $3::integer[], $4::timestamptz[], $5::integer[]) AS x(id, attempts, code, at, latency)
   WHERE d.id = x.id AND d.id = ANY($1::uuid[])`;
const PENDING_COLUMNS = 'e.*, d.id AS delivery_id, d.attempts AS delivery_attempts, d.next_attempt_at, d.event_seq AS delivery_seq';
/**
 * The lane's first pending deliveries, in feed order, with their webhook as it is now: one statement
 * between a wake-up and the first try (on the embedded store each statement may wait for a sync's page).
 */
const HEAD_SQL = `SELECT ${PENDING_COLUMNS}, h.tenant_id AS hook_tenant_id, h.url AS hook_url, h.secret_encrypted AS hook_secret,
    h.previous_secret_encrypted AS hook_previous_secret, h.previous_secret_expires_at AS hook_previous_until,
    h.enabled AS hook_enabled, h.disabled_reason AS hook_disabled_reason
  FROM webhook_deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks h ON h.id = d.webhook_id
  WHERE d.webhook_id = $1 AND d.status = 'pending' ORDER BY d.event_seq LIMIT $2`;
/** The next pending deliveries after a position already read. */
const AFTER_SQL = `SELECT ${PENDING_COLUMNS} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
  WHERE d.webhook_id = $1 AND d.status = 'pending' AND d.event_seq > $3 ORDER BY d.event_seq LIMIT $2`;

/** A try the receiver accepted, to be recorded with others (DeliveredRecorder). */
export interface DeliveredTry { id: string; attempts: number; code: number; at: string; latency: number }

/** A pending delivery with its event, as a lane reads it. */
export interface PendingRow extends EventRow {
  delivery_id: string;
  delivery_attempts: number;
  next_attempt_at: Date | null;
  delivery_seq: string;
}

export class DeliveryLanesStore {
  constructor(private readonly ds: DataSource) {}

  /** The lane's advisory lock across processes, on a connection of its own; null when another process holds it. */
  async laneLock(webhookId: string): Promise<{ release(): Promise<void> } | null> {
    const runner: QueryRunner = this.ds.createQueryRunner();
    try {
      await runner.connect();
      const [row]: { ok: boolean }[] = await runner.query('SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS ok', [LANE_LOCK_NAMESPACE, webhookId]);
      if (!row?.ok) {
        await runner.release();
        return null;
      }
    } catch (err) {
      await runner.release().catch(() => undefined);
      throw err;
    }
    return {
      release: async () => {
        try {
          await runner.query('SELECT pg_advisory_unlock($1::int, hashtext($2))', [LANE_LOCK_NAMESPACE, webhookId]);
        } finally {
          await runner.release();
        }
      },
    };
  }

  /** The lane's first pending delivery (in feed order): when it is next due. */
  async head(webhookId: string): Promise<{ next_attempt_at: Date | null } | undefined> {
    const [head]: { next_attempt_at: Date | null }[] = await this.ds.query(
      `SELECT d.next_attempt_at FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
       WHERE d.webhook_id = $1 AND d.status = 'pending' ORDER BY d.event_seq LIMIT 1`, [webhookId]);
    return head;
  }

  /** Pending deliveries in feed order: from the head (with the webhook as it is now), or after the position `after`. */
  pending(webhookId: string, after: string | null, limit: number): Promise<PendingRow[]> {
    return after === null ? this.ds.query(HEAD_SQL, [webhookId, limit]) : this.ds.query(AFTER_SQL, [webhookId, limit, after]);
  }

  /** Every pending delivery of a disabled webhook fails with `lastError`. */
  async failPending(webhookId: string, lastError: string): Promise<void> {
    await this.ds.query(`UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL, updated_at = now()
      WHERE webhook_id = $1 AND status = 'pending'`, [webhookId, lastError]);
  }

  async disable(webhookId: string, reason: string): Promise<void> {
    await this.ds.getRepository(Webhook).update({ id: webhookId }, { enabled: false, disabledReason: reason });
  }

  /** One try's outcome on its delivery (`next_attempt_at` cleared unless given). */
  async record(deliveryId: string, patch: Record<string, unknown>): Promise<void> {
    const values = { next_attempt_at: null, ...patch };
    const columns = Object.keys(values);
    await this.ds.query(
      `UPDATE webhook_deliveries SET ${columns.map((c, i) => `"${c}" = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`,
      [deliveryId, ...columns.map((c) => (values as Record<string, unknown>)[c])],
    );
  }

  /** Delivered tries on record, in one statement. */
  async recordDelivered(batch: DeliveredTry[]): Promise<void> {
    await this.ds.query(RECORD_DELIVERED_SQL, [batch.map((t) => t.id), batch.map((t) => t.attempts), batch.map((t) => t.code), batch.map((t) => t.at), batch.map((t) => t.latency)]);
  }
}
