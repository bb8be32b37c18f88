/**
 * Connect sessions over HTTP (docs/architecture.md, Connect sessions and console): an ISV opens one, the
 * page (driven as a browser without JavaScript would) tests the keys, names missing vendor permissions,
 * signs in at NinjaOne, connects; then the tenant, its grants and its first sync are there. A used,
 * expired, cancelled or guessed token is refused and creates nothing; a tenant the ISV does not see
 * is 404; credentials appear in no answer and no log line.
 */
import { Writable } from 'node:stream';
import { createLogger } from '../src/shared/logger';
import type { NinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import { ConnectPageClient, CW_CREDENTIALS, CW_LIMITED_CREDENTIALS, sandboxBase } from './support/connect-page';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const logLines: string[] = [];
const answers: string[] = [];

beforeAll(async () => {
  const stream = new Writable({ write(chunk, _enc, cb) { logLines.push(String(chunk)); cb(); } });
  svc = await startTestService({}, { logger: createLogger('debug', stream) });
}, 120_000);
afterAll(async () => { await svc?.close(); });

const open = async (json: Record<string, unknown>, key?: string) => {
  const res = await svc.api('/connect-sessions', { method: 'POST', json, ...(key ? { key } : {}) });
  answers.push(JSON.stringify(res.body));
  return res;
};
const tenantCount = async () => Number((await svc.services.ds.query('SELECT count(*)::int AS n FROM tenants'))[0].n);
const PAX8 = { clientId: 'sandbox', clientSecret: 'sandbox-secret' };
const NINJA = { clientId: 'sandbox', clientSecret: 'sandbox-secret' };

describe('connect sessions', () => {
  it('an MSP connects a PSA, an RMM (signing in at NinjaOne) and a distributor; the ISV then reads the new tenant', async () => {
    const created = await open({
      msp_name: 'Acme MSP', kinds: ['psa', 'rmm', 'distributor'],
      requested_grants: ['psa.ticket.create', 'psa.ticket.events', 'rmm.device.events', 'rmm.device.write', 'distributor.company.create'],
      redirect_url: 'https://isv.example/connected',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ state: 'pending', connect_url: expect.stringMatching(/\/connect\/[A-Za-z0-9_-]{43}$/) });
    expect((await svc.api(`/connect-sessions/${created.body.id}`)).body).toMatchObject({ state: 'pending', tenant_id: null, msp_name: 'Acme MSP', connections: [] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    const first = await page.page();
    expect(first.status).toBe(200);
    expect(first.html).toContain('Sandbox ISV');
    expect(first.html).toContain('Create tickets in your PSA');
    const base = sandboxBase(svc);

    expect((await page.test('psa', 'connectwise', base.connectwise, CW_CREDENTIALS)).status).toBe(303);
    expect((await page.test('distributor', 'pax8', base.pax8, PAX8)).status).toBe(303);
    expect((await page.test('rmm', 'ninjaone', base.ninjaone, NINJA)).status).toBe(303);
    const beforeOAuth = await page.page();
    expect(beforeOAuth.html).toContain('a NinjaOne user&#39;s sign-in and approval');
    expect(beforeOAuth.html).toMatch(/id="grant-rmm-rmm-device-write"[^>]*disabled/);
    const back = await page.authorize('rmm');
    expect(back.html).toContain('Signed in and approved');
    expect(back.html).not.toMatch(/id="grant-rmm-rmm-device-write"[^>]*disabled/);

    const done = await page.complete({ psa: ['psa.ticket.create', 'psa.ticket.events'], rmm: ['rmm.device.events', 'rmm.device.write'], distributor: [] });
    expect(done.status).toBe(200);
    expect(done.html).toMatch(/sk_msp_[A-Za-z0-9_-]+/);
    const progress = await page.awaitFirstSync(ConnectPageClient.progressPath(done.html));
    expect(progress.connections.map((c) => c.connector).sort()).toEqual(['connectwise', 'ninjaone', 'pax8']);
    expect(progress.connections.find((c) => c.connector === 'connectwise')!.resources.find((r) => r.resource === 'tickets')!.records).toBeGreaterThan(0);

    const session = await svc.api(`/connect-sessions/${created.body.id}`);
    answers.push(JSON.stringify(session.body));
    expect(session.body.state).toBe('completed');
    expect(session.body.connections).toHaveLength(3);
    const tenantId = session.body.tenant_id;
    const tickets = await svc.api(`/tenants/${tenantId}/tickets?limit=5`);
    expect(tickets.status).toBe(200);
    expect(tickets.body.tickets.length).toBeGreaterThan(0);
    const granted = Object.fromEntries(session.body.granted.map((g: { connection_id: string; keys: string[] }) => [session.body.connections.find((c: { id: string }) => c.id === g.connection_id).connector, g.keys]));
    expect(granted).toEqual({ connectwise: ['psa.ticket.create', 'psa.ticket.events'], ninjaone: ['rmm.device.events', 'rmm.device.write'], pax8: [] });
    // The link is spent.
    expect((await page.page()).status).toBe(410);
    // Every step is in the tenant's audit log, with who did it.
    const audit = await svc.services.ds.query(`SELECT action, detail FROM audit_entries WHERE tenant_id = $1 AND action LIKE 'connect.%' ORDER BY seq`, [tenantId]);
    expect(audit.map((a: { action: string }) => a.action)).toEqual(expect.arrayContaining([
      'connect.session.created', 'connect.credentials.tested', 'connect.oauth.authorised', 'connect.connection.added', 'connect.grants.set', 'connect.msp_key.issued', 'connect.session.completed',
    ]));
    expect(audit.find((a: { action: string }) => a.action === 'connect.session.completed').detail).toMatchObject({ by: 'msp', via: 'connect', actor: { kind: 'person', email: page.owner.email } });
    // The person who completed it is the new tenant's first owner, signed in to its console by the answer to Connect.
    expect(page.cookies.get('session')).toBeDefined();
    expect(done.html).not.toContain('/console/link/');

    // The authorised NinjaOne connection deploys once.
    const ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
    const r0 = ninja.runs('sandbox-alpha').length;
    const deploy = await svc.api(`/tenants/${tenantId}/devices/104/deploy`, { method: 'POST', json: { package_name: 'Install Google Chrome', dry_run: false, idempotency_key: `connect-${Date.now()}` } });
    expect(deploy.status).toBe(200);
    expect(ninja.runs('sandbox-alpha').slice(r0)).toEqual([expect.objectContaining({ deviceId: 104, done: true })]);
  }, 120_000);

  it('a ConnectWise member whose security role lacks Service Tickets: Add is named, and ticket create stays off', async () => {
    const created = await open({ msp_name: 'Limited MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create', 'psa.ticket.events'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    expect((await page.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_LIMITED_CREDENTIALS)).status).toBe(303);
    const shown = await page.page();
    expect(shown.html).toContain('Service Desk &gt; Service Tickets: Add');
    expect(shown.html).toMatch(/id="grant-psa-psa-ticket-create"[^>]*disabled/);
    // Ticking it anyway (a hand-made form) grants nothing it cannot use.
    const done = await page.complete({ psa: ['psa.ticket.create', 'psa.ticket.events'] });
    expect(done.status).toBe(200);
    const session = (await svc.api(`/connect-sessions/${created.body.id}`)).body;
    expect(session.granted[0].keys).toEqual(['psa.ticket.events']);
    expect(session.missing_permissions).toEqual([expect.objectContaining({ permission: 'Service Desk > Service Tickets: Add', capability: 'ticket.create', grants: expect.arrayContaining(['psa.ticket.create']) })]);
  }, 60_000);

  it('Autotask and HaloPSA forms test their keys and check permissions the vendors\' own way (entityInformation, token scopes)', async () => {
    const created = await open({ msp_name: 'Other PSA MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    expect((await page.test('psa', 'autotask', `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`, { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' })).status).toBe(303);
    const autotask = await page.page();
    expect(autotask.html).toMatch(/Has it<\/span> Tickets: create \(the API user&#39;s security level\)/);
    expect((await page.test('psa', 'halopsa', `${svc.url}/sandbox-vendors/halopsa`, { clientId: 'sandbox', clientSecret: 'sandbox-secret' })).status).toBe(303);
    const halo = await page.page();
    expect(halo.html).toMatch(/Has it<\/span> API application permissions: edit:tickets \(or all\)/);
    expect(halo.html).not.toMatch(/id="grant-psa-psa-ticket-create"[^>]*disabled/);
  }, 60_000);

  it('Kaseya BMS: user name, password and company name are tested, and a role that may not modify tickets is named', async () => {
    const created = await open({ msp_name: 'BMS MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    const first = await page.page();
    expect(first.html).toContain('https://api.bmsemea.kaseya.com');
    const base = `${svc.url}/sandbox-vendors/kaseyabms`;
    expect((await page.test('psa', 'kaseyabms', base, { username: 'sandbox', password: 'wrong', tenant: 'SANDBOX-GAMMA' })).status).toBe(422);
    expect((await page.test('psa', 'kaseyabms', base, { username: 'sandbox-limited', password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA' })).status).toBe(303);
    const limited = await page.page();
    expect(limited.html).toContain('Service Desk &gt; Tickets, Modify');
    expect(limited.html).toMatch(/id="grant-psa-psa-ticket-create"[^>]*disabled/);
    expect((await page.test('psa', 'kaseyabms', base, { username: 'sandbox', password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA' })).status).toBe(303);
    const full = await page.page();
    expect(full.html).toMatch(/Has it<\/span> Security role: Service Desk &gt; Tickets, Modify/);
    expect(full.html).not.toMatch(/id="grant-psa-psa-ticket-create"[^>]*disabled/);
  }, 60_000);

  it('Datto RMM: the platform is picked from its six regions, the keys are tested, its permissions are checked, and Connect syncs its devices', async () => {
    const created = await open({ msp_name: 'Datto MSP', kinds: ['rmm'], requested_grants: ['rmm.device.events', 'rmm.device.write'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    const first = await page.page();
    for (const platform of ['pinotage', 'merlot', 'concord', 'vidal', 'zinfandel', 'syrah']) expect(first.html).toContain(`https://${platform}-api.centrastage.net/api`);
    expect((await page.test('rmm', 'dattormm', `${svc.url}/sandbox-vendors/dattormm/api`, { apiKey: 'sandbox-beta', apiSecret: 'sandbox-wrong' })).status).toBe(422);
    expect((await page.test('rmm', 'dattormm', `${svc.url}/sandbox-vendors/dattormm/api`, { apiKey: 'sandbox-beta', apiSecret: 'sandbox-secret' })).status).toBe(303);
    expect((await page.page()).html).toMatch(/Has it<\/span> the API user&#39;s security level: Devices \(view\)/);
    const done = await page.complete({ rmm: ['rmm.device.events', 'rmm.device.write'] });
    await page.awaitFirstSync(ConnectPageClient.progressPath(done.html));
    const session = (await svc.api(`/connect-sessions/${created.body.id}`)).body;
    expect(session.state).toBe('completed');
    expect(session.connections).toEqual([expect.objectContaining({ kind: 'rmm', connector: 'dattormm' })]);
    const devices = await svc.api(`/tenants/${session.tenant_id}/devices?limit=5`);
    expect(devices.body.devices.length).toBeGreaterThan(0);
  }, 60_000);

  it('a client-credentials NinjaOne connection: device write is off on the page, the MSP\'s PUT cannot grant it, and a deploy granted by internal tooling anyway is refused with the vendor\'s reason', async () => {
    const created = await open({ msp_name: 'No User MSP', kinds: ['rmm'], requested_grants: ['rmm.device.events', 'rmm.device.write'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    await page.test('rmm', 'ninjaone', sandboxBase(svc).ninjaone, NINJA);
    const done = await page.complete({ rmm: ['rmm.device.events', 'rmm.device.write'] });
    const mspKey = /sk_msp_[A-Za-z0-9_-]+/.exec(done.html)![0];
    await page.awaitFirstSync(ConnectPageClient.progressPath(done.html));
    const session = (await svc.api(`/connect-sessions/${created.body.id}`)).body;
    expect(session.granted[0].keys).toEqual(['rmm.device.events']);
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const put = await svc.api(`/tenants/${session.tenant_id}/grants/${isv}`, { method: 'PUT', key: mspKey, json: { connections: [{ connection_id: session.connections[0].id, keys: ['rmm.device.events', 'rmm.device.write'] }] } });
    // The vendor permission device write needs was found missing: the MSP's save refuses it (and says which).
    expect([put.status, put.body.code, put.body.details.refused]).toEqual([422, 'request_invalid', ['rmm.device.write']]);
    expect((await svc.api(`/tenants/${session.tenant_id}/grants`, { key: mspKey })).body.grants[0]).toMatchObject({ keys: ['rmm.device.events'], unavailable: [expect.objectContaining({ key: 'rmm.device.write' })] });
    await svc.services.admin.setGrant(isv, session.connections[0].id, ['rmm.device.events', 'rmm.device.write']);
    const ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
    const r0 = ninja.runs('sandbox-alpha').length;
    const refused = await svc.api(`/tenants/${session.tenant_id}/devices/104/deploy`, { method: 'POST', json: { package_name: 'Install Google Chrome', dry_run: false, idempotency_key: `cc-${Date.now()}` } });
    expect([refused.status, refused.body.code]).toEqual([422, 'validation']);
    expect(refused.body.message).toMatch(/user_context_required/);
    expect(ninja.runs('sandbox-alpha').length).toBe(r0);
  }, 60_000);

  it('an expired, used, cancelled or guessed token is refused and creates nothing', async () => {
    const tenants = await tenantCount();
    const expired = await open({ msp_name: 'Late MSP', kinds: ['psa'], requested_grants: [] });
    await svc.services.ds.query(`UPDATE connect_sessions SET expires_at = now() - interval '1 minute' WHERE id = $1`, [expired.body.id]);
    const e = ConnectPageClient.fromUrl(expired.body.connect_url);
    expect((await e.page()).status).toBe(410);
    expect((await e.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS)).status).toBe(410);
    expect((await e.complete({ psa: [] })).status).toBe(410);
    expect((await svc.api(`/connect-sessions/${expired.body.id}`)).body.state).toBe('expired');

    const cancelled = await open({ msp_name: 'Gone MSP', kinds: ['psa'], requested_grants: [] });
    const c = ConnectPageClient.fromUrl(cancelled.body.connect_url);
    expect((await c.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS)).status).toBe(303);
    const del = await svc.api(`/connect-sessions/${cancelled.body.id}`, { method: 'DELETE' });
    expect([del.status, del.body.state]).toEqual([200, 'cancelled']);
    expect((await c.complete({ psa: [] })).status).toBe(410);
    expect((await c.page()).status).toBe(410);

    const guessed = new ConnectPageClient(svc.url, 'A'.repeat(43));
    expect((await guessed.page()).status).toBe(404);
    expect((await guessed.complete({ psa: [] })).status).toBe(404);
    expect((await new ConnectPageClient(svc.url, 'short').page()).status).toBe(404);

    // Used: a second Connect with the same link (a replay) makes nothing more.
    const used = await open({ msp_name: 'Once MSP', kinds: ['distributor'], requested_grants: [] });
    const u = ConnectPageClient.fromUrl(used.body.connect_url);
    await u.test('distributor', 'pax8', sandboxBase(svc).pax8, PAX8);
    expect((await u.complete({ distributor: [] })).status).toBe(200);
    const afterFirst = await tenantCount();
    expect(afterFirst).toBe(tenants + 1);
    expect((await u.complete({ distributor: [] })).status).toBe(410);
    expect(await tenantCount()).toBe(afterFirst);
    // A completed session cannot be cancelled.
    expect((await svc.api(`/connect-sessions/${used.body.id}`, { method: 'DELETE' })).status).toBe(422);
  }, 60_000);

  it('lists the ISV\'s sessions with their state and never a link; cancelling twice answers the cancelled session unchanged', async () => {
    const kept = await open({ msp_name: 'Listed MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create'] });
    const gone = await open({ msp_name: 'Listed, then cancelled', kinds: ['rmm'], requested_grants: [] });
    const first = await svc.api(`/connect-sessions/${gone.body.id}`, { method: 'DELETE' });
    const second = await svc.api(`/connect-sessions/${gone.body.id}`, { method: 'DELETE' });
    expect([first.status, second.status, second.body]).toEqual([200, 200, first.body]);
    const listed = await svc.api('/connect-sessions?limit=500');
    expect(listed.status).toBe(200);
    const byId = new Map((listed.body.connect_sessions as { id: string }[]).map((s) => [s.id, s]));
    expect(byId.get(kept.body.id)).toMatchObject({ state: 'pending', msp_name: 'Listed MSP', kinds: ['psa'], requested_grants: ['psa.ticket.create'] });
    expect(byId.get(gone.body.id)).toMatchObject({ state: 'cancelled', msp_name: 'Listed, then cancelled' });
    expect(JSON.stringify(listed.body)).not.toContain(kept.body.connect_url);
    expect(JSON.stringify(listed.body)).not.toContain('connect_url');
    // Paged like every list: one at a time, the cursor leads on.
    const one = await svc.api('/connect-sessions?limit=1');
    expect([one.body.connect_sessions.length, typeof one.body.next_cursor]).toEqual([1, 'string']);
    const next = await svc.api(`/connect-sessions?limit=1&cursor=${encodeURIComponent(one.body.next_cursor)}`);
    expect(next.body.connect_sessions[0].id).not.toBe(one.body.connect_sessions[0].id);
  });

  it('a tenant the ISV does not see is 404, like one that does not exist; another ISV\'s session is 404', async () => {
    const hidden = (await svc.graphql('mutation { create_tenant(name: "Hidden MSP", slug: "hidden-msp") { id } }')).data.create_tenant.id;
    const res = await open({ tenant_id: hidden, kinds: ['psa'], requested_grants: [] });
    expect([res.status, res.body.code]).toEqual([404, 'not_found']);
    expect((await open({ tenant_id: '00000000-0000-4000-8000-000000000099', kinds: ['psa'], requested_grants: [] })).status).toBe(404);
    const mine = await open({ tenant_id: svc.alphaId, kinds: ['psa'], requested_grants: ['psa.ticket.events'] });
    expect(mine.status).toBe(201);
    const other = await svc.graphql('mutation { create_isv(name: "Other ISV") { id } }');
    const otherKey = (await svc.graphql('mutation($i: ID!) { issue_api_key(isv_id: $i) { key } }', { i: other.data.create_isv.id })).data.issue_api_key.key;
    expect((await svc.api(`/connect-sessions/${mine.body.id}`, { key: otherKey })).status).toBe(404);
    expect((await svc.api(`/connect-sessions/${mine.body.id}`, { method: 'DELETE', key: otherKey })).status).toBe(404);
    expect((await svc.api('/connect-sessions', { key: otherKey })).body.connect_sessions).toEqual([]);
    // The MSP key of a tenant is not an ISV: role_required.
    expect((await open({ tenant_id: svc.alphaId, kinds: ['psa'], requested_grants: [] }, svc.alphaMspKey)).body.code).toBe('role_required');
  }, 60_000);

  it('asks only for grants its kinds offer, and only https redirects', async () => {
    expect((await open({ msp_name: 'X', kinds: ['rmm'], requested_grants: ['psa.ticket.create'] })).body.details.field).toBe('requested_grants');
    expect((await open({ msp_name: 'X', kinds: ['psa'], requested_grants: [], redirect_url: 'http://isv.example/' })).body.details.field).toBe('redirect_url');
    expect((await open({ msp_name: 'X', tenant_id: svc.alphaId, kinds: ['psa'], requested_grants: [] })).status).toBe(422);
    expect((await open({ msp_name: 'X', kinds: ['psa'], requested_grants: [], expires_in_minutes: 10_081 })).status).toBe(422);
  });

  it('no credential appears in any answer or log line', async () => {
    const secrets = [CW_CREDENTIALS.privateKey, CW_LIMITED_CREDENTIALS.privateKey, PAX8.clientSecret, NINJA.clientSecret, 'sandbox-refresh-token'];
    const tokens = answers.map((a) => /\/connect\/([A-Za-z0-9_-]{43})/.exec(a)?.[1]).filter(Boolean) as string[];
    expect(tokens.length).toBeGreaterThan(3);
    const logs = logLines.join('\n');
    for (const s of [...secrets, ...tokens]) expect(logs).not.toContain(s);
    for (const s of secrets) expect(answers.join('\n')).not.toContain(s);
    // The page never sends a secret back, even after a refused test.
    const created = await open({ msp_name: 'Typo MSP', kinds: ['psa'], requested_grants: [] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    const refused = await page.test('psa', 'connectwise', sandboxBase(svc).connectwise, { ...CW_CREDENTIALS, privateKey: 'typo-private-key' });
    expect(refused.status).toBe(422);
    expect(refused.html).toContain('Connection test failed');
    expect(refused.html).not.toContain('typo-private-key');
    expect(refused.html).not.toContain('value="sandbox-public"');
    expect(refused.html).toContain(`value="${sandboxBase(svc).connectwise}"`);
    expect(logLines.join('\n')).not.toContain('typo-private-key');
    // Sealed at rest.
    const stored = await svc.services.ds.query('SELECT credentials_encrypted FROM connections');
    expect(JSON.stringify(stored)).not.toContain('sandbox-private');
  });
});

describe('an authorisation made on the connect page, later', () => {
  it('a refresh token NinjaOne rotates is sealed into the connection; a revoked one shows on the connection\'s status with what to do', async () => {
    const created = await open({ msp_name: 'Rotating MSP', kinds: ['rmm'], requested_grants: ['rmm.device.events'] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    await page.test('rmm', 'ninjaone', sandboxBase(svc).ninjaone, NINJA);
    await page.authorize('rmm');
    const done = await page.complete({ rmm: ['rmm.device.events'] });
    await page.awaitFirstSync(ConnectPageClient.progressPath(done.html));
    const session = (await svc.api(`/connect-sessions/${created.body.id}`)).body;
    const connection = await svc.services.admin.findConnection(session.connections[0].id);
    const first = svc.services.admin.credentialsOf(connection).refreshToken;
    expect(first).toBeTruthy();

    const ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
    ninja.rotateRefreshTokens(true);
    try {
      ninja.expireTokens();
      const synced = await svc.api(`/tenants/${session.tenant_id}/sync`, { method: 'POST', json: {} });
      expect(synced.body.ok).toBe(true);
      const rotated = svc.services.admin.credentialsOf(await svc.services.admin.findConnection(connection.id)).refreshToken;
      expect(rotated).toBeTruthy();
      expect(rotated).not.toBe(first);
      // Only the new one works at NinjaOne now, and the stored one is it.
      ninja.expireTokens();
      expect((await svc.api(`/tenants/${session.tenant_id}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);

      const current = svc.services.admin.credentialsOf(await svc.services.admin.findConnection(connection.id)).refreshToken;
      ninja.revokeAuthorisation(current);
      ninja.expireTokens();
      const failed = await svc.api(`/tenants/${session.tenant_id}/sync`, { method: 'POST', json: {} });
      expect(failed.body.ok).toBe(false);
      const status = await svc.api(`/tenants/${session.tenant_id}/status`);
      expect(JSON.stringify(status.body)).toMatch(/revoked or has expired\. Open a new connect link and sign in at NinjaOne again/);
    } finally {
      ninja.rotateRefreshTokens(false);
    }
  }, 60_000);
});

describe('a second session for a tenant the ISV sees', () => {
  it('repairs its connection in place: the same connection, its data kept, no second MSP key, the tenant named only by the session', async () => {
    const first = await open({ msp_name: 'Repair MSP', kinds: ['psa'], requested_grants: ['psa.ticket.events'] });
    const p1 = ConnectPageClient.fromUrl(first.body.connect_url);
    await p1.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS);
    const done1 = await p1.complete({ psa: ['psa.ticket.events'] });
    await p1.awaitFirstSync(ConnectPageClient.progressPath(done1.html));
    const made = (await svc.api(`/connect-sessions/${first.body.id}`)).body;
    const tickets = (await svc.api(`/tenants/${made.tenant_id}/tickets?limit=500`)).body.tickets.length;
    expect(tickets).toBeGreaterThan(0);

    const again = await open({ tenant_id: made.tenant_id, kinds: ['psa'], requested_grants: ['psa.ticket.events', 'psa.ticket.create'] });
    expect(again.status).toBe(201);
    // The ISV's own browser (no console session) reads what is asked and saves nothing.
    const isv = ConnectPageClient.fromUrl(again.body.connect_url);
    expect((await isv.page()).html).toContain('Sign in as an owner or admin of Repair MSP');
    expect((await isv.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS)).status).toBe(403);
    expect((await isv.complete({ psa: ['psa.ticket.events'] })).status).toBe(403);
    expect((await svc.api(`/connect-sessions/${again.body.id}`)).body.state).toBe('pending');
    // The first owner's browser (signed in when it connected the tenant) decides.
    const p2 = ConnectPageClient.fromUrl(again.body.connect_url);
    for (const [k, v] of p1.cookies) p2.cookies.set(k, v);
    expect((await p2.page()).html).toContain('Repair MSP');
    await p2.test('psa', 'connectwise', sandboxBase(svc).connectwise, CW_CREDENTIALS);
    // With a PSA there already, a new one is never placed silently.
    const unplaced = await p2.complete({ psa: ['psa.ticket.events'] });
    expect(unplaced.status).toBe(422);
    expect(unplaced.html).toContain('choose whether the one you tested is added beside it or replaces it');
    // A form field naming another tenant changes nothing: the session names its tenant.
    const sent2 = await p2.post(`/connect/${p2.token}/complete`, [['csrf', await p2.csrf()], ['grant_psa', 'psa.ticket.events'], ['grant_psa', 'psa.ticket.create'], ['place_psa', made.connections[0].id], ['tenant_id', svc.alphaId]]);
    expect(sent2.status).toBe(303);
    const done2 = await p2.get(sent2.location!);
    expect(done2.status).toBe(200);
    expect(done2.html).not.toMatch(/sk_msp_/);
    await p2.awaitFirstSync(ConnectPageClient.progressPath(done2.html));
    const repaired = (await svc.api(`/connect-sessions/${again.body.id}`)).body;
    expect(repaired.tenant_id).toBe(made.tenant_id);
    expect(repaired.connections.map((c: { id: string }) => c.id)).toEqual(made.connections.map((c: { id: string }) => c.id));
    expect(repaired.granted[0].keys).toEqual(['psa.ticket.create', 'psa.ticket.events']);
    expect((await svc.api(`/tenants/${made.tenant_id}/tickets?limit=500`)).body.tickets.length).toBe(tickets);
    const actions = (await svc.services.ds.query(`SELECT action FROM audit_entries WHERE tenant_id = $1 AND action LIKE 'connect.%'`, [made.tenant_id])).map((a: { action: string }) => a.action);
    expect(actions).toContain('connect.connection.repaired');
    expect(actions.filter((a: string) => a === 'connect.msp_key.issued')).toHaveLength(1);
  }, 60_000);
});

describe('the first owner a new tenant\'s page asks for', () => {
  it('refuses an email with a NUL or no name with 422 and keeps nothing; a name\'s control characters are dropped, never a 500', async () => {
    const created = await open({ msp_name: 'Odd Text MSP', kinds: ['distributor'], requested_grants: [] });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    expect((await page.test('distributor', 'pax8', sandboxBase(svc).pax8, PAX8)).status).toBe(303);
    for (const owner of [{ name: 'Pat', email: 'pat\u0000@odd.example' }, { name: '\u0000 ', email: 'pat@odd.example' }, { name: 'Pat', email: 'not an email' }]) {
      page.owner = owner;
      const refused = await page.complete({});
      expect(refused.status).toBe(422);
      expect(refused.html).toContain('your work email');
    }
    expect((await svc.api(`/connect-sessions/${created.body.id}`)).body.state).toBe('pending');
    page.owner = { name: 'Pat\u0000 Owner\u0007', email: 'pat@odd.example' };
    expect((await page.complete({})).status).toBe(200);
    const [person] = await svc.services.ds.query('SELECT name FROM people WHERE email = $1', ['pat@odd.example']);
    expect(person.name).toBe('Pat Owner');
  }, 60_000);
});

describe('Reconnect: the MSP\'s own repair session', () => {
  it('renews one connection\'s keys in place for a signed-in owner: no ISV, the same connection, every grant kept; nobody else saves anything', async () => {
    const [pax8] = await svc.services.ds.query(`SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'distributor'`, [svc.alphaId]);
    const grantsBefore = await svc.services.ds.query('SELECT isv_id, keys FROM grants WHERE connection_id = $1 ORDER BY isv_id', [pax8.id]);
    // An ISV key cannot open one; the MSP's key (or its console) can.
    expect((await svc.api(`/tenants/${svc.alphaId}/connections/${pax8.id}/reconnect`, { method: 'POST' })).status).toBe(403);
    expect((await svc.api(`/tenants/${svc.alphaId}/connections/00000000-0000-4000-8000-000000000001/reconnect`, { method: 'POST', key: svc.alphaMspKey })).status).toBe(404);
    const repair = await svc.api(`/tenants/${svc.alphaId}/connections/${pax8.id}/reconnect`, { method: 'POST', key: svc.alphaMspKey });
    expect(repair.status).toBe(201);

    const stranger = ConnectPageClient.fromUrl(repair.body.connect_url);
    expect((await stranger.page()).html).toContain('Sign in as an owner or admin of');
    expect((await stranger.test('distributor', 'pax8', sandboxBase(svc).pax8, PAX8)).status).toBe(403);

    const owner = ConnectPageClient.fromUrl(repair.body.connect_url);
    expect((await owner.signIn(svc, 'owner@sandbox-alpha.example')).location).toBe(`/connect/${owner.token}`);
    const shown = await owner.page();
    expect(shown.html).toContain('Reconnect a system of Sandbox Alpha MSP');
    // Only the repaired system is offered.
    expect(shown.html).toContain('distributor-pax8-card');
    expect((await owner.test('distributor', 'pax8', sandboxBase(svc).pax8, PAX8)).status).toBe(303);
    const done = await owner.complete({});
    expect(done.status).toBe(200);
    expect(done.html).not.toContain('/console/link/');
    const [after] = await svc.services.ds.query(`SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'distributor'`, [svc.alphaId]);
    expect(after.id).toBe(pax8.id);
    expect(await svc.services.ds.query('SELECT isv_id, keys FROM grants WHERE connection_id = $1 ORDER BY isv_id', [pax8.id])).toEqual(grantsBefore);
    const audit = await svc.services.ds.query(`SELECT action, detail FROM audit_entries WHERE tenant_id = $1 AND action IN ('connect.repair.started', 'connect.connection.repaired') ORDER BY seq`, [svc.alphaId]);
    expect(audit.map((a: { action: string }) => a.action)).toEqual(['connect.repair.started', 'connect.connection.repaired']);
    expect(audit[1].detail.actor).toMatchObject({ kind: 'person', email: 'owner@sandbox-alpha.example' });
  }, 60_000);
});

describe('the connect pages\' limits', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({}, { env: { AUTH_FAILURES_PER_MINUTE: '3', RATE_LIMIT_PER_MINUTE: '40' } });
  }, 120_000);
  afterAll(async () => { await limited?.close(); });

  it('an address guessing tokens gets 429 after its failed-authentication limit; any address past the per-minute limit gets 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await new ConnectPageClient(limited.url, `${'B'.repeat(42)}${i}`).page()).status);
    expect(statuses.slice(0, 3)).toEqual([404, 404, 404]);
    expect(statuses.slice(3)).toEqual([429, 429]);
    // A valid link, opened over and over from one address (the guesses above counted too).
    const created = await limited.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Busy MSP', kinds: ['psa'], requested_grants: [] } });
    const page = ConnectPageClient.fromUrl(created.body.connect_url);
    const seen: number[] = [];
    for (let i = 0; i < 45; i++) seen.push((await page.page()).status);
    expect(seen.slice(0, 30).every((st) => st === 200)).toBe(true);
    expect(seen.slice(-1)).toEqual([429]);
  }, 60_000);
});
