/**
 * The sandbox: the sandbox ISV and its key, the two sandbox tenants with connections pointing at our
 * own simulators (the fixture hosts), seeding the simulators from fixtures, and reset.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ApiKey, Tenant } from '../../entities';
import { normalizeName } from '../identity/normalize';
import { seedSandboxBilling } from '../billing/sandbox-billing';
import { ServiceError } from '../errors/service-error';
import { displayPrefix, hashApiKey } from '../security/api-keys';
import type { SecretBox } from '../security/secret-box';
import { ENTITY_BY_RESOURCE } from '../sync/record-writer';
import type { SyncService } from '../sync/sync.service';
import type { SyncJobs, TenantSyncOutcome } from '../sync/sync-jobs';
import { grantKeysFor, type AccessService } from '../access/access.service';
import { loadVendorFixtures } from './fixtures';
import type { EventsService } from '../events/events.service';
import { eventDraft } from '../events/change-detector';
import { SANDBOX_ISV_NAME, SANDBOX_RECOMMENDATION, SANDBOX_SUPPORTED_TARGETS, SANDBOX_TENANTS, type SandboxTenantDef } from './sandbox.definition';
import type { SandboxSimulators } from '../simulators';
import { exportSnapshot, importSnapshot, parseSnapshot, SimulationRefused, type SimulatedChange } from '../simulators/kit';
import { SandboxStore } from './sandbox.store';
import { retryingTransient } from '../db/transient';
import { isUuid } from '../shared/request';

export interface SandboxInfo {
  isvId: string;
  apiKey: string | undefined;
  tenants: { id: string; slug: string; name: string; mspKey: string }[];
}

type RunningSync = Extract<TenantSyncOutcome, { state: 'running' }>;

export class SandboxService {
  private readyState = false;
  private readonly storeEmptiedListeners: ((tenantId: string) => void)[] = [];
  private readonly store: SandboxStore;

  constructor(
    private readonly ds: DataSource,
    private readonly box: SecretBox,
    private readonly access: AccessService,
    private readonly simulators: SandboxSimulators,
    private readonly syncJobs: SyncJobs,
    /** Where every process reaches the simulators (config.ts, sandboxVendorOrigin). */
    private readonly simulatorOrigin: () => string,
    private readonly events: EventsService,
  ) {
    this.store = new SandboxStore(ds);
  }

  /**
   * Readiness (docs/architecture.md, Sandbox): false until this start has seeded the sandbox and finished
   * its first sync, the restart reset included; /readyz answers 503 until then.
   */
  get ready(): boolean {
    return this.readyState;
  }

  markReady(): void {
    this.readyState = true;
  }

  /** Called when a reset has emptied a tenant's store (the records' last_synced_at cache drops it). */
  onStoreEmptied(listener: (tenantId: string) => void): void {
    this.storeEmptiedListeners.push(listener);
  }

  /** Creates what is missing (idempotent) and points the sandbox connections at this server. */
  async ensure(apiKey: string | undefined): Promise<SandboxInfo> {
    let isv = await this.store.isvNamed(SANDBOX_ISV_NAME);
    if (!isv) {
      isv = await this.store.createIsv({ name: SANDBOX_ISV_NAME, supportedTargets: SANDBOX_SUPPORTED_TARGETS, routingRecommendation: SANDBOX_RECOMMENDATION });
    }
    if (apiKey) await this.ensureKey(apiKey, { kind: 'isv', isvId: isv.id, tenantId: null, label: 'sandbox' });
    const tenants: SandboxInfo['tenants'] = [];
    for (const def of SANDBOX_TENANTS) {
      const tenant = await this.ensureTenant(def, isv.id);
      await this.seedBook(def, tenant.id, isv.id);
      await this.seedBilling(def, tenant.id, isv.id);
      await this.ensureKey(def.mspKey, { kind: 'msp', isvId: null, tenantId: tenant.id, label: 'sandbox msp' });
      tenants.push({ id: tenant.id, slug: tenant.slug, name: tenant.name, mspKey: def.mspKey });
    }
    this.access.invalidate();
    return { isvId: isv.id, apiKey, tenants };
  }

  /** A fixed development key (public, like the sandbox data), stored hashed like every key. */
  private async ensureKey(key: string, owner: Pick<ApiKey, 'kind' | 'isvId' | 'tenantId' | 'label'>): Promise<void> {
    await this.store.ensureApiKey({ ...owner, keyHash: hashApiKey(key), prefix: displayPrefix(key), revokedAt: null });
  }

  /** The sandbox ISV's book (auto-match pairs it after the companies sync). Existing rows stay. */
  private async seedBook(def: SandboxTenantDef, tenantId: string, isvId: string): Promise<void> {
    if (def.book.length === 0) return;
    await this.store.addCustomers(def.book.map((c) => ({ tenantId, isvId, ref: c.ref, name: c.name, normalizedName: normalizeName(c.name), domain: c.domain ?? null })));
  }

  /** The sandbox ISV's mappings, cost rows and minimums; charges follow from the first sync. */
  private async seedBilling(def: SandboxTenantDef, tenantId: string, isvId: string): Promise<void> {
    const psa = await this.store.connection(tenantId, { kind: 'psa' });
    await seedSandboxBilling(this.ds, def.slug, tenantId, isvId, psa?.id ?? null);
  }

  private async ensureTenant(def: SandboxTenantDef, isvId: string): Promise<Tenant> {
    const tenant = (await this.store.tenantBySlug(def.slug)) ?? (await this.store.createTenant({ name: def.name, slug: def.slug, sandbox: true }));
    for (const c of def.connections) {
      const baseUrl = `${this.simulatorOrigin()}${c.path}`;
      const statusMapping = c.kind === 'psa' ? loadVendorFixtures(def.slug, c.connector).statusMapping : {};
      let conn = await this.store.connection(tenant.id, { connector: c.connector });
      if (!conn) {
        conn = await this.store.createConnection({
          tenantId: tenant.id, kind: c.kind, connector: c.connector, baseUrl,
          credentialsEncrypted: this.box.sealJson(c.credentials), statusMapping, settings: { fixture: true },
        });
      } else if (conn.baseUrl !== baseUrl) {
        // The server's address changed since the last start: follow it.
        await this.store.moveConnection(conn.id, baseUrl);
      }
      await this.store.setGrant({ isvId, connectionId: conn.id, tenantId: tenant.id, keys: def.grants.filter((k) => grantKeysFor(conn!.kind).includes(k)) });
    }
    return tenant;
  }

  /** Loads every sandbox tenant's fixtures into the simulators. */
  seedSimulators(): void {
    for (const def of SANDBOX_TENANTS) this.seedTenant(def);
  }

  private seedTenant(def: SandboxTenantDef): void {
    for (const c of def.connections) {
      this.simulators[c.connector].seed(def.slug, loadVendorFixtures(def.slug, c.connector).resources);
    }
  }

  /**
   * After a restart: the simulators keep their state in memory, so they start again from the fixtures
   * while the database kept what was synced (and committed) before. A tenant whose previous process closed
   * gracefully gets its simulators' state back from the snapshot that close saved (saveSnapshots), and
   * carries on as it was. Any other tenant that synced before (the process crashed, or its snapshot cannot
   * be restored) would see reused vendor ids overwrite old records and phantoms stay, so it is reset (one
   * `sandbox_reset` event), with its vendor ids kept above the ones issued before.
   */
  async restoreOrResetAfterRestart(warn: (detail: Record<string, unknown>, message: string) => void): Promise<{ restored: string[]; reset: string[] }> {
    const restored: string[] = [];
    const reset: string[] = [];
    for (const def of SANDBOX_TENANTS) {
      const tenant = await this.store.tenantBySlug(def.slug);
      if (!tenant) continue;
      // Taken, not read: the row is gone before anything runs on the restored state, so a process that
      // dies after this start leaves no snapshot behind, and the start after it resets instead of restoring
      // a state older than what the database synced since (a snapshot is only ever the last close's).
      const saved = await this.store.takeSnapshot(tenant.id);
      if (saved !== undefined) {
        try {
          importSnapshot(this.simulators, def.slug, parseSnapshot(saved));
          restored.push(tenant.id);
          continue;
        } catch (err) {
          // The message names what is malformed, never a value (no credentials, no records).
          warn({ tenant: def.slug, err: (err as Error).message }, 'the sandbox snapshot could not be restored; the tenant is reset instead');
          // A snapshot that failed half way leaves no connector with part of it.
          this.seedTenant(def);
        }
      }
      const synced = await this.store.syncedResources(tenant.id);
      if (synced === 0) continue;
      await this.reset(tenant.id);
      reset.push(tenant.id);
    }
    return { restored, reset };
  }

  /**
   * At a graceful close, once nothing reaches the simulators any more: each sandbox tenant's simulator
   * state, for the next start to continue from (restoreOrResetAfterRestart). Only here, so that a snapshot
   * is never older than the database it is restored beside.
   */
  async saveSnapshots(): Promise<void> {
    for (const def of SANDBOX_TENANTS) {
      const tenant = await this.store.tenantBySlug(def.slug);
      if (!tenant) continue;
      await this.store.saveSnapshot(tenant.id, exportSnapshot(this.simulators, def.slug, def.connections.map((c) => c.connector)));
    }
  }

  /** The highest numeric vendor id the store holds per connector and resource: ids the simulators must not issue again. */
  private async issuedIds(tenantId: string): Promise<{ connector: string; resource: string; max: number }[]> {
    const out: { connector: string; resource: string; max: number }[] = [];
    const connections = await this.store.connections(tenantId);
    for (const resource of Object.keys(ENTITY_BY_RESOURCE) as (keyof typeof ENTITY_BY_RESOURCE)[]) {
      const table = this.store.tableOf(resource);
      const rows = await this.store.largestNumericIds(table, tenantId);
      for (const r of rows) {
        const c = connections.find((x) => x.id === r.connection_id);
        if (c && r.max != null) out.push({ connector: c.connector, resource, max: Number(r.max) });
      }
    }
    return out;
  }

  /**
   * The sandbox trigger: makes `change` in the simulator behind the tenant's PSA (ticket and company
   * changes) or RMM (device changes) as the MSP would, then syncs the tenant. Answers the connection,
   * the changed record's vendor id and the feed position before the change (the events after it are its events).
   */
  async simulate(tenant: Tenant, change: SimulatedChange, waitMs?: number): Promise<{ connectionId: string; targetId: string; afterSeq: string; running: RunningSync | null }> {
    const def = tenant.sandbox ? SANDBOX_TENANTS.find((d) => d.slug === tenant.slug) : undefined;
    if (!def) throw new ServiceError('request_invalid', 'Only sandbox tenants can simulate a change; this is a production tenant.');
    const kind = change.kind === 'device_offline' ? 'rmm' : 'psa';
    const connection = await this.store.connection(tenant.id, { kind });
    const sim = connection ? this.simulators[connection.connector] : undefined;
    if (!connection || !sim?.simulate) {
      throw new ServiceError('request_invalid', `This sandbox tenant has no ${kind.toUpperCase()} simulator that can make the change ${change.kind}.`);
    }
    const seq = await this.store.lastEventSeq(tenant.id);
    let targetId: string;
    try {
      targetId = sim.simulate(def.slug, change).target_id;
    } catch (err) {
      if (err instanceof SimulationRefused) throw new ServiceError('request_invalid', err.message);
      throw err;
    }
    const synced = await this.syncJobs.syncTenantNow(tenant.id, { waitMs });
    const base = { connectionId: connection.id, targetId, afterSeq: String(seq) };
    if (synced.state === 'running') return { ...base, running: synced };
    const failed = synced.connections.find((s) => s.connection_id === connection.id && !s.ok);
    if (failed) throw new ServiceError('vendor_unavailable', `The change was made, but the sync failed: ${failed.error}`);
    return { ...base, running: null };
  }

  /**
   * The sandbox trigger for a connection's credentials (POST /sandbox/simulate credentials_revoked /
   * credentials_restored): the simulator behind the connection refuses its credentials with the vendor's own
   * 401 (its token endpoint and the tokens it issued before), or accepts them again; then the tenant is
   * synced, so the sync really meets the refusal (or the recovery) over HTTP and the connection's state
   * changes as it would at a real vendor (src/events/connection-state.ts). A revoked connection's failed
   * sync is the point, not an error. Answers as `simulate` does, the connection's id as the target.
   */
  async simulateCredentials(tenant: Tenant, change: { kind: 'credentials_revoked' | 'credentials_restored'; connection_id?: string }, waitMs?: number): Promise<{ connectionId: string; targetId: string; afterSeq: string; running: RunningSync | null }> {
    const def = tenant.sandbox ? SANDBOX_TENANTS.find((d) => d.slug === tenant.slug) : undefined;
    if (!def) throw new ServiceError('request_invalid', 'Only sandbox tenants can simulate a change; this is a production tenant.');
    const connection = change.connection_id
      ? (isUuid(change.connection_id) ? await this.store.connection(tenant.id, { id: change.connection_id }) : null)
      : await this.store.connection(tenant.id, { kind: 'psa' });
    if (!connection) throw new ServiceError('request_invalid', change.connection_id ? 'connection_id names no connection of this sandbox tenant.' : 'This sandbox tenant has no PSA.', { details: { field: 'connection_id' } });
    const sim = this.simulators[connection.connector];
    if (!sim || connection.settings?.fixture !== true) throw new ServiceError('request_invalid', 'Only a sandbox connection to a simulator can have its credentials revoked.', { details: { field: 'connection_id' } });
    const seq = await this.store.lastEventSeq(tenant.id);
    if (change.kind === 'credentials_revoked') sim.faults.revokeCredentials(def.slug);
    else sim.faults.restoreCredentials(def.slug);
    const synced = await this.syncJobs.syncTenantNow(tenant.id, { waitMs });
    const base = { connectionId: connection.id, targetId: connection.id, afterSeq: String(seq) };
    return { ...base, running: synced.state === 'running' ? synced : null };
  }

  /** Syncs every sandbox tenant that has never synced (first start). */
  async syncUnsynced(sync?: Pick<SyncService, 'syncConnection'>): Promise<void> {
    for (const def of SANDBOX_TENANTS) {
      const tenant = await this.store.tenantOrFail({ slug: def.slug });
      const synced = await this.store.syncedResources(tenant.id);
      if (synced === 0) {
        await this.syncJobs.syncTenantNow(tenant.id);
        if (def.firstSyncFailure && sync) await this.rehearseFailure(sync, tenant.id, def.firstSyncFailure);
      }
    }
  }

  /**
   * The sandbox's recent failure (fixtures/sandbox.json, first_sync_failure): the simulator refuses one
   * request, so one sync of that connection really fails (audited as sync.failed with the vendor's
   * answer), and the next one recovers.
   */
  private async rehearseFailure(sync: Pick<SyncService, 'syncConnection'>, tenantId: string, f: NonNullable<SandboxTenantDef['firstSyncFailure']>): Promise<void> {
    const connection = await this.store.connection(tenantId, { connector: f.connector });
    const sim = this.simulators[f.connector];
    if (!connection || !sim) return;
    sim.faults.inject({ status: f.status, times: 1, pathIncludes: f.pathIncludes, method: 'GET' });
    // Run here, not as a job: the failure is the sandbox's own, not a failed job for an operator.
    await sync.syncConnection(connection.id, { rehearsed: true }).catch(() => undefined);
    sim.faults.clear();
    await sync.syncConnection(connection.id);
  }

  /**
   * Re-seeds a sandbox tenant: fixtures back into its simulators, its store emptied and synced again
   * in full, its audit log cleared, and one `sandbox_reset` event written.
   */
  async reset(tenantId: string, waitMs?: number): Promise<{ tenant_id: string; sandbox: true; synced: TenantSyncOutcome }> {
    const tenant = await this.store.tenantOrFail({ id: tenantId });
    if (!tenant.sandbox) {
      throw new ServiceError('request_invalid', 'Only sandbox tenants can be reset; this is a production tenant.');
    }
    const def = SANDBOX_TENANTS.find((d) => d.slug === tenant.slug);
    if (!def) throw new ServiceError('request_invalid', 'This sandbox tenant has no fixtures to reset from.');
    const issued = await this.issuedIds(tenantId);
    this.seedTenant(def);
    // A reset gives the tenant its fixture credentials back: whatever was revoked is accepted again.
    for (const c of def.connections) this.simulators[c.connector]?.faults.restoreCredentials(def.slug);
    // Vendor ids are never reused: a record created after the reset gets an id no earlier record had.
    for (const i of issued) this.simulators[i.connector]?.reserveIds?.(def.slug, i.resource, i.max);
    // Beside cost commits and charge recomputations writing the same tenant's rows: a deadlock's victim runs again.
    await retryingTransient(() => this.store.emptyTenant(tenantId));
    // Lists read no cached last_synced_at of the records just removed (they answer null until the sync below).
    for (const listener of this.storeEmptiedListeners) listener(tenantId);
    const isv = await this.store.isvNamed(SANDBOX_ISV_NAME);
    if (isv) {
      await this.seedBook(def, tenantId, isv.id);
      await this.seedBilling(def, tenantId, isv.id);
    }
    const synced = await this.syncJobs.syncTenantNow(tenantId, { full: true, waitMs });
    const eventIds = await this.store.clearAuditLog(tenantId, (m) => this.events.insert(m, tenantId, [eventDraft({
      kind: 'sandbox_reset', dedupeKey: `sandbox_reset:${randomUUID()}`, summary: 'Sandbox tenant re-seeded from fixtures',
    })]));
    await this.events.emitCommitted(tenantId, eventIds);
    return { tenant_id: tenantId, sandbox: true, synced };
  }
}
