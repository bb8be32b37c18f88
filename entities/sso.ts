import { Check, Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, PrimaryGeneratedColumn, Unique, UpdateDateColumn } from 'typeorm';

/**
 * Single sign-on of one organisation, an ISV or a tenant (docs/architecture.md, Single sign-on): the
 * provider's issuer and client, its secret sealed by the secret box, and what the owner decided. The
 * statements are in src/people/sso/sso.store.ts; these entities describe the tables for the drift check.
 */
@Entity('sso_configs')
@Unique('uq_sso_configs_org', ['orgKind', 'orgId'])
@Check('ck_sso_configs_kind', `"org_kind" IN ('isv', 'tenant')`)
export class SsoConfig {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_sso_configs' })
  id!: string;

  @Column({ name: 'org_kind', type: 'text' })
  orgKind!: 'isv' | 'tenant';

  @Column({ name: 'org_id', type: 'uuid' })
  orgId!: string;

  @Column({ type: 'text' })
  issuer!: string;

  @Column({ name: 'client_id', type: 'text' })
  clientId!: string;

  @Column({ name: 'client_secret_sealed', type: 'text' })
  clientSecretSealed!: string;

  @Column({ name: 'require_sso', type: 'boolean', default: false })
  requireSso!: boolean;

  @Column({ name: 'allow_join', type: 'boolean', default: false })
  allowJoin!: boolean;

  @Column({ name: 'updated_by', type: 'uuid', nullable: true })
  updatedBy!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** One email domain a configuration covers; a domain belongs to one configuration at most. */
@Entity('sso_domains')
@Index('ix_sso_domains_config', ['configId'])
export class SsoDomain {
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_sso_domains' })
  domain!: string;

  @Column({ name: 'config_id', type: 'uuid' })
  configId!: string;

  @ManyToOne(() => SsoConfig, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'config_id', foreignKeyConstraintName: 'sso_domains_config_id_fkey' })
  config?: SsoConfig;
}

/**
 * A sign-in under way: the browser's token (only its SHA-256), and the `state`, `nonce` and PKCE verifier
 * sealed; ten minutes, spent once.
 */
@Entity('sso_attempts')
@Index('ix_sso_attempts_expires', ['expiresAt'])
export class SsoAttempt {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'pk_sso_attempts' })
  id!: string;

  @Column({ name: 'browser_hash', type: 'text', unique: true })
  browserHash!: string;

  @Column({ name: 'config_id', type: 'uuid' })
  configId!: string;

  @ManyToOne(() => SsoConfig, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'config_id', foreignKeyConstraintName: 'sso_attempts_config_id_fkey' })
  config?: SsoConfig;

  @Column({ name: 'checks_sealed', type: 'text' })
  checksSealed!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
