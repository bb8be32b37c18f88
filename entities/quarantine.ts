import { Column, Entity, Index, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

/**
 * Vendor records the store refused (a value no column type takes, say): kept here instead of failing
 * their page, one row per record, replaced on each failed attempt and deleted once the record stores.
 */
@Entity('sync_quarantine')
@Unique('uq_sync_quarantine_record', ['connectionId', 'resource', 'sourceId'])
@Index('ix_sync_quarantine_tenant', ['tenantId'])
export class QuarantinedRecord extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' }) tenantId!: string;
  @Column({ name: 'connection_id', type: 'uuid' }) connectionId!: string;
  @Column({ type: 'text' }) resource!: string;
  /** Escaped as in src/sync/stored-text.ts. */
  @Column({ name: 'source_id', type: 'text' }) sourceId!: string;
  /** The store's error (escaped as above). */
  @Column({ type: 'text' }) error!: string;
  /** JSON.stringify of the vendor payload: JSON's own \u escapes keep NUL and lone surrogates as ASCII, so it is exact. */
  @Column({ type: 'text' }) payload!: string;
  @Column({ type: 'integer', default: 1 }) attempts!: number;
}
