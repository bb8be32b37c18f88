/**
 * The one authorisation module (docs/architecture.md, Tenancy, keys and grants). Every surface asks it;
 * nothing else decides who sees a tenant, who holds a grant or who may call an operation:
 * - authentication: an API key is an ISV key or an MSP key (admin comes only through /graphql with the
 *   admin token); request-level checks and limits are in authenticator.ts;
 * - tenant visibility: an ISV sees a tenant on which it holds a grant key, an MSP key its own tenant,
 *   admin every tenant; anything else is 404 `not_found`, exactly like a tenant that does not exist;
 * - grants: `holds(access, connection, key)`; MSP and admin callers hold every key of their tenant;
 * - roles: an operation is for ISVs, for MSPs, for either, or for admin (`role_required`);
 * - an operation's declared grant (`GrantRule`, operation.ts): the runner asks `grantedFor` before the handler runs and
 *   hands the handler the connections it may act on; per-connection nuances (vendor_native company
 *   keys, the target-dependent grant of findings, auto-close) are explicit calls to `holds`/`requireGrantOn`.
 * Lookups on the request path are cached briefly; any change made through this process clears them.
 */
import { AccessBroadcast } from './access-broadcast';
import type { DataSource } from 'typeorm';
import type { ApiKey, Connection, Tenant } from '../../entities';
import { ApiKeysStore } from './api-keys.store';
import { GrantsStore } from './grants.store';
import { ServiceError } from '../errors/service-error';
import { hashApiKey } from '../security/api-keys';
import { isUuid } from '../shared/request';
import { TtlCache } from '../shared/ttl-cache';
import { GRANT_KEYS, isGrantKey, isvOfCaller, type Caller, type CallerKind, type GrantKey } from './caller';
import { eventVisibility, type EventVisibility } from './event-visibility';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';

export interface TenantAccess {
  tenant: Tenant;
  caller: Caller;
  connections: Connection[];
  /** connection id -> grant keys the caller holds there (MSP and admin: every key). */
  grants: ReadonlyMap<string, ReadonlySet<GrantKey>>;
  /**
   * Set by the runner for an operation that declares a grant: the key it checked and the connections
   * of the tenant on which the caller holds it (never empty). Null otherwise.
   */
  granted?: { key: GrantKey; connections: readonly Connection[] } | null;
}

/**
 * One grant an operation needs: a key (or any one of several keys), on connections of one kind
 * (default: the kind the key's prefix names; none for billing keys).
 */
export interface GrantNeed {
  key: GrantKey | readonly GrantKey[];
  kind?: Connection['kind'];
}

const KIND_OF_PREFIX: Record<string, Connection['kind'] | undefined> = { psa: 'psa', rmm: 'rmm', distributor: 'distributor' };

/**
 * The grant keys that make sense on a connection of `kind` (docs/architecture.md, Tenancy, keys and
 * grants): a key's prefix names its kind; the billing keys (cost rows land on agreement lines and are
 * reconciled with distributor subscriptions) sit on a PSA or a distributor, never on an RMM. The one
 * rule behind what the MSP is offered, what it may set, and what a stored grant counts for.
 */
export function grantKeysFor(kind: Connection['kind']): GrantKey[] {
  return GRANT_KEYS.filter((k) => {
    const keyKind = KIND_OF_PREFIX[k.split('.')[0]];
    return keyKind ? keyKind === kind : kind !== 'rmm';
  });
}

/**
 * The keys of `keys` that are not offered on a connection of `kind`: a 422 naming the allowed ones
 * when any is (a PSA key on an RMM grants nothing and would only mislead whoever reads the grants).
 */
export function refuseKeysNotOffered(kind: Connection['kind'], keys: readonly string[], connectionId: string): void {
  const offered = grantKeysFor(kind);
  const wrong = keys.filter((k) => !(offered as string[]).includes(k));
  if (wrong.length) {
    throw new ServiceError('request_invalid', `${wrong.join(', ')} ${wrong.length === 1 ? 'is' : 'are'} not offered on a ${kind} connection; it takes ${offered.join(', ')}.`, {
      details: { connection_id: connectionId, kind, refused: wrong, allowed: offered },
    });
  }
}

/** The need a declaration states when it is fixed (a key or a need); undefined for anything else. */
export function staticNeed(rule: unknown): GrantNeed | undefined {
  if (typeof rule === 'string') return isGrantKey(rule) ? { key: rule } : undefined;
  return typeof rule === 'object' && rule !== null && 'key' in rule ? (rule as GrantNeed) : undefined;
}

/** Who may call an operation: `reader` is anyone who sees the tenant (ISV, MSP or admin). */
export type OperationRole = 'isv' | 'msp' | 'reader' | 'admin';

const CACHE_MS = 5_000;
/** A key's last use is written at most this often per key and process (never a write per request). */
export const LAST_USED_EVERY_MS = 60_000;
const ALL_KEYS: ReadonlySet<GrantKey> = new Set(GRANT_KEYS);

/** Who a caller is, as `GET /me` answers it: the key's ISV or tenant, or the operator (the admin token). */
export interface CallerIdentity {
  kind: 'isv' | 'tenant' | 'operator';
  id: string;
  name: string;
}

/** A known key as cached: its caller, and when it stops working (a key rotated with overlap; null: not revoked). */
interface KnownKey { caller: Caller; revokedAt: number | null }

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** This process cleared its access caches: a change made here, or one another process announced (access-broadcast.ts). */
    'access.caches_cleared': CommittedReaction<Record<string, never>>;
  }
}

export class AccessService {
  private readonly keys = new TtlCache<KnownKey | null>(CACHE_MS);
  /** When this process last wrote each key's `last_used_at` (ms on `now`). */
  private readonly lastUseNoted = new Map<string, number>();
  private readonly access = new TtlCache<TenantAccess | null>(CACHE_MS);
  private readonly connections = new TtlCache<Connection>(CACHE_MS);
  private readonly isvEvents = new TtlCache<EventVisibility | null>(CACHE_MS);
  /** Counts the clearings, so a lookup that overlapped one is not cached. */
  private generation = 0;
  private readonly apiKeys: ApiKeysStore;
  private readonly grantsStore: GrantsStore;

  /**
   * `now`: the service's clock (ms since the epoch), which a key's end of overlap is compared with; tests
   * move it instead of waiting.
   */
  constructor(
    ds: DataSource, private readonly now: () => number = Date.now,
    /** Where a clearing of the caches is told (`access.caches_cleared`). */
    private readonly changes: CommittedChanges = new CommittedChanges(),
  ) {
    this.apiKeys = new ApiKeysStore(ds);
    this.grantsStore = new GrantsStore(ds);
  }

  /**
   * The caller of a key. A key is refused once revoked: `revoked_at` set and reached. A key rotated with
   * overlap carries a `revoked_at` in the future and works until then (checked at every request, cached
   * or not); past it, it answers exactly like a revoked key.
   */
  async authenticate(apiKey: string | undefined): Promise<Caller> {
    if (!apiKey) throw new ServiceError('unauthenticated', 'Send your API key in the X-API-Key header.');
    const hash = hashApiKey(apiKey);
    const hit = await this.keys.getOrLoad(hash, async (): Promise<KnownKey | null> => {
      const row = await this.apiKeys.byHash(hash);
      if (!row) return null;
      const caller: Caller = row.kind === 'msp' ? { kind: 'msp', tenantId: row.tenantId!, apiKeyId: row.id, keyPrefix: row.prefix }
        : { kind: 'isv', isvId: row.isvId!, apiKeyId: row.id, keyPrefix: row.prefix };
      return { caller, revokedAt: row.revokedAt ? row.revokedAt.getTime() : null };
    });
    const now = this.now();
    if (!hit || (hit.revokedAt !== null && hit.revokedAt <= now)) throw new ServiceError('unauthenticated', 'The API key is unknown or revoked.');
    this.noteUse(hit.caller, now);
    return hit.caller;
  }

  /**
   * Records a key's last use, cheaply: at most once a minute per key and process, off the request path
   * (not awaited; a failure only leaves the time older), and the statement itself skips a row written
   * within the minute by another process.
   */
  private noteUse(caller: Caller, now: number): void {
    if (caller.kind === 'admin') return;
    const id = caller.apiKeyId;
    const last = this.lastUseNoted.get(id);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS && now >= last) return;
    this.lastUseNoted.delete(id);
    this.lastUseNoted.set(id, now);
    // Bounded: the oldest notes go first (a Map iterates in insertion order).
    if (this.lastUseNoted.size > 10_000) this.lastUseNoted.delete(this.lastUseNoted.keys().next().value!);
    const at = new Date(now);
    void this.apiKeys.noteLastUsed(id, at).catch(() => undefined);
  }

  /** Who the caller is (`GET /me`): an ISV key's ISV, an MSP key's tenant, the operator for the admin token. */
  async identify(caller: Caller): Promise<CallerIdentity> {
    if (caller.kind === 'admin') return { kind: 'operator', id: 'admin_token', name: 'Operator (admin token)' };
    if (caller.kind === 'msp') {
      const t = await this.grantsStore.tenant(caller.tenantId);
      return { kind: 'tenant', id: caller.tenantId, name: t?.name ?? '' };
    }
    const isv = await this.grantsStore.isv(caller.isvId);
    return { kind: 'isv', id: caller.isvId, name: isv?.name ?? '' };
  }

  /** The tenant as the caller may see it; 404 when it is not visible, exactly as when it does not exist. */
  async tenantAccess(caller: Caller, tenantId: string): Promise<TenantAccess> {
    const hit = await this.access.getOrLoad(`${callerScope(caller)}:${tenantId}`, () => this.loadAccess(caller, tenantId));
    if (!hit) throw ServiceError.notFound('Tenant');
    return hit;
  }

  private async loadAccess(caller: Caller, tenantId: string): Promise<TenantAccess | null> {
    if (!isUuid(tenantId)) return null;
    if (caller.kind === 'msp' && caller.tenantId !== tenantId) return null;
    const tenant = await this.grantsStore.tenant(tenantId);
    if (!tenant) return null;
    const connections = await this.grantsStore.connectionsOf(tenantId);
    const grants = new Map<string, ReadonlySet<GrantKey>>();
    if (caller.kind !== 'isv') {
      for (const c of connections) grants.set(c.id, ALL_KEYS);
      return { tenant, caller, connections, grants };
    }
    const rows = await this.grantsStore.grantsOfIsvs(tenantId, [caller.isvId]);
    const kindOf = new Map(connections.map((c) => [c.id, c.kind]));
    for (const g of rows) {
      const kind = kindOf.get(g.connectionId);
      const offered: ReadonlySet<string> = new Set(kind ? grantKeysFor(kind) : []);
      const held = g.keys.filter((k): k is GrantKey => ALL_KEYS.has(k as GrantKey) && offered.has(k));
      if (held.length > 0) grants.set(g.connectionId, new Set(held));
    }
    if (grants.size === 0) return null;
    return { tenant, caller, connections, grants };
  }

  /**
   * A connection by id for the jobs that call its vendor (credentials, base URL, budget), cached like
   * the rest: every change to a connection clears it here and in every other process (invalidate).
   */
  async connection(id: string): Promise<Connection> {
    return this.connections.getOrLoad(id, () => this.grantsStore.connection(id));
  }

  async visibleTenants(caller: Caller): Promise<Tenant[]> {
    return this.grantsStore.tenants(caller.kind === 'isv' ? { isvId: caller.isvId } : caller.kind === 'msp' ? { tenantId: caller.tenantId } : null);
  }

  /** Whether the caller holds `key` on the connection. */
  holds(access: TenantAccess, connectionId: string, key: GrantKey): boolean {
    return access.grants.get(connectionId)?.has(key) ?? false;
  }

  /** The keys the caller holds on a connection, sorted (for display). */
  keysOn(access: TenantAccess, connectionId: string): GrantKey[] {
    return [...(access.grants.get(connectionId) ?? [])].sort();
  }

  /** Connections of the tenant (of `kind`, when given) on which the caller holds `key`. */
  holding(access: TenantAccess, key: GrantKey, kind?: Connection['kind']): Connection[] {
    return access.connections.filter((c) => (!kind || c.kind === kind) && this.holds(access, c.id, key));
  }

  /**
   * The runner's check of an operation's declared grant: the connections (of the need's kind) on which
   * the caller holds the key, grant_missing when there are none. The answer travels with the access.
   */
  grantedFor(access: TenantAccess, need: GrantNeed): TenantAccess {
    const keys: readonly GrantKey[] = typeof need.key === 'string' ? [need.key] : need.key;
    // Several keys (any one of them) may sit on connections of different kinds: no default kind then.
    const kind = need.kind ?? (keys.length === 1 ? KIND_OF_PREFIX[keys[0].split('.')[0]] : undefined);
    const connections = access.connections.filter((c) => (!kind || c.kind === kind) && keys.some((k) => this.holds(access, c.id, k)));
    if (connections.length === 0) throw ServiceError.grantMissing(keys[0]);
    return { ...access, granted: { key: keys[0], connections } };
  }

  /**
   * The connections an operation may act on with `key`: those the runner established from the
   * declaration, or, when a handler reuses another operation's step (auto-close reuses the ticket
   * write), the ones the caller holds `key` on, grant_missing when none.
   */
  targets(access: TenantAccess, key: GrantKey, kind?: Connection['kind']): readonly Connection[] {
    if (access.granted?.key === key) return access.granted.connections;
    return this.requireGrant(access, key, kind ?? KIND_OF_PREFIX[key.split('.')[0]]);
  }

  /** The event families the caller sees on the tenant (events feed, webhook registration). */
  eventVisibility(access: TenantAccess): EventVisibility {
    return eventVisibility(access.connections.map((c) => c.id), (c, k) => this.holds(access, c, k));
  }

  /**
   * For each ISV, the events its webhooks receive on the tenant: what its key would see in the feed; null
   * when it sees no tenant. Asked at every committed page of a sync (the webhook fan-out), so cached like
   * the request path's lookups and cleared with them.
   */
  async eventVisibilityOfIsvs(tenantId: string, isvIds: readonly string[]): Promise<Map<string, EventVisibility | null>> {
    const ids = [...new Set(isvIds)];
    const known = new Map<string, EventVisibility | null>();
    for (const isv of ids) {
      const hit = this.isvEvents.get(`${tenantId}:${isv}`);
      if (hit !== undefined) known.set(isv, hit);
    }
    const missing = ids.filter((isv) => !known.has(isv));
    if (missing.length > 0) {
      const generation = this.generation;
      const rows = await this.grantsStore.grantsOfIsvs(tenantId, missing);
      for (const isv of missing) {
        const held = rows.filter((g) => g.isvId === isv && g.keys.length > 0);
        const keys = new Map(held.map((g) => [g.connectionId, new Set(g.keys.filter(isGrantKey))]));
        const visibility = held.length === 0 ? null : eventVisibility([...keys.keys()], (c, k) => keys.get(c)?.has(k) ?? false);
        known.set(isv, visibility);
        // Not kept when a change cleared the caches while this was read: it may be from before the change.
        if (generation === this.generation) this.isvEvents.set(`${tenantId}:${isv}`, visibility);
      }
    }
    return new Map(ids.map((isv) => [isv, known.get(isv)!]));
  }

  /**
   * What the ISV-wide events feed (`GET /events`) shows the caller: the tenants it sees (an ISV: those it
   * holds a grant key on; the MSP key: its own; admin: every one) and, over all of them at once, the
   * connections on which it holds each family's grant (connection ids are unique across tenants, so one
   * visibility holds them all). `healthTenants`: the tenants where it sees health rows that name no
   * connection. Read fresh at each call (one statement for the grants).
   */
  async isvWideVisibility(caller: Caller): Promise<{ tenants: Tenant[]; isvId: string | null; visibility: EventVisibility; healthTenants: string[] }> {
    const tenants = await this.visibleTenants(caller);
    const ids = tenants.map((t) => t.id);
    const connections = ids.length ? await this.grantsStore.connectionKindsOf(ids) : [];
    const held = new Map<string, ReadonlySet<GrantKey>>();
    if (caller.kind !== 'isv') {
      for (const c of connections) held.set(c.id, ALL_KEYS);
    } else if (ids.length) {
      const kindOf = new Map(connections.map((c) => [c.id, c.kind]));
      for (const g of await this.grantsStore.grantsOnTenants(caller.isvId, ids)) {
        const kind = kindOf.get(g.connectionId);
        const offered: ReadonlySet<string> = new Set(kind ? grantKeysFor(kind) : []);
        const keys = g.keys.filter((k): k is GrantKey => ALL_KEYS.has(k as GrantKey) && offered.has(k));
        if (keys.length) held.set(g.connectionId, new Set(keys));
      }
    }
    const visibility = eventVisibility(connections.map((c) => c.id), (c, k) => held.get(c)?.has(k) ?? false);
    const tenantOf = new Map(connections.map((c) => [c.id, c.tenantId]));
    const healthTenants = [...new Set(visibility.families.health.map((c) => tenantOf.get(c)!))];
    return { tenants, isvId: isvOfCaller(caller), visibility, healthTenants };
  }

  /**
   * The ISV whose own data (book, routing) a read or decision is about: an ISV caller's own (another id
   * names nothing); for the MSP key or the admin token, the ISV it names with `isv_id`, which must work on the tenant.
   */
  async isvInScope(caller: Caller, tenantId: string, given: string | null | undefined): Promise<string> {
    if (caller.kind === 'isv') {
      if (given && given !== caller.isvId) throw new ServiceError('not_found', 'No such ISV on this tenant.');
      return caller.isvId;
    }
    if (!given) throw new ServiceError('request_invalid', 'An MSP key or the admin token names the ISV it means: isv_id.', { details: { field: 'isv_id' } });
    if (!(await this.isvWorksOn(tenantId, given))) throw new ServiceError('not_found', 'No ISV with that id works on this tenant.');
    return given;
  }

  /**
   * The tenant's own MSP caller, as a page the MSP signed in to acts (the console): its newest unrevoked
   * MSP key; null when the tenant has none (a revoked key signs no one in).
   */
  async mspCallerOf(tenantId: string): Promise<Caller | null> {
    const [row] = await this.mspKeysOf(tenantId);
    return row ? { kind: 'msp', tenantId, apiKeyId: row.id, keyPrefix: row.prefix } : null;
  }

  /** The tenant's unrevoked MSP keys, newest first (never the key itself: id, prefix, when issued). */
  async mspKeysOf(tenantId: string): Promise<ApiKey[]> {
    if (!isUuid(tenantId)) return [];
    return this.apiKeys.unrevokedMspKeys(tenantId);
  }

  /** Whether the ISV holds any grant row on the tenant (an MSP names only ISVs that work on it). */
  async isvWorksOn(tenantId: string, isvId: string): Promise<boolean> {
    return this.grantsStore.hasGrantRow(tenantId, isvId);
  }

  /** Like `holding`, but grant_missing when there are none. */
  requireGrant(access: TenantAccess, key: GrantKey, kind?: Connection['kind']): Connection[] {
    const held = this.holding(access, key, kind);
    if (held.length === 0) throw ServiceError.grantMissing(key);
    return held;
  }

  /** One connection must carry `key` for the caller. */
  requireGrantOn(access: TenantAccess, connection: Connection, key: GrantKey): void {
    if (!this.holds(access, connection.id, key)) throw ServiceError.grantMissing(key);
  }

  /** Clears what this process cached and tells the other processes to do the same (access-broadcast.ts). */
  invalidate(): Promise<void> {
    this.clearCaches();
    return this.broadcast?.announce() ?? Promise.resolve();
  }

  private clearCaches(): void {
    this.generation++;
    this.keys.clear();
    this.access.clear();
    this.connections.clear();
    this.isvEvents.clear();
    // Its reactions clear their own caches at once (CommittedChanges.publish runs a reaction that answers at once, at once).
    void this.changes.publish('access.caches_cleared', {});
  }

  private broadcast: AccessBroadcast | null = null;

  async close(): Promise<void> {
    await this.broadcast?.close();
  }

  /** Production (REDIS_URL): access changes made by another process clear this one's caches at once. */
  shareChanges(redisUrl: string, prefix: string): AccessBroadcast {
    this.broadcast = new AccessBroadcast(redisUrl, prefix, () => this.clearCaches());
    return this.broadcast;
  }
}

function callerScope(caller: Caller): string {
  return caller.kind === 'isv' ? `isv:${caller.isvId}` : caller.kind === 'msp' ? `msp:${caller.tenantId}` : 'admin';
}

/**
 * `role_required` when the caller is not of a kind the operation is for. The admin token (internal
 * support) may run every read (`kind: 'query'`) so it sees what a customer sees; writes stay with the
 * ISV and MSP callers (docs/architecture.md, Tenancy, keys and grants). The runner audits such reads.
 */
export function requireRole(caller: Caller, role: OperationRole, kind: 'query' | 'mutation'): void {
  if (role === 'reader' || caller.kind === role) return;
  if (caller.kind === 'admin' && kind === 'query') return;
  const wanted: CallerKind = role;
  throw new ServiceError('role_required', wanted === 'msp'
    ? "This operation is the MSP's: call it with the tenant's MSP key (sk_msp_...)."
    : wanted === 'admin' ? 'This operation is internal tooling\'s: call /graphql with Authorization: Bearer <ADMIN_TOKEN>.'
      : "This operation is an ISV's: call it with that ISV's API key.", { details: { role: wanted } });
}

/** The ISV of an ISV caller (after requireRole). */
export function isvOf(caller: Caller): string {
  if (caller.kind !== 'isv') throw new ServiceError('role_required', "This operation is an ISV's: call it with that ISV's API key.", { details: { role: 'isv' } });
  return caller.isvId;
}
