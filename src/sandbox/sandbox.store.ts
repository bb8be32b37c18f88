/**
 * The sandbox service's data (docs/architecture.md, Sandbox; sandbox.service.ts holds the rules): the
 * sandbox ISV, tenants, connections, grants and keys it ensures, the book it seeds, the largest numeric
 * vendor id stored per connection (a restarted simulator continues after it), the tenant's last event
 * before a simulated change, the emptying of a tenant's store at a reset, and the simulators' snapshot
 * between a graceful close and the next start.
 */
import type { DataSource, DeepPartial, EntityManager } from 'typeorm';
import {
  AgreementLineMapping, ApiKey, AuditEntry, ChargeRecord, Connection, EventRecord, Grant, IdempotencyRecord, IdentityMatch, IdentitySkip,
  Isv, IsvCostRow, IsvCustomer, PartnerMinimumRow, RoutingConfig, SyncState, Tenant, TicketLink,
} from '../../entities';
import { ENTITY_BY_RESOURCE } from '../sync/record-writer';

/** Everything a reset empties of a tenant beside its records (the records are ENTITY_BY_RESOURCE's). */
const EMPTIED_AT_RESET = [SyncState, EventRecord, TicketLink, IdempotencyRecord, RoutingConfig, IsvCustomer, IdentityMatch, IdentitySkip, IsvCostRow, PartnerMinimumRow, AgreementLineMapping, ChargeRecord];

export class SandboxStore {
  constructor(private readonly ds: DataSource) {}

  isvNamed(name: string): Promise<Isv | null> {
    return this.ds.getRepository(Isv).findOneBy({ name });
  }

  createIsv(isv: DeepPartial<Isv>): Promise<Isv> {
    return this.ds.getRepository(Isv).save(isv);
  }

  /** Stores the key (hashed) unless a key with that hash exists. */
  async ensureApiKey(key: DeepPartial<ApiKey> & { keyHash: string }): Promise<void> {
    const keys = this.ds.getRepository(ApiKey);
    if (!(await keys.findOneBy({ keyHash: key.keyHash }))) await keys.save(key);
  }

  /** Adds the book's customers; the ones stored already stay as they are. */
  async addCustomers(customers: DeepPartial<IsvCustomer>[]): Promise<void> {
    await this.ds.createQueryBuilder().insert().into(IsvCustomer).values(customers).orIgnore().execute();
  }

  tenantBySlug(slug: string): Promise<Tenant | null> {
    return this.ds.getRepository(Tenant).findOneBy({ slug });
  }

  /** The tenant named so; throws when there is none. */
  tenantOrFail(where: { id: string } | { slug: string }): Promise<Tenant> {
    return this.ds.getRepository(Tenant).findOneByOrFail(where);
  }

  createTenant(tenant: DeepPartial<Tenant>): Promise<Tenant> {
    return this.ds.getRepository(Tenant).save(tenant);
  }

  connections(tenantId: string): Promise<Connection[]> {
    return this.ds.getRepository(Connection).findBy({ tenantId });
  }

  /** The tenant's connection matching `where` (its oldest, when several do). */
  connection(tenantId: string, where: Partial<Pick<Connection, 'id' | 'kind' | 'connector'>>): Promise<Connection | null> {
    return this.ds.getRepository(Connection).findOne({ where: { tenantId, ...where }, order: { createdAt: 'ASC' } });
  }

  createConnection(connection: DeepPartial<Connection>): Promise<Connection> {
    return this.ds.getRepository(Connection).save(connection);
  }

  async moveConnection(id: string, baseUrl: string): Promise<void> {
    await this.ds.getRepository(Connection).update({ id }, { baseUrl });
  }

  async setGrant(grant: Pick<Grant, 'isvId' | 'connectionId' | 'tenantId' | 'keys'>): Promise<void> {
    await this.ds.getRepository(Grant).upsert(grant, ['isvId', 'connectionId']);
  }

  /** How many of the tenant's resources last synced fine (0: the tenant never synced). */
  syncedResources(tenantId: string): Promise<number> {
    return this.ds.getRepository(SyncState).count({ where: { tenantId, lastStatus: 'ok' } });
  }

  /** The table that holds a resource's records. */
  tableOf(resource: keyof typeof ENTITY_BY_RESOURCE): string {
    return this.ds.getMetadata(ENTITY_BY_RESOURCE[resource]).tableName;
  }

  /** In one transaction: the tenant's records, sync state, events, links, idempotency, routing, identity and billing rows. */
  async emptyTenant(tenantId: string): Promise<void> {
    await this.ds.transaction(async (m) => {
      for (const entity of Object.values(ENTITY_BY_RESOURCE)) await m.getRepository(entity).delete({ tenantId } as never);
      for (const entity of EMPTIED_AT_RESET) await m.getRepository(entity).delete({ tenantId } as never);
    });
  }

  /** In one transaction: the tenant's audit log cleared, then `alsoIn` (the reset's event); what `alsoIn` answers. */
  clearAuditLog<T>(tenantId: string, alsoIn: (m: EntityManager) => Promise<T>): Promise<T> {
    return this.ds.transaction(async (m) => {
      await m.getRepository(AuditEntry).delete({ tenantId });
      return alsoIn(m);
    });
  }

  /** Per connection, the largest numeric source_id of the tenant's rows in `table`. */
  largestNumericIds(table: string, tenantId: string): Promise<{ connection_id: string; max: string | null }[]> {
    return this.ds.query(
      `SELECT connection_id, max(source_id::numeric) AS max FROM "${table}" WHERE tenant_id = $1 AND source_id ~ '^[0-9]{1,15}$' GROUP BY connection_id`,
      [tenantId],
    );
  }

  /** The seq of the tenant's last event (0 when it has none), as text. */
  async lastEventSeq(tenantId: string): Promise<string> {
    const [{ seq }] = await this.ds.query('SELECT coalesce(max(seq), 0)::text AS seq FROM "events" WHERE tenant_id = $1', [tenantId]);
    return seq;
  }

  /** Writes (or replaces) a tenant's simulators snapshot: a graceful close does, nothing else. */
  async saveSnapshot(tenantId: string, state: unknown): Promise<void> {
    await this.ds.query(
      `INSERT INTO "sandbox_snapshots" (tenant_id, state, saved_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (tenant_id) DO UPDATE SET state = EXCLUDED.state, saved_at = EXCLUDED.saved_at`,
      [tenantId, JSON.stringify(state)],
    );
  }

  /** Removes and answers a tenant's snapshot (undefined when there is none): it can be restored once only. */
  async takeSnapshot(tenantId: string): Promise<unknown> {
    // As a SELECT, so that every driver answers the rows alone (a bare DELETE answers [rows, count] on some).
    const rows: { state: unknown }[] = await this.ds.query(
      'WITH taken AS (DELETE FROM "sandbox_snapshots" WHERE tenant_id = $1 RETURNING state) SELECT state FROM taken', [tenantId],
    );
    return rows[0]?.state;
  }
}
