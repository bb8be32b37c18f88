import { Column, Entity, Index, Unique } from 'typeorm';
import { BaseEntityWithId } from './base';

/**
 * A connect session (docs/architecture.md, Connect sessions and console): an ISV asks an MSP to connect
 * its systems. The URL's token is stored only as its SHA-256 hash; what the MSP typed on the page
 * (credentials, an OAuth verifier) only sealed (`draftSealed`), never in plaintext.
 */
@Entity('connect_sessions')
@Unique('uq_connect_sessions_token', ['tokenHash'])
@Index('ix_connect_sessions_isv', ['isvId', 'createdAt'])
export class ConnectSession extends BaseEntityWithId {
  /** The ISV that asked; null for the MSP console's own repair session (Reconnect). */
  @Column({ name: 'isv_id', type: 'uuid', nullable: true }) isvId!: string | null;
  /** A repair session's one connection: Test and Connect renew its keys in place. */
  @Column({ name: 'repair_connection_id', type: 'uuid', nullable: true }) repairConnectionId!: string | null;
  /** The tenant the session adds to or repairs; set for a new tenant once it is created. */
  @Column({ name: 'tenant_id', type: 'uuid', nullable: true }) tenantId!: string | null;
  @Column({ name: 'msp_name', type: 'text', nullable: true }) mspName!: string | null;
  @Column({ type: 'jsonb', default: () => `'[]'` }) kinds!: string[];
  @Column({ name: 'requested_grants', type: 'jsonb', default: () => `'[]'` }) requestedGrants!: string[];
  @Column({ name: 'redirect_url', type: 'text', nullable: true }) redirectUrl!: string | null;
  @Column({ name: 'token_hash', type: 'text' }) tokenHash!: string;
  /** pending, completing (a Connect is being carried out), completed, cancelled; expiry is read from expires_at. */
  @Column({ type: 'text', default: 'pending' }) state!: 'pending' | 'completing' | 'completed' | 'cancelled';
  /** When the sweep (or a read) noticed the session expired and wrote its `connect_session.expired` event, once. */
  @Column({ name: 'expiry_noticed_at', type: 'timestamptz', nullable: true }) expiryNoticedAt!: Date | null;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt!: Date;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt!: Date | null;
  @Column({ name: 'cancelled_at', type: 'timestamptz', nullable: true }) cancelledAt!: Date | null;
  /** Sealed JSON: per kind the connector, base URL and credentials the MSP entered, and an OAuth verifier. */
  @Column({ name: 'draft_sealed', type: 'text', nullable: true }) draftSealed!: string | null;
  /** What the page shows of each draft (never a credential): connector, base URL, test result, permissions. */
  @Column({ name: 'draft_info', type: 'jsonb', default: () => `'{}'` }) draftInfo!: Record<string, unknown>;
  /** SHA-256 of the pending OAuth `state`. */
  @Column({ name: 'oauth_state_hash', type: 'text', nullable: true }) @Index('ix_connect_sessions_oauth_state') oauthStateHash!: string | null;
  /** SHA-256 of the completion page's progress key. */
  @Column({ name: 'progress_hash', type: 'text', nullable: true }) @Index('ix_connect_sessions_progress') progressHash!: string | null;
  @Column({ name: 'connection_ids', type: 'jsonb', default: () => `'[]'` }) connectionIds!: string[];
  @Column({ type: 'jsonb', default: () => `'[]'` }) granted!: { connection_id: string; keys: string[] }[];
  @Column({ name: 'missing_permissions', type: 'jsonb', default: () => `'[]'` }) missingPermissions!: Record<string, unknown>[];
  /** Audit entries of a session whose tenant does not exist yet, written to its log when it is created. */
  @Column({ type: 'jsonb', default: () => `'[]'` }) steps!: Record<string, unknown>[];
}
