/**
 * Connect sessions (docs/architecture.md, Connect sessions and console): an ISV opens one, the MSP's
 * person completes it on the connect page. The URL's token is 32 random bytes, kept only as its SHA-256
 * hash, single use (Connect or a cancel spends it) and bounded in time; it names one ISV and at most one
 * tenant. What the MSP types is sealed at once (secret-box) and never shown again; connections are saved
 * through the one path internal tooling uses (src/tenants/connection-save.ts); every step is in the
 * tenant's audit log with who did it.
 */
import { createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Connection, ConnectSession, ConnectionKind } from '../../entities';
import { grantKeysFor, type AccessService } from '../access/access.service';
import { isGrantKey, type Caller, type GrantKey } from '../access/caller';
import type { PermissionFinding, PermissionNeed } from '../connectors/capabilities';
import type { CredentialRotation } from '../connectors/credential-rotation';
import { capabilitiesOf, CONNECTOR_NAMES, readConnector } from '../connectors/registry';
import { ServiceError } from '../errors/service-error';
import { toRfc3339 } from '../shared/dates';
import type { Logger } from 'pino';
import type { JobQueue } from '../../jobs/queue/types';
import type { RateLimits } from '../access/rate-limit';
import type { ConsoleAuth } from '../console/console-auth';
import type { PeopleService } from '../people/people.service';
import type { PeopleStore } from '../people/people.store';
import type { PersonSession } from '../people/sessions';
import { normalEmail, personName, plausibleEmail } from '../people/people.types';
import { TenantsStore } from '../tenants/tenants.store';
import type { AuditService } from '../audit/audit.service';
import { auditDetailOf } from '../operations/audit-context';
import type { AppConfig } from '../config/config';
import type { VendorHttpClient } from '../connectors/vendor-http';
import { SecretBox } from '../security/secret-box';
import type { SandboxSimulators } from '../simulators';
import type { SyncJobs } from '../sync/sync-jobs';
import type { AdminService } from '../tenants/admin.service';
import type { WebhooksService } from '../webhooks/webhooks.service';
import { isUuid } from '../shared/request';
import { testConnection } from '../tenants/connection-checks';
import { addConnection, changeConnection, checkedConnectionInput } from '../tenants/connection-save';
import { blockedKeys, type Blocked } from '../access/grant-words';
import { ConnectSessionsStore } from './connect-sessions.store';
import type { ConnectionStates } from '../events/connection-states.store';
import { authorizeUrl, exchangeCode, pkcePair } from './oauth';
import type { ConnectSessionAnswer } from './connect.schemas';

/**
 * Everything this feature takes from the service graph, in one place (so that a change to how
 * services reach handlers is one edit here).
 */
export interface ConnectDeps {
  ds: DataSource;
  box: SecretBox;
  config: AppConfig;
  http: VendorHttpClient;
  logger: Logger;
  access: AccessService;
  admin: AdminService;
  audit: AuditService;
  queue: JobQueue;
  syncJobs: SyncJobs;
  webhooks: WebhooksService;
  simulators: SandboxSimulators | null;
  rateLimits: RateLimits;
  consoleAuth: ConsoleAuth;
  people: PeopleService;
  peopleStore: PeopleStore;
  /** The connection events: connection.removed of a replaced connection, connect_session.completed / expired. */
  connectionStates: ConnectionStates;
}

/**
 * Who decides on the connect page (docs/architecture.md, Connect sessions and console). The ISV holds
 * the link, so the link alone never makes anyone the MSP:
 * - on an existing tenant, a signed-in person who is an owner or admin of that tenant;
 * - on a new tenant (`msp_name`), the person completing names themselves and becomes its first owner.
 */
export type PageDecider =
  | { kind: 'member'; personId: string; email: string }
  | { kind: 'first_owner'; name: string; email: string };

/** Per kind, where a tested system goes on a tenant that already has one of that kind: beside it, or in place of one. */
export type Placement = 'new' | { replace: string };

/** The roles of a tenant whose members may connect and repair its systems. */
const DECIDING_ROLES = new Set(['owner', 'admin']);

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** What the page keeps of one kind's connector while the MSP fills it in (sealed as a whole). */
interface Draft {
  connector: string;
  baseUrl: string;
  credentials: Record<string, string>;
  oauth?: { verifier: string; redirectUri: string } | null;
}

/** What the page shows of a draft: never a credential. */
export interface DraftInfo {
  connector: string;
  base_url: string;
  tested_at: string;
  permissions: (PermissionNeed & { ok: boolean | null; detail: string | null })[];
  authorised: boolean;
}

export interface MissingPermission {
  kind: string; connector: string; permission: string; capability: string; grants: string[]; detail: string | null;
}

/** A refusal of the page (not an API answer): a status and words for a person. */
export class ConnectPageRefusal extends Error {
  constructor(readonly status: number, readonly title: string, message: string) {
    super(message);
  }
}

export type SessionState = 'pending' | 'completed' | 'expired' | 'cancelled';

export function stateOf(s: ConnectSession, now = Date.now()): SessionState {
  if (s.state === 'completed' || s.state === 'cancelled') return s.state;
  return s.expiresAt.getTime() <= now ? 'expired' : 'pending';
}

/** The grants that cannot work on a kind's connection given the permission findings (one rule with the console's: `blockedKeys`). */
export function blockedGrants(kind: ConnectionKind, info: DraftInfo | undefined): Map<GrantKey, Blocked<DraftInfo['permissions'][number]>> {
  if (!info) return new Map();
  return blockedKeys(kind, info.permissions.filter((p) => p.ok === false));
}

export class ConnectSessions {
  private readonly store: ConnectSessionsStore;

  constructor(readonly deps: ConnectDeps) {
    this.store = new ConnectSessionsStore(deps.ds);
  }

  private get ds(): DataSource {
    return this.deps.ds;
  }

  // ---- the ISV's API -------------------------------------------------------------------------

  async create(caller: Caller, isvId: string, body: {
    tenant_id?: string; msp_name?: string; kinds: ConnectionKind[]; requested_grants: GrantKey[]; redirect_url?: string; expires_in_minutes: number;
  }): Promise<{ session: ConnectSession; token: string }> {
    // A tenant the ISV does not see is 404, exactly like one that does not exist, before anything else.
    if (body.tenant_id != null) await this.deps.access.tenantAccess(caller, body.tenant_id);
    if ((body.tenant_id == null) === (body.msp_name == null)) {
      throw new ServiceError('validation', 'Give exactly one of tenant_id (an existing tenant) and msp_name (a new one).', { details: { field: body.tenant_id == null ? 'msp_name' : 'tenant_id' } });
    }
    const kinds = [...new Set(body.kinds)];
    const offered = new Set(kinds.flatMap((k) => grantKeysFor(k)));
    const foreign = body.requested_grants.filter((g) => !offered.has(g));
    if (foreign.length) {
      throw new ServiceError('validation', `${foreign.join(', ')} ${foreign.length === 1 ? 'is' : 'are'} not offered on ${kinds.join(', ')}; ask for the kinds they need.`, { details: { field: 'requested_grants', refused: foreign } });
    }
    if (body.redirect_url != null) checkRedirectUrl(body.redirect_url);
    const token = randomBytes(32).toString('base64url');
    const session = await this.store.insertSession({
      isvId, tenantId: body.tenant_id ?? null, mspName: body.msp_name ?? null, kinds, requestedGrants: [...new Set(body.requested_grants)],
      redirectUrl: body.redirect_url ?? null, tokenHash: sha256(token), state: 'pending',
      expiresAt: new Date(Date.now() + body.expires_in_minutes * 60_000), completedAt: null, cancelledAt: null, draftSealed: null, draftInfo: {},
      oauthStateHash: null, progressHash: null, connectionIds: [], granted: [], missingPermissions: [], steps: [],
    });
    await this.step(session, 'connect.session.created', 'ok', { by: 'isv', kinds, requested_grants: session.requestedGrants, expires_at: session.expiresAt.toISOString() });
    return { session, token };
  }

  connectUrl(token: string): string {
    return `${this.deps.config.publicUrl}/connect/${token}`;
  }

  /** The ISV's sessions (null: internal support, every ISV's). */
  async ofIsv(isvId: string | null): Promise<ConnectSession[]> {
    const sessions = await this.store.sessionsOfIsv(isvId);
    await this.noticeExpired(sessions);
    return sessions;
  }

  /** A read that finds a session expired whose expiry nobody noticed yet writes its connect_session.expired (once: src/events/connection-state.ts). */
  private async noticeExpired(sessions: ConnectSession[]): Promise<void> {
    const now = Date.now();
    const ids = sessions.filter((s) => s.state === 'pending' && !s.expiryNoticedAt && stateOf(s, now) === 'expired').map((s) => s.id);
    if (ids.length) await this.deps.connectionStates.noticeExpiredSessions(ids);
  }

  /** The ISV's own session (null: internal support, any); another's, or none, is 404. */
  async get(isvId: string | null, id: string): Promise<ConnectSession> {
    const s = isUuid(id) ? await this.store.sessionOfIsv(isvId, id) : null;
    if (!s) throw ServiceError.notFound('Connect session');
    await this.noticeExpired([s]);
    return s;
  }

  async cancel(isvId: string, id: string): Promise<ConnectSession> {
    const s = await this.get(isvId, id);
    if (!(await this.store.cancelPending(s.id))) {
      const now = stateOf(await this.get(isvId, id));
      if (now === 'cancelled') return this.get(isvId, id);
      throw new ServiceError('request_invalid', `The session is ${now === 'pending' ? 'being completed' : now}; it can no longer be cancelled.`, { details: { state: now } });
    }
    const done = await this.get(isvId, id);
    await this.step(done, 'connect.session.cancelled', 'ok', { by: 'isv' });
    return done;
  }

  /** The session as the ISV reads it; `facts` names the kind and connector of its connections (`connectionFacts`). */
  view(s: ConnectSession, facts: ReadonlyMap<string, { kind: string; connector: string }> = new Map()): ConnectSessionAnswer {
    return {
      id: s.id, state: stateOf(s), tenant_id: s.tenantId, msp_name: s.mspName, kinds: s.kinds, requested_grants: s.requestedGrants,
      redirect_url: s.redirectUrl, created_at: toRfc3339(s.createdAt)!, updated_at: toRfc3339(s.updatedAt)!, expires_at: toRfc3339(s.expiresAt)!, completed_at: toRfc3339(s.completedAt),
      connections: s.connectionIds.map((id) => ({ id, ...(facts.get(id) ?? { kind: '', connector: '' }) })),
      granted: s.granted,
      missing_permissions: s.missingPermissions as unknown as MissingPermission[],
    };
  }

  /** The kind and connector of the sessions' connections, for `view`. */
  async connectionFacts(sessions: ConnectSession[]): Promise<Map<string, { kind: string; connector: string }>> {
    const ids = [...new Set(sessions.flatMap((s) => s.connectionIds))];
    const rows = await this.store.connectionsWithIds(ids);
    return new Map(rows.map((c) => [c.id, { kind: c.kind, connector: c.connector }]));
  }

  // ---- the connect page ------------------------------------------------------------------------

  /** The session a page token names, when it may still be used; a refusal in words otherwise. */
  async byToken(token: string): Promise<ConnectSession> {
    const s = /^[A-Za-z0-9_-]{43}$/.test(token) ? await this.store.sessionByTokenHash(sha256(token)) : null;
    if (!s) throw new ConnectPageRefusal(404, 'This link is not valid', 'Check that you copied the whole link, or ask for a new one.');
    // Compared in constant time as well (the lookup was by hash, so this only guards against a collision of bugs).
    if (!timingSafeEqual(Buffer.from(s.tokenHash), Buffer.from(sha256(token)))) throw new ConnectPageRefusal(404, 'This link is not valid', 'Ask for a new one.');
    const state = stateOf(s);
    if (s.state === 'completing') throw new ConnectPageRefusal(409, 'Already connecting', 'This link is being used to connect right now.');
    if (state === 'completed') throw new ConnectPageRefusal(410, 'This link has been used', 'Its systems are connected. To change or repair a connection, ask for a new link.');
    if (state === 'cancelled') throw new ConnectPageRefusal(410, 'This link was cancelled', 'Ask for a new one.');
    if (state === 'expired') throw new ConnectPageRefusal(410, 'This link has expired', 'Links work for a limited time. Ask for a new one.');
    return s;
  }

  async isvName(s: ConnectSession): Promise<string> {
    // A repair session is the MSP's own: no ISV asks anything there.
    if (!s.isvId) return 'your console';
    return (await this.store.isvName(s.isvId)) ?? 'An ISV';
  }

  /**
   * The console's Reconnect: a repair session of the tenant's own for one connection, no ISV involved;
   * the same page, the same Test and permission checks; Connect renews the connection's keys in place
   * (its records and every ISV's grants on it stay). Valid for an hour; the caller sends the person to it.
   */
  async startRepair(tenantId: string, connectionId: string, by: { personId: string | null; email: string | null }): Promise<{ token: string; expiresAt: Date }> {
    const c = isUuid(connectionId) ? await this.store.connectionOfTenant(tenantId, connectionId) : null;
    if (!c) throw ServiceError.notFound('Connection');
    const token = randomBytes(32).toString('base64url');
    const session = await this.store.insertSession({
      isvId: null, tenantId, repairConnectionId: c.id, mspName: null, kinds: [c.kind], requestedGrants: [], redirectUrl: null,
      tokenHash: sha256(token), state: 'pending', expiresAt: new Date(Date.now() + 3600_000), completedAt: null, cancelledAt: null, draftSealed: null,
      draftInfo: {}, oauthStateHash: null, progressHash: null, connectionIds: [], granted: [], missingPermissions: [], steps: [],
    });
    await this.step(session, 'connect.repair.started', 'ok', { by: 'msp', actor: { kind: by.personId ? 'person' : 'msp_key', id: by.personId, email: by.email }, connection_id: c.id, connector: c.connector });
    return { token, expiresAt: session.expiresAt };
  }

  async tenantName(s: ConnectSession): Promise<string | null> {
    if (!s.tenantId) return s.mspName;
    return this.store.tenantName(s.tenantId);
  }

  /**
   * The person who may decide on this page, from the browser's console session: on an existing tenant
   * an owner or admin of it, signed in; anyone else (the ISV that holds the link included) may read what
   * is asked and save nothing. A new tenant's page has no member yet: null, its completer names themselves.
   */
  async deciderOf(s: ConnectSession, session: PersonSession | null): Promise<PageDecider | null> {
    if (!s.tenantId) return null;
    if (this.mayDecide(s, session)) return { kind: 'member', personId: session!.person!.id, email: session!.person!.email };
    const name = (await this.tenantName(s)) ?? 'this MSP';
    throw new ConnectPageRefusal(403, 'Sign in to continue', `Only an owner or admin of ${name}, signed in, can connect or repair its systems. Nothing was saved.`);
  }

  /** Whether the browser's session may decide on this page: always on a new tenant's; on an existing one, its signed-in owner or admin. */
  mayDecide(s: ConnectSession, session: PersonSession | null): boolean {
    if (!s.tenantId) return true;
    const org = session?.organisation;
    return Boolean(session?.person && org?.kind === 'tenant' && org.id === s.tenantId && session.role && DECIDING_ROLES.has(session.role));
  }

  /** The tenant's current connections (what the page shows before anything is decided; never a credential). */
  async currentConnections(s: ConnectSession): Promise<{ id: string; kind: string; connector: string; baseUrl: string }[]> {
    if (!s.tenantId) return [];
    const rows = await this.store.connectionsOfTenant(s.tenantId);
    return rows.map((c) => ({ id: c.id, kind: c.kind, connector: c.connector, baseUrl: c.baseUrl }));
  }

  /** The connectors the page offers for a kind: every one that can fill it, or a repair session's own. */
  async connectorsOf(s: ConnectSession, kind: string): Promise<string[]> {
    if (!s.repairConnectionId) return this.connectorsFor(kind);
    const c = await this.store.connection(s.repairConnectionId);
    return c ? [c.connector] : [];
  }

  /** Connectors that can fill a kind. */
  connectorsFor(kind: string): string[] {
    return CONNECTOR_NAMES.filter((n) => readConnector(n).kind === kind);
  }

  private drafts(s: ConnectSession): Record<string, Draft> {
    return s.draftSealed ? this.deps.box.openJson<Record<string, Draft>>(s.draftSealed) : {};
  }

  infoOf(s: ConnectSession): Record<string, DraftInfo> {
    return s.draftInfo as unknown as Record<string, DraftInfo>;
  }

  private async saveDrafts(s: ConnectSession, drafts: Record<string, Draft>, info: Record<string, DraftInfo>, extra: Partial<ConnectSession> = {}): Promise<void> {
    await this.store.updatePending(s.id, {
      draftSealed: this.deps.box.sealJson(drafts), draftInfo: info as never, ...(extra as object),
    });
  }

  /**
   * Test: the credentials and base URL are checked (422 in words), the connector's probe is one
   * authenticated call, then its declared permission checks; the draft is kept sealed for Connect.
   */
  async test(s: ConnectSession, kind: string, connector: string, baseUrl: string, given: Record<string, string>, decider: PageDecider | null = null): Promise<DraftInfo> {
    if (!s.kinds.includes(kind)) throw new ServiceError('validation', `This link does not ask for a ${kind}.`);
    if (!(await this.connectorsOf(s, kind)).includes(connector)) throw new ServiceError('validation', 'Choose one of the systems listed.');
    const drafts = this.drafts(s);
    // Testing the same keys again keeps an authorisation made with them (its refresh token is no form field).
    const previous = drafts[kind]?.connector === connector ? drafts[kind].credentials : null;
    const same = previous != null && capabilitiesOf(connector).connect.fields.every((f) => (given[f.name] ?? '') === (previous[f.name] ?? ''));
    const merged: Record<string, string> = { ...(same ? previous : {}), ...given };
    const checked = await checkedConnectionInput(this.deps, connector, baseUrl, merged);
    await testConnection(connector, checked.baseUrl, checked.credentials);
    const info = await this.permissionInfo(connector, checked.baseUrl, checked.credentials);
    drafts[kind] = { connector, baseUrl: checked.baseUrl, credentials: checked.credentials, oauth: null };
    const all = { ...this.infoOf(s), [kind]: info };
    await this.saveDrafts(s, drafts, all);
    await this.step(s, 'connect.credentials.tested', 'ok', { by: 'msp', via: 'connect', ...actorDetail(decider), kind, connector, missing: info.permissions.filter((p) => p.ok === false).map((p) => p.vendorTerms) });
    return info;
  }

  private async permissionInfo(connector: string, baseUrl: string, credentials: Record<string, string>): Promise<DraftInfo> {
    const decl = capabilitiesOf(connector).connect;
    let findings: PermissionFinding[] = [];
    let failure: string | null = null;
    if (decl.checkPermissions) {
      try {
        findings = await decl.checkPermissions({ baseUrl, credentials, statusMapping: {}, since: null, http: this.deps.http });
      } catch (err) {
        failure = `could not be checked: ${(err as Error).message.slice(0, 200)}`;
      }
    }
    return {
      connector, base_url: baseUrl, tested_at: new Date().toISOString(),
      authorised: decl.oauth ? Boolean(credentials[decl.oauth.refreshCredential]) : false,
      permissions: decl.permissions.map((p) => {
        const f = findings.find((x) => x.id === p.id);
        // What reading needs, when nothing else checks it, the connection test has just proven.
        if (!f && p.capability === 'read' && !failure) return { ...p, ok: true, detail: 'the connection test read it' };
        return { ...p, ok: f?.ok ?? null, detail: f?.detail ?? failure ?? (decl.checkPermissions ? null : p.checkedBy) };
      }),
    };
  }

  /** The callback URL registered at the vendor for a connector's OAuth. */
  callbackUrl(connector: string): string {
    return `${this.deps.config.publicUrl}/connect/oauth/${connector}/callback`;
  }

  /** After a successful Test of an OAuth connector: the vendor's authorize URL, with PKCE and a one-time state. */
  async startOAuth(s: ConnectSession, kind: string, decider: PageDecider | null = null): Promise<string> {
    const fresh = await this.store.session(s.id);
    const drafts = this.drafts(fresh);
    const draft = drafts[kind];
    const oauth = draft ? capabilitiesOf(draft.connector).connect.oauth : undefined;
    if (!draft || !oauth) throw new ServiceError('validation', 'Test the connection first.');
    const { verifier, challenge } = pkcePair();
    const state = randomBytes(32).toString('base64url');
    const redirectUri = this.callbackUrl(draft.connector);
    drafts[kind] = { ...draft, oauth: { verifier, redirectUri } };
    await this.saveDrafts(fresh, drafts, this.infoOf(fresh), { oauthStateHash: sha256(state) });
    await this.step(fresh, 'connect.oauth.started', 'ok', { by: 'msp', via: 'connect', ...actorDetail(decider), kind, connector: draft.connector });
    return authorizeUrl(draft.baseUrl, oauth, draft.credentials[oauth.clientIdCredential], redirectUri, challenge, state);
  }

  /**
   * The vendor sent the browser back: the state names the session (once), the code is exchanged with
   * the PKCE verifier, and the refresh token joins the sealed draft. `resume` is the page token the
   * browser that started it carries (a cookie), so a callback cannot be replayed into another session.
   */
  async finishOAuth(connector: string, q: { state: string; code: string; error: string; errorDescription: string }, resume: string): Promise<{ session: ConnectSession; ok: boolean; message: string }> {
    const s = q.state ? await this.store.sessionByOAuthStateHash(sha256(q.state)) : null;
    if (!s || !resume || s.tokenHash !== sha256(resume)) throw new ConnectPageRefusal(400, 'This sign-in cannot be used', 'Start again from your connect link.');
    await this.byToken(resume);
    await this.store.updateSession(s.id, { oauthStateHash: null });
    const drafts = this.drafts(s);
    const kind = Object.keys(drafts).find((k) => drafts[k].connector === connector && drafts[k].oauth);
    const draft = kind ? drafts[kind] : undefined;
    const oauth = draft ? capabilitiesOf(connector).connect.oauth : undefined;
    if (!kind || !draft || !draft.oauth || !oauth) throw new ConnectPageRefusal(400, 'This sign-in cannot be used', 'Start again from your connect link.');
    if (q.error || !q.code) {
      await this.step(s, 'connect.oauth.refused', 'refused', { by: 'msp', via: 'connect', kind, connector, error: q.error.slice(0, 100) });
      return { session: s, ok: false, message: `${capabilitiesOf(connector).connect.title} did not authorise: ${q.errorDescription || q.error || 'no code'}.` };
    }
    const tokens = await exchangeCode(this.deps.http, draft.baseUrl, oauth, draft.credentials, q.code, draft.oauth.verifier, draft.oauth.redirectUri);
    if (!tokens.ok) {
      await this.step(s, 'connect.oauth.refused', 'refused', { by: 'msp', via: 'connect', kind, connector, error: tokens.error.slice(0, 200) });
      return { session: s, ok: false, message: tokens.error };
    }
    const credentials = { ...draft.credentials, [oauth.refreshCredential]: tokens.refreshToken };
    drafts[kind] = { ...draft, credentials, oauth: null };
    const info = { ...this.infoOf(s), [kind]: await this.permissionInfo(connector, draft.baseUrl, credentials) };
    await this.saveDrafts(s, drafts, info);
    await this.step(s, 'connect.oauth.authorised', 'ok', { by: 'msp', via: 'connect', kind, connector });
    return { session: s, ok: true, message: `${capabilitiesOf(connector).connect.title} authorised.` };
  }

  /**
   * Connect: spends the token first (pending -> completing, one winner), then creates the tenant or
   * finds it, adds or repairs each tested connection, sets the chosen grants (never one the
   * permissions rule out), issues the tenant's MSP key when it has none, starts the first sync.
   * A failure hands the token back (pending) with nothing half-claimed.
   */
  async complete(token: string, chosen: Map<string, string[]>, address: string, decider: PageDecider, placements: Map<string, Placement> = new Map()): Promise<{ session: ConnectSession; mspKey: string | null; progressKey: string; owner: FirstOwner | null }> {
    const s = await this.byToken(token);
    const drafts = this.drafts(s);
    const info = this.infoOf(s);
    const kinds = s.kinds.filter((k) => drafts[k]);
    if (!kinds.length) throw new ServiceError('validation', 'Test at least one system before you connect.');
    if ((decider.kind === 'member') !== (s.tenantId != null)) throw new ConnectPageRefusal(403, 'Sign in to continue', 'Only an owner or admin of this MSP, signed in, can connect its systems. Nothing was saved.');
    const firstOwner = decider.kind === 'first_owner' ? { name: personName(decider.name), email: normalEmail(decider.email) } : null;
    if (firstOwner && (!firstOwner.name || !plausibleEmail(firstOwner.email))) {
      throw new ServiceError('validation', 'Give your name and your work email: you become the first owner of this MSP in its console.');
    }
    await this.checkPlacements(s, kinds, placements);
    if (!(await this.store.claimForCompletion(s.id))) throw new ConnectPageRefusal(410, 'This link has been used', 'Ask for a new one.');
    const actor = decider.kind === 'member' ? { kind: 'person', id: decider.personId, email: decider.email } : { kind: 'person', id: null, email: firstOwner!.email };
    const who = { by: 'msp', via: 'connect', actor, session_id: s.id, address };
    try {
      const { tenantId, createdTenant } = await this.tenantToConnect(s);
      const connected = await this.connectTested(s, tenantId, { kinds, drafts, info, chosen, placements }, who);
      await this.removeReplaced(s, tenantId, connected.replaced, who);
      const owner = firstOwner ? await this.makeFirstOwner(tenantId, firstOwner, who) : null;
      const mspKey = await this.mspKeyIfNone(s, tenantId, who);
      const progressKey = await this.markCompleted(s, tenantId, createdTenant, connected, who);
      // The first sync, now (the schedule may be off or far away).
      for (const c of connected.made) {
        await this.deps.queue.add('sync.connection', { tenantId, connectionId: c.id, full: true }, { jobId: `sync-${c.id}-connect-${s.id}`, attempts: 1 });
      }
      await this.deps.access.invalidate();
      return { session: await this.store.session(s.id), mspKey, progressKey, owner };
    } catch (err) {
      await this.store.releaseClaim(s.id);
      throw err;
    }
  }

  /** Where each tested system goes: a new system never silently replaces another of its kind. */
  private async checkPlacements(s: ConnectSession, kinds: string[], placements: Map<string, Placement>): Promise<void> {
    const existingBefore = s.tenantId ? await this.store.connectionsOfTenant(s.tenantId) : [];
    // A repair session renews its one connection: nothing else to place.
    if (s.repairConnectionId) for (const kind of kinds) placements.set(kind, { replace: s.repairConnectionId });
    for (const kind of kinds) {
      const place = placements.get(kind);
      const same = existingBefore.filter((c) => c.kind === kind);
      if (!same.length) continue;
      // A new system never silently replaces another: with one of its kind there already, the person says which.
      if (!place) throw new ServiceError('validation', `This MSP already has a ${kind.toUpperCase()}: choose whether the one you tested is added beside it or replaces it.`, { details: { field: `place_${kind}` } });
      if (place !== 'new' && !same.some((c) => c.id === place.replace)) throw new ServiceError('validation', `Choose one of this MSP's current ${kind.toUpperCase()} connections to replace.`, { details: { field: `place_${kind}` } });
    }
  }

  /** The session's tenant, created for a new MSP. */
  private async tenantToConnect(s: ConnectSession): Promise<{ tenantId: string; createdTenant: boolean }> {
    if (s.tenantId) return { tenantId: s.tenantId, createdTenant: false };
    const name = s.mspName ?? 'New MSP';
    const slug = `${name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'msp'}-${randomBytes(3).toString('hex')}`;
    return { tenantId: (await this.deps.admin.createTenant(name, slug.replace(/^-/, 'm'))).id, createdTenant: true };
  }

  /**
   * Each tested system added, or repairing the connection it replaces (same connector), with the chosen
   * grants (never one the permissions rule out); what the permissions leave off is noted.
   */
  private async connectTested(
    s: ConnectSession, tenantId: string, tested: { kinds: string[]; drafts: Record<string, Draft>; info: Record<string, DraftInfo>; chosen: Map<string, string[]>; placements: Map<string, Placement> },
    who: Record<string, unknown>,
  ) {
    const { kinds, drafts, info, chosen, placements } = tested;
    const existing = await this.store.connectionsOfTenant(tenantId);
    const made: Connection[] = [];
    const replaced: Connection[] = [];
    const granted: { connection_id: string; keys: string[] }[] = [];
    const missing: MissingPermission[] = [];
    for (const kind of kinds) {
      const d = drafts[kind];
      const place = placements.get(kind) ?? 'new';
      const target = place === 'new' ? undefined : existing.find((c) => c.id === place.replace);
      // Replacing with the same system repairs it in place (its records and grants stay); another system takes its place.
      const repair = target && target.connector === d.connector ? target : undefined;
      if (target && !repair) replaced.push(target);
      const { connection } = repair
        ? await changeConnection(this.deps, repair, { baseUrl: d.baseUrl, credentials: d.credentials, test: false })
        : await addConnection(this.deps, { tenantId, kind: kind as ConnectionKind, connector: d.connector, baseUrl: d.baseUrl, credentials: d.credentials, test: false });
      made.push(connection);
      const blocked = blockedGrants(kind as ConnectionKind, info[kind]);
      const offered = new Set<string>(grantKeysFor(kind as ConnectionKind));
      const keys = (chosen.get(kind) ?? []).filter((k): k is GrantKey => isGrantKey(k) && offered.has(k) && s.requestedGrants.includes(k) && !blocked.has(k));
      // A repair session has no ISV: every ISV's grants on the connection stay as they are.
      if (s.isvId) await this.deps.admin.setGrant(s.isvId, connection.id, keys);
      granted.push({ connection_id: connection.id, keys: [...keys].sort() });
      for (const p of info[kind]?.permissions ?? []) {
        if (p.ok !== false) continue;
        missing.push({
          kind, connector: d.connector, permission: p.vendorTerms, capability: p.capability, detail: p.detail,
          grants: [...blocked.entries()].filter(([, why]) => why.needs.some((w) => w.id === p.id)).map(([k]) => k).sort(),
        });
      }
      await this.audit(tenantId, s.isvId, repair ? 'connect.connection.repaired' : 'connect.connection.added', connection.id, { ...who, kind, connector: d.connector });
      await this.audit(tenantId, s.isvId, 'connect.grants.set', connection.id, { ...who, keys: [...keys].sort() });
    }
    return { made, replaced, granted, missing };
  }

  /** The connections another system replaced: removed, with their records. */
  private async removeReplaced(s: ConnectSession, tenantId: string, replaced: Connection[], who: Record<string, unknown>): Promise<void> {
    const tenants = new TenantsStore(this.ds);
    for (const gone of replaced) {
      await tenants.removeConnection(gone, (m) => this.deps.connectionStates.removedIn(m, gone));
      await this.audit(tenantId, s.isvId, 'connect.connection.replaced', null, { ...who, removed: gone.id, kind: gone.kind, connector: gone.connector });
    }
  }

  /** The tenant's MSP key, issued (and shown once) when it has no live one. */
  private async mspKeyIfNone(s: ConnectSession, tenantId: string, who: Record<string, unknown>): Promise<string | null> {
    const liveKeys = (await this.store.mspKeysOf(tenantId)).filter((k) => !k.revokedAt);
    if (liveKeys.length) return null;
    const mspKey = (await this.deps.admin.issueMspKey(tenantId, 'issued by a connect session')).key;
    await this.audit(tenantId, s.isvId, 'connect.msp_key.issued', null, who);
    return mspKey;
  }

  /** The session completed, its steps in the tenant's log; the key of its progress page. */
  private async markCompleted(s: ConnectSession, tenantId: string, createdTenant: boolean, connected: { made: Connection[]; granted: { connection_id: string; keys: string[] }[]; missing: MissingPermission[] }, who: Record<string, unknown>): Promise<string> {
    const { made, granted, missing } = connected;
    const progressKey = randomBytes(32).toString('base64url');
    // The steps of a session whose tenant did not exist yet go into its log now.
    if (createdTenant) for (const st of s.steps) await this.audit(tenantId, s.isvId, String(st.action), null, (st.detail ?? {}) as Record<string, unknown>, st.outcome as 'ok');
    await this.store.updateSession(s.id, {
      state: 'completed', completedAt: new Date(), tenantId, connectionIds: made.map((c) => c.id), granted,
      missingPermissions: missing as never, progressHash: sha256(progressKey), draftSealed: null, steps: [],
    });
    await this.audit(tenantId, s.isvId, 'connect.session.completed', null, { ...who, connections: made.map((c) => c.id), tenant_created: createdTenant });
    await this.deps.connectionStates.sessionCompleted({ id: s.id, isvId: s.isvId, tenantId, connectionIds: made.map((c) => c.id) }, createdTenant)
      .catch((err: Error) => this.deps.logger.error({ err: err.message, sessionId: s.id }, 'connect_session.completed was not written'));
    return progressKey;
  }

  /**
   * A new tenant's first owner: a person not known yet is created, made its owner and signed in by the
   * page; an address that already has an account is invited instead (signing in as an existing person
   * takes their own mail, never a form on a link someone else holds).
   */
  private async makeFirstOwner(tenantId: string, who: { name: string; email: string }, audit: Record<string, unknown>): Promise<FirstOwner> {
    const known = await this.deps.peopleStore.personByEmail(who.email);
    const org = { kind: 'tenant' as const, id: tenantId };
    if (known) {
      await this.deps.people.invite(org, who.email, 'owner', { kind: 'operator', id: 'connect-session' }, null);
      await this.audit(tenantId, null, 'connect.owner.invited', null, { ...audit, email: who.email });
      return { kind: 'invited', email: who.email };
    }
    const person = await this.deps.peopleStore.ensurePerson(who.email, who.name);
    await this.deps.peopleStore.addMembership(person.id, org, 'owner');
    await this.audit(tenantId, null, 'connect.owner.added', null, { ...audit, actor: { kind: 'person', id: person.id, email: person.email } });
    return { kind: 'signed_in', personId: person.id, email: person.email };
  }

  /** The first sync of a completed session, per connection and resource (the completion page's key). */
  async progress(progressKey: string): Promise<{ session: ConnectSession; done: boolean; connections: { id: string; kind: string; connector: string; resources: { resource: string; records: number; status: string }[] }[] }> {
    const s = /^[A-Za-z0-9_-]{43}$/.test(progressKey) ? await this.store.sessionByProgressHash(sha256(progressKey)) : null;
    if (!s || !s.completedAt) throw new ConnectPageRefusal(404, 'Nothing to show', 'This progress link is not valid.');
    const since = s.completedAt.getTime() - 1000;
    const connections = await this.store.connectionsWithIds(s.connectionIds);
    const states = await this.store.syncStatesOf(connections.map((c) => c.id));
    let done = connections.length > 0;
    const out = connections.map((c) => ({
      id: c.id, kind: c.kind, connector: c.connector,
      resources: readConnector(c.connector).resources.map((resource) => {
        const st = states.find((x) => x.connectionId === c.id && x.resource === resource);
        const fresh = st && (st.lastAttemptAt?.getTime() ?? 0) >= since;
        const status = !fresh ? 'waiting' : st.lastStatus === 'running' ? 'running' : st.lastStatus === 'ok' ? 'done' : st.lastStatus === 'failed' ? 'failed' : 'waiting';
        if (status !== 'done' && status !== 'failed') done = false;
        return { resource, records: fresh ? st.recordsSeen : 0, status };
      }),
    }));
    return { session: s, done, connections: out };
  }

  /**
   * What the completion page shows once (the MSP key, where the console is), kept for the browser that
   * completed the session and nobody else: sealed under a key derived from a random secret that only that
   * browser holds (a cookie) and from this deployment's key, so what is at rest is never the key in plain
   * text and opens only with the cookie. Kept in the spent session's `draft_sealed` (its credentials draft
   * was cleared at completion) for SHOWN_AGAIN_MS after completion, then forgotten; `shown.spent` remains
   * so that the page can say the key was shown. Returns the cookie's secret.
   */
  async keepShown(s: ConnectSession, shown: ShownOnce): Promise<string> {
    const secret = randomBytes(32).toString('base64url');
    const sealed = this.shownBox(s, secret).sealJson(shown);
    await this.store.updateCompleted(s.id, { draftSealed: `${SHOWN_PREFIX}${shown.mspKey ? 'k' : 'n'}.${sealed}` });
    return secret;
  }

  /**
   * The completion page's once-shown things again: for the browser holding `secret`, within
   * SHOWN_AGAIN_MS of completion. `keyShown` says whether an MSP key was shown on this page at all (the
   * page then says so and how to rotate it); past the window what was kept is forgotten.
   */
  async shownAgain(s: ConnectSession, secret: string | null): Promise<{ again: ShownOnce | null; keyShown: boolean }> {
    const held = s.draftSealed;
    if (s.state !== 'completed' || !held?.startsWith(SHOWN_PREFIX)) return { again: null, keyShown: false };
    const keyShown = held.startsWith(`${SHOWN_PREFIX}k`);
    if (held === SHOWN_SPENT || !s.completedAt) return { again: null, keyShown };
    if (Date.now() - s.completedAt.getTime() > SHOWN_AGAIN_MS) {
      await this.forgetShown(s);
      return { again: null, keyShown };
    }
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) return { again: null, keyShown };
    try {
      return { again: this.shownBox(s, secret).openJson<ShownOnce>(held.slice(SHOWN_PREFIX.length + 2)), keyShown };
    } catch {
      // Another browser's cookie, or none of ours: the secrets stay sealed.
      return { again: null, keyShown };
    }
  }

  /** Past its window, what the completion page kept is forgotten (only that a key was shown remains). */
  async forgetShown(s: ConnectSession): Promise<void> {
    const held = s.draftSealed;
    if (!held?.startsWith(SHOWN_PREFIX) || held === SHOWN_SPENT || !s.completedAt || Date.now() - s.completedAt.getTime() <= SHOWN_AGAIN_MS) return;
    await this.store.updateCompleted(s.id, { draftSealed: held.startsWith(`${SHOWN_PREFIX}k`) ? SHOWN_SPENT : null });
  }

  private shownBox(s: ConnectSession, secret: string): SecretBox {
    const key = Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'base64url'), this.deps.box.digest('connect-shown', s.id), 'connect-shown-once', 32));
    return new SecretBox(key);
  }

  /** A credential the vendor rotated while a connection used it: sealed into that connection. */
  async keepRotatedCredential(change: CredentialRotation): Promise<void> {
    for (const c of await this.store.connectionsAt(change.connector, change.baseUrl)) {
      const credentials = this.deps.admin.credentialsOf(c);
      if (credentials[change.credential] !== change.previous) continue;
      await this.deps.admin.saveConnection(c, { credentials: { ...credentials, [change.credential]: change.next } });
    }
  }

  // ---- audit -----------------------------------------------------------------------------------

  private async audit(tenantId: string, isvId: string | null, action: string, connectionId: string | null, detail: Record<string, unknown>, outcome: 'ok' | 'refused' = 'ok'): Promise<void> {
    await this.deps.audit.write({ tenantId, isvId, action, outcome, connectionId, subjectRef: null, detail });
  }

  /** A step of the session: into the tenant's audit log, or kept until the tenant exists. */
  private async step(s: ConnectSession, action: string, outcome: 'ok' | 'refused', detail: Record<string, unknown>): Promise<void> {
    const full = { ...detail, session_id: s.id };
    if (s.tenantId) return this.audit(s.tenantId, s.isvId, action, null, full, outcome);
    // Kept until Connect creates the tenant: with who did it and through which surface, as they are now.
    await this.store.appendStep(s.id, { action, outcome, detail: auditDetailOf(full), at: new Date().toISOString() });
  }
}

/** The actor of a page step: the signed-in member deciding (an existing tenant); before Connect a new tenant's person is not known yet. */
function actorDetail(decider: PageDecider | null): Record<string, unknown> {
  return decider?.kind === 'member' ? { actor: { kind: 'person', id: decider.personId, email: decider.email } } : {};
}

/** How long a reload of the completion page, in the browser that completed it, shows what it showed once. */
export const SHOWN_AGAIN_MS = 10 * 60_000;
const SHOWN_PREFIX = 'shown.';
const SHOWN_SPENT = 'shown.k.spent';

/** What the completion page shows once: the new MSP key (if one was issued) and where the console is for this person. */
export interface ShownOnce { mspKey: string | null; owner: 'signed_in' | 'invited' | 'member' | null }

/** What became of a new tenant's first owner: signed in now (a new person), or invited (an address that has an account). */
export type FirstOwner = { kind: 'signed_in'; personId: string; email: string } | { kind: 'invited'; email: string };

/** A redirect URL the page may send a person to: https only, no credentials in it. */
function checkRedirectUrl(raw: string): void {
  let url: URL;
  try { url = new URL(raw); } catch { throw new ServiceError('validation', 'redirect_url must be an absolute https URL.', { details: { field: 'redirect_url' } }); }
  if (url.protocol !== 'https:' || url.username || url.password) throw new ServiceError('validation', 'redirect_url must be an https URL without credentials.', { details: { field: 'redirect_url' } });
}

/** Where the page sends the MSP when done: the ISV's URL with the session id and state added. */
export function redirectTarget(s: ConnectSession): string | null {
  if (!s.redirectUrl) return null;
  const url = new URL(s.redirectUrl);
  url.searchParams.set('connect_session_id', s.id);
  url.searchParams.set('state', 'completed');
  return url.href;
}
