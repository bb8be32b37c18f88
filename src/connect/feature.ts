/**
 * Connect sessions (docs/architecture.md, Connect sessions and console): the ISV's four operations, and
 * the connect page the MSP completes them on (connect-routes.ts). Our addition to the interface
 * (Authentication 6: "The MSP pastes its vendor keys once during connect ... A missing permission is
 * named in the connect flow").
 */
import type { FeatureModule } from '../operations/feature-module';
import { isvOf } from '../access/access.service';
import { isvOfCaller, personOf } from '../access/caller';
import { tenantOf } from '../operations/operation';
import { onCredentialRotated } from '../connectors/credential-rotation';
import { operationsUsing } from '../operations/operation';
import type { SandboxService } from '../sandbox/sandbox.service';
import { envelopeOf, pageOfAll, pageQuery, updatedSince } from '../shared/paging';
import { z } from '../shared/request';
import { connectRouter } from './connect-routes';
import type { PeopleSessions } from '../people/sessions';
import type { ConnectSessions } from './connect-sessions.service';
import {
  CONNECT_SESSIONS_CURSOR, ConnectSessionList, ConnectSessionPath, ConnectSessionView, CreateConnectSessionBody, CreatedConnectSession, ReconnectPath, RepairSession,
} from './connect.schemas';

/** The services this feature's operations use, and all they see of the service graph (src/operations/feature-module.ts). */
export interface ConnectServices {
  connectSessions: ConnectSessions;
  /** The console session of the browser on the connect page: who may decide there (src/people). */
  peopleSessions: PeopleSessions;
  sandbox: SandboxService | null;
}
const defineOperation = operationsUsing<ConnectServices>();

const tag = 'Connect';
const NOTE = 'Our addition to the interface (its Authentication 6: the MSP pastes its vendor keys once during connect, and a missing permission is named there).';

const createSession = defineOperation({
  name: 'create_connect_session', kind: 'mutation', summary: 'Open a connect session for an MSP', tag, role: 'isv', grant: 'none',
  description: `Answers a one-time link (\`connect_url\`) to send the MSP. On that page the MSP picks its systems, pastes the keys each vendor needs (or signs in at the vendor where the vendor needs a user, such as an RMM that runs scripts only for one), sees each missing vendor permission named, chooses your grants and presses Connect; then the first sync runs. \`msp_name\` makes a new tenant; \`tenant_id\` adds or repairs connections of a tenant you see (their data is kept; a tenant you do not see is 404). The token is 32 random bytes stored only as a hash; it works once and expires (default 24 h, at most 7 days). ${NOTE}`,
  http: { method: 'post', path: '/connect-sessions', documented: false },
  body: CreateConnectSessionBody,
  responses: [{ status: 201, schema: CreatedConnectSession, description: 'The session\'s id and its link (in this answer only); GET /connect-sessions/{session_id} answers the rest.' }],
  errors: ['validation', 'role_required'],
  handle: async ({ body }, ctx) => {
    const svc = ctx.services.connectSessions;
    const { session, token } = await svc.create(ctx.caller, isvOf(ctx.caller), body);
    return { id: session.id, state: 'pending' as const, connect_url: svc.connectUrl(token), expires_at: svc.view(session).expires_at };
  },
});

const listSessions = defineOperation({
  name: 'list_connect_sessions', kind: 'query', summary: 'Your connect sessions', tag, role: 'isv', grant: 'none',
  description: `Oldest first, with their state (pending, completed, expired, cancelled). Never includes a link. (Internal support with the admin token sees every ISV's.) ${NOTE}`,
  http: { method: 'get', path: '/connect-sessions', documented: false },
  query: pageQuery(CONNECT_SESSIONS_CURSOR, { updatedSince: true }),
  responses: [{ status: 200, schema: ConnectSessionList, description: 'One page of your connect sessions.' }],
  errors: ['role_required'],
  handle: async ({ query }, ctx) => {
    const svc = ctx.services.connectSessions;
    const page = pageOfAll(updatedSince(await svc.ofIsv(isvOfCaller(ctx.caller)), query, (s) => s.updatedAt), query, CONNECT_SESSIONS_CURSOR, ['time', 'uuid'], (s) => [s.createdAt.toISOString(), s.id]);
    const facts = await svc.connectionFacts(page.items);
    // `sandbox`: this service runs the sandbox, whose simulators the sessions' links can connect.
    return envelopeOf('/connect-sessions', { items: page.items.map((s) => svc.view(s, facts)), next_cursor: page.next_cursor }, ctx.services.sandbox != null);
  },
});

const getSession = defineOperation({
  name: 'get_connect_session', kind: 'query', summary: 'A connect session', tag, role: 'isv', grant: 'none',
  description: `Poll it to learn when the MSP has connected: \`state\` completed, with the tenant, the connections it made or repaired, the grants you were given and the vendor permissions found missing. Another ISV's session is 404. ${NOTE}`,
  http: { method: 'get', path: '/connect-sessions/{session_id}', documented: false },
  path: ConnectSessionPath, query: z.object({}).strict(),
  responses: [{ status: 200, schema: ConnectSessionView, description: 'The session.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => {
    const svc = ctx.services.connectSessions;
    const s = await svc.get(isvOfCaller(ctx.caller), path.session_id);
    return svc.view(s, await svc.connectionFacts([s]));
  },
});

const cancelSession = defineOperation({
  name: 'cancel_connect_session', kind: 'mutation', summary: 'Cancel a pending connect session', tag, role: 'isv', grant: 'none',
  description: `Its link stops working at once; cancelling a cancelled one again answers it unchanged; a completed or expired one is 422. ${NOTE}`,
  http: { method: 'delete', path: '/connect-sessions/{session_id}', documented: false },
  path: ConnectSessionPath,
  responses: [{ status: 200, schema: ConnectSessionView, description: 'The cancelled session.' }],
  errors: ['request_invalid', 'role_required'],
  handle: async ({ path }, ctx) => {
    const svc = ctx.services.connectSessions;
    const s = await svc.cancel(isvOf(ctx.caller), path.session_id);
    return svc.view(s, await svc.connectionFacts([s]));
  },
});

const reconnect = defineOperation({
  name: 'reconnect_connection', kind: 'mutation', summary: 'Repair a connection\'s keys on the connect page (the MSP\'s own session)', tag, role: 'msp',
  description: `MSP key or the MSP console (its health page's Reconnect). Opens a connect session of the tenant's own for one connection, no ISV involved: the same page, the same Test and permission checks; Connect renews the connection's keys in place, keeping its records and every ISV's grants on it. The page saves nothing until an owner or admin of the tenant is signed in on it. ${NOTE}`,
  http: { method: 'post', path: '/tenants/{tenant_id}/connections/{connection_id}/reconnect', documented: false },
  path: ReconnectPath,
  responses: [{ status: 201, schema: RepairSession, description: 'The repair page\'s link, in this answer only.' }],
  errors: ['role_required'],
  handle: async ({ path }, ctx) => {
    const svc = ctx.services.connectSessions;
    const person = personOf(ctx.caller);
    const { token, expiresAt } = await svc.startRepair(tenantOf(ctx).tenant.id, path.connection_id, { personId: person?.id ?? null, email: person?.email ?? null });
    return { connect_url: svc.connectUrl(token), expires_at: expiresAt.toISOString() };
  },
});

export const connectFeature: FeatureModule<ConnectServices> = {
  name: 'connect',
  operations: [createSession, listSessions, getSession, cancelSession, reconnect],
  install(services) {
    // A vendor that rotates a refresh token while we use it: the new one is sealed into its connection.
    const sessions = services.connectSessions;
    onCredentialRotated((change) => sessions.keepRotatedCredential(change));
  },
  mount(app, services) {
    app.use(connectRouter(services.connectSessions.deps, services.connectSessions, services.peopleSessions));
  },
};
