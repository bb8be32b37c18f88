/** The connect feature's store (docs/architecture.md, Folders): sessions, and what a session reads of tenants, connections and their syncs. */
import { In, type DataSource, type DeepPartial } from 'typeorm';
import { ApiKey, Connection, ConnectSession, Isv, SyncState, Tenant } from '../../entities';

export class ConnectSessionsStore {
  constructor(private readonly ds: DataSource) {}

  private get sessions() {
    return this.ds.getRepository(ConnectSession);
  }

  private get connections() {
    return this.ds.getRepository(Connection);
  }

  async insertSession(row: DeepPartial<ConnectSession>): Promise<ConnectSession> {
    return this.sessions.save(row);
  }

  /** An ISV's sessions, oldest first (null: every ISV's). */
  sessionsOfIsv(isvId: string | null): Promise<ConnectSession[]> {
    return this.sessions.find({ where: isvId ? { isvId } : {}, order: { createdAt: 'ASC' } });
  }

  /** A session by id, when it is the ISV's (null: any ISV's). */
  sessionOfIsv(isvId: string | null, id: string): Promise<ConnectSession | null> {
    return this.sessions.findOneBy(isvId ? { id, isvId } : { id });
  }

  session(id: string): Promise<ConnectSession> {
    return this.sessions.findOneByOrFail({ id });
  }

  sessionByTokenHash(tokenHash: string): Promise<ConnectSession | null> {
    return this.sessions.findOneBy({ tokenHash });
  }

  sessionByOAuthStateHash(oauthStateHash: string): Promise<ConnectSession | null> {
    return this.sessions.findOneBy({ oauthStateHash });
  }

  sessionByProgressHash(progressHash: string): Promise<ConnectSession | null> {
    return this.sessions.findOneBy({ progressHash });
  }

  /** Cancels a pending session; false when it was no longer pending. */
  async cancelPending(id: string): Promise<boolean> {
    const res = await this.ds.createQueryBuilder().update(ConnectSession).set({ state: 'cancelled', cancelledAt: () => 'now()' })
      .where('id = :id AND state = :pending', { id, pending: 'pending' }).execute();
    return Boolean(res.affected);
  }

  /** Claims a pending, unexpired session for completion (pending -> completing); false when another got it first. */
  async claimForCompletion(id: string): Promise<boolean> {
    const res = await this.ds.createQueryBuilder().update(ConnectSession).set({ state: 'completing' })
      .where('id = :id AND state = :pending AND expires_at > now()', { id, pending: 'pending' }).execute();
    return Boolean(res.affected);
  }

  /** Hands a claimed session back (completing -> pending). */
  async releaseClaim(id: string): Promise<void> {
    await this.sessions.update({ id, state: 'completing' }, { state: 'pending' });
  }

  /** Changes a session while it is still pending. */
  async updatePending(id: string, fields: DeepPartial<ConnectSession>): Promise<void> {
    await this.sessions.update({ id, state: 'pending' }, fields as never);
  }

  /** Changes a completed session (what its completion page keeps). */
  async updateCompleted(id: string, fields: DeepPartial<ConnectSession>): Promise<void> {
    await this.sessions.update({ id, state: 'completed' }, fields as never);
  }

  /** Changes a session whatever its state. */
  async updateSession(id: string, fields: DeepPartial<ConnectSession>): Promise<void> {
    await this.sessions.update({ id }, fields as never);
  }

  /** Appends a step to a session that has no tenant yet (its steps move to the tenant's audit log once it has one). */
  async appendStep(sessionId: string, step: Record<string, unknown>): Promise<void> {
    await this.ds.query(`UPDATE connect_sessions SET steps = steps || $2::jsonb WHERE id = $1`, [sessionId, JSON.stringify([step])]);
  }

  async isvName(isvId: string): Promise<string | null> {
    return (await this.ds.getRepository(Isv).findOneBy({ id: isvId }))?.name ?? null;
  }

  async tenantName(tenantId: string): Promise<string | null> {
    return (await this.ds.getRepository(Tenant).findOneBy({ id: tenantId }))?.name ?? null;
  }

  connection(id: string): Promise<Connection | null> {
    return this.connections.findOneBy({ id });
  }

  connectionOfTenant(tenantId: string, id: string): Promise<Connection | null> {
    return this.connections.findOneBy({ id, tenantId });
  }

  /** A tenant's connections, oldest first. */
  connectionsOfTenant(tenantId: string): Promise<Connection[]> {
    return this.connections.find({ where: { tenantId }, order: { createdAt: 'ASC' } });
  }

  /** The connections with these ids, oldest first. */
  async connectionsWithIds(ids: readonly string[]): Promise<Connection[]> {
    return ids.length ? this.connections.find({ where: { id: In([...ids]) }, order: { createdAt: 'ASC' } }) : [];
  }

  /** Every connection to one vendor account (connector and base URL). */
  connectionsAt(connector: string, baseUrl: string): Promise<Connection[]> {
    return this.connections.find({ where: { connector, baseUrl } });
  }

  /** The sync state of each resource of these connections. */
  async syncStatesOf(connectionIds: readonly string[]): Promise<SyncState[]> {
    return connectionIds.length ? this.ds.getRepository(SyncState).find({ where: { connectionId: In([...connectionIds]) } }) : [];
  }

  /** A tenant's MSP keys, revoked ones included. */
  mspKeysOf(tenantId: string): Promise<ApiKey[]> {
    return this.ds.getRepository(ApiKey).find({ where: { tenantId, kind: 'msp' } });
  }
}
