import { Column, Entity, Index, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

export const CONNECTION_KINDS = ['psa', 'rmm', 'distributor'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];
/** A connector registered in src/connectors/registry.ts (the one place that names the vendors). */
export type ConnectorName = string;

@Entity('isvs')
export class Isv extends BaseEntityWithId {
  @Column({ type: 'text' })
  name!: string;

  /** Write-back targets this ISV supports (`service_ticket`, `project`). */
  @Column({ name: 'supported_targets', type: 'jsonb', default: () => `'[]'` })
  supportedTargets!: string[];

  /** Finding kind -> recommended target. */
  @Column({ name: 'routing_recommendation', type: 'jsonb', default: () => `'{}'` })
  routingRecommendation!: Record<string, string>;
}

/** An ISV's key (`sk_live_...`) or an MSP's key for its own tenant (`sk_msp_...`). */
@Entity('api_keys')
export class ApiKey extends BaseEntityWithId {
  @Column({ type: 'text', default: 'isv' })
  kind!: 'isv' | 'msp';

  /** The ISV of an ISV key; null for an MSP key. */
  @Column({ name: 'isv_id', type: 'uuid', nullable: true })
  @Index()
  isvId!: string | null;

  /** The tenant of an MSP key; null for an ISV key. */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true })
  @Index()
  tenantId!: string | null;

  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  @Column({ name: 'key_hash', type: 'text', unique: true })
  keyHash!: string;

  /** First characters of the key, for people to recognise it in lists. */
  @Column({ type: 'text' })
  prefix!: string;

  @Column({ type: 'text', default: '' })
  label!: string;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt!: Date | null;

  /** Who minted it: a person (the ISV's console) or the operator (the graph); null for keys made before this was kept. */
  @Column({ name: 'created_by', type: 'jsonb', nullable: true })
  createdBy!: KeyCreator | null;
}

/** Who minted a key. Keys are minted by people or the operator, never by a key. */
export type KeyCreator = { kind: 'person'; id: string; email: string } | { kind: 'operator' };

@Entity('tenants')
export class Tenant extends BaseEntityWithId {
  @Column({ type: 'text' })
  name!: string;

  /** Stable human slug (`sandbox-alpha`); unique. */
  @Column({ type: 'text', unique: true })
  slug!: string;

  @Column({ type: 'boolean', default: false })
  sandbox!: boolean;
}

@Entity('connections')
@Index(['tenantId'])
export class Connection extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ type: 'text' })
  kind!: ConnectionKind;

  @Column({ type: 'text' })
  connector!: ConnectorName;

  @Column({ name: 'base_url', type: 'text' })
  baseUrl!: string;

  /** AES-256-GCM envelope (see src/security/secret-box.ts); never plaintext. */
  @Column({ name: 'credentials_encrypted', type: 'text' })
  credentialsEncrypted!: string;

  /** Vendor status name -> canonical status (new, in_progress, waiting, resolved, closed). */
  @Column({ name: 'status_mapping', type: 'jsonb', default: () => `'{}'` })
  statusMapping!: Record<string, string>;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  settings!: Record<string, unknown>;
}

@Entity('grants')
@Unique(['isvId', 'connectionId'])
export class Grant extends BaseEntityWithId {
  @Column({ name: 'isv_id', type: 'uuid' })
  isvId!: string;

  @Column({ name: 'connection_id', type: 'uuid' })
  @Index()
  connectionId!: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  @Index()
  tenantId!: string;

  @Column({ type: 'jsonb', default: () => `'[]'` })
  keys!: string[];
}

/** Sync bookkeeping per connection and resource. */
@Entity('sync_states')
@Unique(['connectionId', 'resource'])
@Index('ix_sync_states_next_check', { synchronize: false })
export class SyncState extends BaseEntityWithId {
  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'connection_id', type: 'uuid' })
  connectionId!: string;

  @Column({ type: 'text' })
  resource!: string;

  /** Last successful sync finish. */
  @Column({ name: 'last_synced_at', type: 'timestamptz', nullable: true })
  lastSyncedAt!: Date | null;

  /** High-water mark of the vendor's last-updated field, used for the next incremental run. */
  @Column({ type: 'timestamptz', nullable: true })
  watermark!: Date | null;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', nullable: true })
  lastAttemptAt!: Date | null;

  @Column({ name: 'last_status', type: 'text', default: 'never' })
  lastStatus!: 'never' | 'ok' | 'failed' | 'running';

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @Column({ name: 'last_mode', type: 'text', nullable: true })
  lastMode!: 'full' | 'incremental' | null;

  @Column({ name: 'records_seen', type: 'integer', default: 0 })
  recordsSeen!: number;

  /** Records of the last run the store refused and sync_quarantine keeps. */
  @Column({ type: 'integer', default: 0 })
  quarantined!: number;

  /** When the last successful check began (a sync, or a probe that found nothing new): the store is current as of then. */
  @Column({ name: 'checked_at', type: 'timestamptz', nullable: true })
  checkedAt!: Date | null;

  /** When the scheduler checks this resource next (src/sync/freshness.ts); while a check runs, the end of its claim. */
  @Column({ name: 'next_check_at', type: 'timestamptz', nullable: true })
  nextCheckAt!: Date | null;

  /** The resource's planned interval now. */
  @Column({ name: 'interval_seconds', type: 'integer', nullable: true })
  intervalSeconds!: number | null;

  /** Checks in a row that found nothing new. */
  @Column({ name: 'quiet_checks', type: 'integer', default: 0 })
  quietChecks!: number;

  /** Vendor calls the last check made. */
  @Column({ name: 'calls_per_check', type: 'integer', nullable: true })
  callsPerCheck!: number | null;
  /**
   * Digest of the full listing the last check found exactly as stored (one page, nothing stored beside it,
   * every record settled): a check whose listing has this digest needs no read of the store. Null otherwise;
   * a write to the resource forgets it in its own transaction (src/sync/sync.service.ts).
   */
  @Column({ name: 'quiet_listing', type: 'text', nullable: true })
  quietListing!: string | null;
}
