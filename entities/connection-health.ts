import { Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/**
 * A connection's health as the connection events tell it (docs/architecture.md, Events and webhooks;
 * src/events/connection-state.ts): one row per connection that ever had a sync outcome recorded. An event
 * is written only when `state` changes, in the same transaction as the change (`version` counts changes
 * and keys the event's dedupe key).
 */
@Entity('connection_health')
@Index('ix_connection_health_tenant', ['tenantId'])
export class ConnectionHealthRow {
  @PrimaryColumn({ name: 'connection_id', type: 'uuid' }) connectionId!: string;
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  /** ok | credentials_failing | permission_missing | sync_failing */
  @Column({ type: 'text', default: 'ok' }) state!: string;
  @Column({ name: 'previous_state', type: 'text', nullable: true }) previousState!: string | null;
  /** Failed syncs in a row that were neither a credential nor a permission refusal (sync_failing needs several). */
  @Column({ type: 'int', default: 0 }) failures!: number;
  /** The recorded reason of the current failing state (the sync's recorded error, never a secret). */
  @Column({ type: 'text', nullable: true }) reason!: string | null;
  @Column({ name: 'changed_at', type: 'timestamptz', nullable: true }) changedAt!: Date | null;
  @Column({ type: 'int', default: 0 }) version!: number;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
