import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** What a link and a session share: a tenant and the SHA-256 of a secret only its holder has. */
abstract class ConsoleSecret {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId!: string;

  @Column({ name: 'token_hash', type: 'text', unique: true })
  tokenHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/**
 * A one-time sign-in link to the MSP's console (docs/architecture.md, Connect sessions and console):
 * 32 random bytes, stored only as their SHA-256, valid 15 minutes, spent by its first use.
 */
@Entity('console_links')
@Index('ix_console_links_tenant', ['tenantId'])
export class ConsoleLink extends ConsoleSecret {
  /** Who issued it (`msp` key, `connect` session, ...), for the audit log. */
  @Column({ name: 'issued_by', type: 'text' })
  issuedBy!: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt!: Date | null;
}

/**
 * A signed-in console session, server-side: the cookie carries 32 random bytes, stored here only as
 * their SHA-256; every form carries the session's CSRF token. Idle and absolute expiry, sign-out.
 */
@Entity('console_sessions')
@Index('ix_console_sessions_tenant', ['tenantId'])
export class ConsoleSession extends ConsoleSecret {
  @Column({ name: 'csrf_token', type: 'text' })
  csrfToken!: string;

  /** How the person signed in: `link` or `key`. */
  @Column({ name: 'signed_in_with', type: 'text' })
  signedInWith!: string;

  @Column({ name: 'last_seen_at', type: 'timestamptz', default: () => 'now()' })
  lastSeenAt!: Date;

  /** The absolute end (created_at + 12 hours), whatever the activity. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt!: Date | null;
}
