import { Column, Entity, Index, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

/** Change events and health rows (docs/architecture.md, Events and webhooks). `seq` orders the feed for cursors. */
@Entity('events')
@Index('ix_events_tenant_seq', ['tenantId', 'seq'])
@Unique('uq_events_dedupe', ['tenantId', 'dedupeKey'])
/** An ISV's own events (no tenant: a connect session for a new MSP that expired), deduped per ISV; and the ISV-wide feed's order. */
@Index('uq_events_isv_dedupe', { synchronize: false })
@Index('ix_events_seq', ['seq'])
export class EventRecord extends BaseEntityWithId {
  @Column({ type: 'bigint', generated: 'increment' })
  seq!: string;
  /** Null for an event of an ISV's own (`isv_id` set), which only the ISV-wide feed lists (migration ConnectionEvents1765520000000). */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true }) tenantId!: string | null;
  @Column({ name: 'isv_id', type: 'uuid', nullable: true }) isvId!: string | null;
  @Column({ name: 'connection_id', type: 'uuid', nullable: true }) connectionId!: string | null;
  /** ticket.created, device.updated, health, sandbox_reset ... */
  @Column({ type: 'text' }) kind!: string;
  /** Health rows: attention_needed | resolved. */
  @Column({ type: 'text', nullable: true }) type!: string | null;
  /** Unique per tenant: a retried sync never writes the same event twice. */
  @Column({ name: 'dedupe_key', type: 'text' }) dedupeKey!: string;
  @Column({ name: 'occurred_at', type: 'timestamptz' }) occurredAt!: Date;
  @Column({ type: 'text', nullable: true }) actor!: string | null;
  @Column({ type: 'text', nullable: true }) summary!: string | null;
  @Column({ name: 'subject_ref', type: 'text', nullable: true }) subjectRef!: string | null;
  @Column({ name: 'incident_id', type: 'text', nullable: true }) incidentId!: string | null;
  @Column({ name: 'canonical_ticket_id', type: 'uuid', nullable: true }) canonicalTicketId!: string | null;
  @Column({ name: 'canonical_device_id', type: 'uuid', nullable: true }) canonicalDeviceId!: string | null;
  @Column({ name: 'canonical_company_id', type: 'uuid', nullable: true }) canonicalCompanyId!: string | null;
  @Column({ name: 'previous_status', type: 'text', nullable: true }) previousStatus!: string | null;
  @Column({ name: 'new_status', type: 'text', nullable: true }) newStatus!: string | null;
  @Column({ type: 'text', nullable: true }) vendor!: string | null;
  @Column({ name: 'vendor_id', type: 'text', nullable: true }) vendorId!: string | null;
  @Column({ name: 'vendor_url', type: 'text', nullable: true }) vendorUrl!: string | null;
  @Column({ type: 'jsonb', default: () => `'{}'` }) detail!: Record<string, unknown>;
}

@Entity('audit_entries')
@Index('ix_audit_tenant_id', ['tenantId', 'id'])
/** An ISV's own entries (no tenant: its keys), newest first (migration IsvKeys1765510000000). */
@Index('ix_audit_isv_own', { synchronize: false })
export class AuditEntry extends BaseEntityWithId {
  @Column({ type: 'bigint', generated: 'increment' })
  seq!: string;
  /** Null for an entry of an ISV's own (its keys), which names the ISV in `isv_id`. */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true }) tenantId!: string | null;
  @Column({ name: 'isv_id', type: 'uuid', nullable: true }) isvId!: string | null;
  /** e.g. sync.completed, sync.failed, ticket.create.commit, ticket.create.refused */
  @Column({ type: 'text' }) action!: string;
  @Column({ type: 'text' }) outcome!: 'ok' | 'refused' | 'failed';
  @Column({ name: 'connection_id', type: 'uuid', nullable: true }) connectionId!: string | null;
  @Column({ name: 'subject_ref', type: 'text', nullable: true }) subjectRef!: string | null;
  @Column({ type: 'jsonb', default: () => `'{}'` }) detail!: Record<string, unknown>;
}

/** Idempotency reservations: the unique constraint is what makes a commit happen once. */
@Entity('idempotency_records')
@Unique('uq_idempotency_scope_key', ['isvId', 'tenantId', 'operation', 'key'])
@Index('ix_idempotency_in_progress', { synchronize: false })
export class IdempotencyRecord extends BaseEntityWithId {
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ type: 'text' }) operation!: string;
  @Column({ type: 'text' }) key!: string;
  @Column({ name: 'request_hash', type: 'text' }) requestHash!: string;
  @Column({ type: 'text', default: 'in_progress' }) state!: 'in_progress' | 'completed' | 'failed';
  @Column({ name: 'response_status', type: 'integer', nullable: true }) responseStatus!: number | null;
  @Column({ name: 'response_body', type: 'jsonb', nullable: true }) responseBody!: Record<string, unknown> | null;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt!: Date;
  /** Grows at each take-over: a vendor.write job of an older generation sends nothing (write-fence.ts). */
  @Column({ type: 'integer', default: 1 }) generation!: number;
  /** The process that owns the commit while it is in progress (service_instances.id). */
  @Column({ name: 'owner_instance', type: 'text', nullable: true }) ownerInstance!: string | null;
  @Column({ name: 'lease_owner', type: 'text', nullable: true }) leaseOwner!: string | null;
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true }) leaseUntil!: Date | null;
  /** Vendor calls made under this reservation (any generation): a later one reconciles first. */
  @Column({ name: 'vendor_attempts', type: 'integer', default: 0 }) vendorAttempts!: number;
  /** No vendor request sent under this reservation can land after this; a take-over waits for it (write-fence.ts). */
  @Column({ name: 'land_by', type: 'timestamptz', nullable: true }) landBy!: Date | null;
}

/** Tickets created through the service; only these take write-back and time. */
@Entity('ticket_links')
@Unique('uq_ticket_links_ref', ['tenantId', 'connectionId', 'ticketRef'])
export class TicketLink extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'connection_id', type: 'uuid' }) connectionId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  /** PSA ticket id (the ticket's source_id). */
  @Column({ name: 'ticket_ref', type: 'text' }) ticketRef!: string;
  @Column({ name: 'finding_id', type: 'text', nullable: true }) findingId!: string | null;
  @Column({ type: 'text', default: 'service_ticket' }) target!: string;
}

/** Per-tenant, per-ISV write-back target overrides. */
@Entity('routing_configs')
@Unique('uq_routing_tenant_isv', ['tenantId', 'isvId'])
export class RoutingConfig extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ type: 'jsonb', default: () => `'{}'` }) overrides!: Record<string, string>;
}

@Entity('webhooks')
@Index('ix_webhooks_tenant', ['tenantId'])
@Index('ix_webhooks_isv_wide', { synchronize: false })
export class Webhook extends BaseEntityWithId {
  /** Null: an ISV-wide endpoint, receiving every tenant the ISV sees (src/webhooks). */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true }) tenantId!: string | null;
  @Column({ name: 'isv_id', type: 'uuid' }) isvId!: string;
  @Column({ type: 'text' }) url!: string;
  /** The signing secret, encrypted with the service key (it must be recoverable to sign). */
  @Column({ name: 'secret_encrypted', type: 'text' }) secretEncrypted!: string;
  @Column({ type: 'boolean', default: true }) enabled!: boolean;
  @Column({ name: 'disabled_reason', type: 'text', nullable: true }) disabledReason!: string | null;
  /** The event kinds (or families) it receives; null: every kind its ISV's grants cover. */
  @Column({ type: 'jsonb', nullable: true }) kinds!: string[] | null;
  /** The secret a rotation replaced, still signing beside the new one until `previousSecretExpiresAt`. */
  @Column({ name: 'previous_secret_encrypted', type: 'text', nullable: true }) previousSecretEncrypted!: string | null;
  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true }) previousSecretExpiresAt!: Date | null;
}

@Entity('webhook_deliveries')
@Index('ix_webhook_deliveries_webhook', ['webhookId', 'createdAt'])
@Index('ix_webhook_deliveries_pending', ['webhookId', 'eventSeq'], { where: `"status" = 'pending'` })
@Unique('uq_webhook_deliveries_event', ['webhookId', 'eventId'])
export class WebhookDelivery extends BaseEntityWithId {
  @Column({ name: 'webhook_id', type: 'uuid' }) webhookId!: string;
  /** Null for an ISV's own event (no tenant), delivered to its ISV-wide endpoints. */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true }) tenantId!: string | null;
  @Column({ name: 'event_id', type: 'uuid' }) eventId!: string;
  /** The event's feed position (its seq): a lane sends its pending deliveries in this order. */
  @Column({ name: 'event_seq', type: 'bigint' }) eventSeq!: string;
  @Column({ type: 'text', default: 'pending' }) status!: 'pending' | 'delivered' | 'failed' | 'gave_up';
  @Column({ type: 'integer', default: 0 }) attempts!: number;
  @Column({ name: 'last_status_code', type: 'integer', nullable: true }) lastStatusCode!: number | null;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError!: string | null;
  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true }) deliveredAt!: Date | null;
  /** When the next try is due after a failed one (null: not tried yet, or no further try). */
  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true }) nextAttemptAt!: Date | null;
  /** How long the last try took, from sending to the receiver's answer (or its failure). */
  @Column({ name: 'last_latency_ms', type: 'integer', nullable: true }) lastLatencyMs!: number | null;
}
