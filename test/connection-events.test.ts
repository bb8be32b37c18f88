/**
 * Connection events (docs/architecture.md, Events and webhooks; src/events/connection-state.ts): one event per
 * change of a connection's state, never one per failed sync; every ISV that sees the tenant gets them with no
 * grant, in the tenant's feed, in the ISV-wide `GET /events` and through the tenant's webhooks;
 * `POST /sandbox/simulate` credentials_revoked / credentials_restored makes the simulator refuse a sandbox
 * connection's credentials over HTTP; connect sessions tell their completion and their expiry once.
 * Syncs are driven directly (no schedule runs in tests).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from './support/service';
import { ConnectPageClient } from './support/connect-page';

let svc: TestService;
let cwId: string;
let receiver: http.Server;
let receiverUrl = '';
const received: any[] = [];

beforeAll(async () => {
  svc = await startTestService({ webhookAllowLoopback: true });
  cwId = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0].id;
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  await svc?.close();
});

const sync = (opts: { resources?: ('tickets' | 'companies')[] } = {}) => svc.services.sync.syncConnection(cwId, opts).then(() => true, () => false);
const feed = async (tenantId: string, key?: string, kind = 'connection') => {
  const res = await svc.api(`/tenants/${tenantId}/connections/events?kind=${kind}&limit=500`, key ? { key } : {});
  expect(res.status).toBe(200);
  return res.body.events as any[];
};
const kinds = (events: any[]) => events.map((e) => e.kind);

describe('connection state changes', () => {
  it('ten failed syncs with 401 give exactly one connection.credentials_failed, and recovery exactly one connection.restored', async () => {
    const before = (await feed(svc.alphaId)).length;
    const cw = svc.services.simulators!.connectwise;
    cw.faults.revokeCredentials('sandbox-alpha');
    try {
      const outcomes: boolean[] = [];
      for (let i = 0; i < 8; i++) outcomes.push(await sync());
      // Two at once (different resources, so they really run side by side): still no second event.
      outcomes.push(...await Promise.all([sync({ resources: ['tickets'] }), sync({ resources: ['companies'] })]));
      expect(outcomes).toEqual(Array(10).fill(false));
    } finally {
      cw.faults.restoreCredentials('sandbox-alpha');
    }
    const failed = (await feed(svc.alphaId)).slice(before);
    expect(kinds(failed)).toEqual(['connection.credentials_failed']);
    expect(failed[0]).toMatchObject({ connection_id: cwId, tenant_id: svc.alphaId, vendor: 'connectwise', previous_status: 'ok', new_status: 'credentials_failing' });
    expect(failed[0].detail.reason).toMatch(/HTTP 401/);

    expect(await sync()).toBe(true);
    expect(await sync()).toBe(true);
    const after = (await feed(svc.alphaId)).slice(before);
    expect(kinds(after)).toEqual(['connection.credentials_failed', 'connection.restored']);
    expect(after[1]).toMatchObject({ connection_id: cwId, previous_status: 'credentials_failing', new_status: 'ok' });
  });

  it('a 403 gives connection.permission_missing, and a vendor error gives connection.sync_failing only once it repeats', async () => {
    const before = (await feed(svc.alphaId)).length;
    const cw = svc.services.simulators!.connectwise;
    cw.faults.inject({ status: 403, times: Infinity, method: 'GET', pathIncludes: '/service/tickets' });
    try {
      expect(await sync()).toBe(false);
      expect(await sync()).toBe(false);
    } finally {
      cw.faults.clear();
    }
    expect(kinds((await feed(svc.alphaId)).slice(before))).toEqual(['connection.permission_missing']);
    expect(await sync()).toBe(true);

    cw.faults.inject({ status: 500, times: Infinity, method: 'GET', pathIncludes: '/service/tickets' });
    try {
      expect(await sync()).toBe(false);
      expect(await sync()).toBe(false);
      expect(kinds((await feed(svc.alphaId)).slice(before))).toEqual(['connection.permission_missing', 'connection.restored']);
      expect(await sync()).toBe(false);
      expect(await sync()).toBe(false);
    } finally {
      cw.faults.clear();
    }
    expect(await sync()).toBe(true);
    expect(kinds((await feed(svc.alphaId)).slice(before))).toEqual([
      'connection.permission_missing', 'connection.restored', 'connection.sync_failing', 'connection.restored',
    ]);
  });
});

describe('simulate, visibility, the ISV-wide feed and webhooks', () => {
  let other: { id: string; key: string };

  beforeAll(async () => {
    // An ISV that sees beta only, with no event grant at all (ticket create on beta's PSA).
    const id = (await svc.graphql('mutation { create_isv(name: "Connection events ISV") { id } }')).data.create_isv.id as string;
    const key = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "events") { key } }', { id })).data.issue_api_key.key as string;
    const betaPsa = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'psa'", [svc.betaId]))[0].id;
    await svc.graphql('mutation($isv: ID!, $c: ID!) { set_grant(isv_id: $isv, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { isv: id, c: betaPsa });
    other = { id, key };
  });

  it('simulate credentials_revoked and credentials_restored give the pair, and the tenant webhook receives them', async () => {
    const hook = await svc.api(`/tenants/${svc.betaId}/ticket-events/webhook`, { method: 'POST', json: { url: `${receiverUrl}/beta` } });
    expect(hook.status).toBe(201);
    const simulate = (kind: string) => svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.betaId, change: { kind } } });
    const revoked = await simulate('credentials_revoked');
    expect(revoked.status).toBe(200);
    expect(kinds(revoked.body.events)).toEqual(['connection.credentials_failed']);
    expect(revoked.body.events[0]).toMatchObject({ tenant_id: svc.betaId, connection_id: revoked.body.connection_id, vendor: 'halopsa' });
    expect(revoked.body.target_id).toBe(revoked.body.connection_id);
    // Still refused: another sync changes nothing.
    expect((await svc.api(`/tenants/${svc.betaId}/sync`, { method: 'POST', json: {} })).status).toBe(200);
    const restored = await simulate('credentials_restored');
    expect(restored.status).toBe(200);
    expect(kinds(restored.body.events)).toEqual(['connection.restored']);
    expect(kinds(await feed(svc.betaId))).toEqual(['connection.credentials_failed', 'connection.restored']);

    const ids = [revoked.body.events[0].id, restored.body.events[0].id];
    for (let i = 0; i < 200 && !ids.every((id) => received.some((r) => r?.id === id)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(received.filter((r) => ids.includes(r?.id)).map((r) => r.kind)).toEqual(['connection.credentials_failed', 'connection.restored']);
  });

  it('an ISV with no event grant sees connection events in the tenant feed, and asks for others in vain', async () => {
    expect(kinds(await feed(svc.betaId, other.key))).toEqual(['connection.credentials_failed', 'connection.restored']);
    const all = await svc.api(`/tenants/${svc.betaId}/connections/events`, { key: other.key });
    expect(all.status).toBe(200);
    expect(all.body.events.every((e: any) => e.kind.startsWith('connection.') || e.kind.startsWith('connect_session.') || e.kind === 'sandbox_reset')).toBe(true);
    expect((await svc.api(`/tenants/${svc.betaId}/connections/events?kind=ticket`, { key: other.key })).body.error?.code ?? 'grant_missing').toBe('grant_missing');
    expect((await svc.api(`/tenants/${svc.alphaId}/connections/events`, { key: other.key })).status).toBe(404);
  });

  it('GET /events lists the events of every tenant the ISV sees with their tenant_id, and none of a tenant it does not see', async () => {
    const mine = await svc.api('/events?kind=connection&limit=500');
    expect(mine.status).toBe(200);
    const tenants = new Set(mine.body.events.map((e: any) => e.tenant_id));
    expect(tenants).toEqual(new Set([svc.alphaId, svc.betaId]));
    expect(mine.body.events.map((e: any) => Number(e.position))).toEqual([...mine.body.events.map((e: any) => Number(e.position))].sort((a, b) => a - b));

    const theirs = await svc.api('/events?limit=500', { key: other.key });
    expect(theirs.status).toBe(200);
    expect(theirs.body.events.length).toBeGreaterThan(0);
    expect(theirs.body.events.every((e: any) => e.tenant_id === svc.betaId)).toBe(true);
    expect(kinds(theirs.body.events).filter((k) => k.startsWith('connection.'))).toEqual(['connection.credentials_failed', 'connection.restored']);
    expect((await svc.api('/events?kind=device', { key: other.key })).status).toBe(403);

    // after=<id> resumes right after that event; a cursor pages the same list.
    const first = await svc.api('/events?kind=connection&limit=1');
    expect(first.body.next_cursor).toBeTruthy();
    const next = await svc.api(`/events?kind=connection&limit=1&cursor=${first.body.next_cursor}`);
    const after = await svc.api(`/events?kind=connection&limit=1&after=${first.body.events[0].id}`);
    expect(next.body.events[0].id).toBe(mine.body.events[1].id);
    expect(after.body.events[0].id).toBe(mine.body.events[1].id);
    // A tenant feed's cursor is not this list's.
    const tenantPage = await svc.api(`/tenants/${svc.alphaId}/connections/events?kind=connection&limit=1`);
    expect((await svc.api(`/events?cursor=${tenantPage.body.next_cursor}`)).status).toBe(422);

    // The MSP key reads its own tenant's events here.
    const msp = await svc.api('/events?kind=connection&limit=500', { key: svc.betaMspKey });
    expect(msp.status).toBe(200);
    expect(new Set(msp.body.events.map((e: any) => e.tenant_id))).toEqual(new Set([svc.betaId]));
  });

  it('a connect link that expires unused gives connect_session.expired once, to its ISV alone; one completed, connections added and removed tell so', async () => {
    const created = await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Late MSP', kinds: ['psa'], requested_grants: [] } });
    expect(created.status).toBe(201);
    await svc.services.ds.query(`UPDATE connect_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [created.body.id]);
    expect((await svc.api(`/connect-sessions/${created.body.id}`)).body.state).toBe('expired');
    expect((await svc.api(`/connect-sessions/${created.body.id}`)).body.state).toBe('expired');
    await svc.services.connectionStates.noticeExpiredSessions();
    const expired = (await svc.api('/events?kind=connect_session.expired&limit=500')).body.events;
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ tenant_id: null, subject_ref: created.body.id });
    expect((await svc.api('/events?kind=connect_session.expired', { key: other.key })).body.events).toEqual([]);

    // Completed: the new MSP's tenant tells it, with the connection the session added.
    const link = await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Prompt MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create'] } });
    const page = ConnectPageClient.fromUrl(link.body.connect_url);
    expect((await page.test('psa', 'halopsa', `${svc.url}/sandbox-vendors/halopsa`, { clientId: 'sandbox', clientSecret: 'sandbox-secret' })).status).toBe(303);
    await page.complete({ psa: ['psa.ticket.create'] });
    const session = (await svc.api(`/connect-sessions/${link.body.id}`)).body;
    expect(session.state).toBe('completed');
    const told = (await svc.api(`/tenants/${session.tenant_id}/connections/events?kind=connection`)).body.events;
    expect(told.map((e: any) => e.kind)).toEqual(['connection.added', 'connect_session.completed']);
    expect(told[1]).toMatchObject({ tenant_id: session.tenant_id, subject_ref: link.body.id, detail: { connections: [session.connections[0].id] } });

    const before = (await feed(svc.alphaId)).length;
    const conn = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: svc.alphaId, kind: 'psa', connector: 'connectwise', base_url: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
        credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' } },
    });
    const id = conn.data.create_connection.id;
    await svc.graphql('mutation($id: ID!) { delete_connection(id: $id) { id } }', { id });
    const addedAndRemoved = (await feed(svc.alphaId)).slice(before);
    expect(addedAndRemoved.map((e) => [e.kind, e.connection_id])).toEqual([['connection.added', id], ['connection.removed', id]]);
  });
});
