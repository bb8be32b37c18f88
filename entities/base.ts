import { Column, CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** Timestamps are stored as timestamptz and handled as Date in code. */
export abstract class BaseEntityWithId {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/**
 * Every record pulled from a vendor: unique on (tenant, connection, source_id), the vendor payload
 * kept verbatim with a hash of it so that sync can tell a change from a re-read.
 */
export abstract class SyncedRecord {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'connection_id', type: 'uuid' })
  connectionId!: string;

  @Column({ name: 'source_id', type: 'text' })
  sourceId!: string;

  @Column({ type: 'jsonb' })
  raw!: Record<string, unknown>;

  @Column({ name: 'raw_hash', type: 'text' })
  rawHash!: string;

  /** The vendor's own last-updated time of this record, when it has one. */
  @Column({ name: 'vendor_updated_at', type: 'timestamptz', nullable: true })
  vendorUpdatedAt!: Date | null;

  @Column({ name: 'synced_at', type: 'timestamptz' })
  syncedAt!: Date;
}
