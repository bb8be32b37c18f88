/**
 * Onboarding a tenant through the internal GraphQL, end to end against the ConnectWise simulator:
 * bad connections are refused at once (empty credentials, a wrong base URL, credentials the vendor
 * refuses), a connection is fixed by update, a second one deleted, and a removed tenant leaves nothing.
 */
import { startTestService, type TestService } from './support/service';
import { loadVendorFixtures } from '../src/sandbox/fixtures';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

const CREATE = `mutation($input: CreateConnectionInput!) { create_connection(input: $input) {
  id connector status_mapping { vendor_status canonical } status_mapping_source unmapped_statuses tested } }`;
const UPDATE = `mutation($input: UpdateConnectionInput!) { update_connection(input: $input) {
  id base_url status_mapping_source unmapped_statuses tested } }`;
const cwCredentials = { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' };
const cwBase = () => `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`;
const errorOf = (r: any) => ({ code: r.errors?.[0]?.extensions?.code, field: r.errors?.[0]?.extensions?.details?.field, message: r.errors?.[0]?.message as string, stack: r.errors?.[0]?.extensions?.stacktrace });

describe('GraphQL onboarding', () => {
  it('onboards a ConnectWise tenant: refuses bad connections at once, fixes one by update, deletes a second', async () => {
    const tenant = await svc.graphql('mutation { create_tenant(name: "Onboarded MSP", slug: "onboarded-msp") { id } }');
    const tenantId = tenant.data.create_tenant.id;
    const connections = async () => (await svc.services.ds.query('SELECT id FROM connections WHERE tenant_id = $1', [tenantId])).length;

    const empty = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: { ...cwCredentials, privateKey: '  ' } } });
    expect(errorOf(empty)).toMatchObject({ code: 'validation', field: 'credentials' });
    expect(errorOf(empty).message).toContain('privateKey');
    expect(errorOf(empty).stack).toBeUndefined();

    const foreign = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: { ...cwCredentials, clientSecret: 'x' } } });
    expect(errorOf(foreign)).toMatchObject({ code: 'validation', field: 'credentials' });

    for (const base_url of ['not a url', 'ftp://example.com/api', 'http://10.0.0.8/v4_6_release/apis/3.0']) {
      const bad = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url, credentials: cwCredentials } });
      expect(errorOf(bad)).toMatchObject({ code: 'validation', field: 'base_url' });
    }
    // The right host, the wrong path: the vendor's own 404 is named.
    const wrongPath = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: `${svc.url}/sandbox-vendors/connectwise/apis`, credentials: cwCredentials, test: true } });
    expect(errorOf(wrongPath)).toMatchObject({ code: 'validation', field: 'base_url' });
    expect(errorOf(wrongPath).message).toMatch(/connectwise answered 404/);
    // Credentials the vendor refuses: its 401 and its words.
    const refused = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: { ...cwCredentials, privateKey: 'wrong' }, test: true } });
    expect(errorOf(refused)).toMatchObject({ code: 'validation', field: 'credentials' });
    expect(errorOf(refused).message).toContain('connectwise answered 401: The public and private key combination is not valid.');
    expect(await connections()).toBe(0);

    // A good connection without a mapping: derived from the closed flags, nothing left unmapped.
    const created = await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: cwCredentials, test: true } });
    expect(created.errors).toBeUndefined();
    const conn = created.data.create_connection;
    expect(conn).toMatchObject({ connector: 'connectwise', status_mapping_source: 'derived', unmapped_statuses: [], tested: true });
    const mapping = Object.fromEntries(conn.status_mapping.map((e: any) => [e.vendor_status, e.canonical]));
    expect(mapping).toMatchObject({ New: 'new', 'In Progress': 'in_progress', Closed: 'closed', Completed: 'closed' });

    // A partial mapping reports what it leaves out; a broken base URL is fixed by update.
    const partial = await svc.graphql(UPDATE, { input: { id: conn.id, status_mapping: [{ vendor_status: 'New', canonical: 'new' }] } });
    expect(partial.data.update_connection.status_mapping_source).toBe('given');
    expect(partial.data.update_connection.unmapped_statuses).toEqual(expect.arrayContaining(['In Progress', 'Waiting on Customer']));
    expect(partial.data.update_connection.unmapped_statuses).not.toContain('Closed');
    const badUpdate = await svc.graphql(UPDATE, { input: { id: conn.id, base_url: `${svc.url}/sandbox-vendors/connectwise/nowhere`, test: true } });
    expect(errorOf(badUpdate)).toMatchObject({ code: 'validation', field: 'base_url' });
    const fixed = await svc.graphql(UPDATE, { input: { id: conn.id, base_url: `${cwBase()}/`, status_mapping: [], test: true } });
    expect(fixed.data.update_connection).toMatchObject({ base_url: cwBase(), status_mapping_source: 'derived', unmapped_statuses: [], tested: true });

    // The tenant's ISV and MSP keys work over REST.
    const isv = (await svc.graphql('mutation { create_isv(name: "Onboarding ISV") { id } }')).data.create_isv.id;
    const isvKey = (await svc.graphql('mutation($i: ID!) { issue_api_key(isv_id: $i) { key } }', { i: isv })).data.issue_api_key.key;
    const mspKey = (await svc.graphql('mutation($t: ID!) { issue_msp_key(tenant_id: $t) { key } }', { t: tenantId })).data.issue_msp_key.key;
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: conn.id });
    expect((await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key: isvKey })).status).toBe(200);
    // With the derived mapping no ticket reads status null.
    const tickets = (await svc.api(`/tenants/${tenantId}/tickets?limit=500`, { key: isvKey })).body.tickets;
    expect(tickets.length).toBeGreaterThan(0);
    expect(tickets.filter((t: any) => t.status === null).map((t: any) => t.id)).toEqual([]);

    // A second connection, deleted: its grant and records go, ticket create no longer fans out to it.
    const second = (await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: cwCredentials } })).data.create_connection;
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: second.id });
    expect((await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key: isvKey })).status).toBe(200);
    let listed = await svc.api(`/tenants/${tenantId}/connections`, { key: isvKey });
    expect(listed.body.connections.map((c: any) => c.id).sort()).toEqual([conn.id, second.id].sort());
    // A name held by one company per connection: the fixtures hold look-alike names that refuse with company_match_ambiguous.
    const company = (await svc.services.ds.query(
      'SELECT name FROM companies WHERE tenant_id = $1 AND connection_id = $2 AND name IN (SELECT name FROM companies WHERE connection_id = $2 GROUP BY name HAVING count(*) = 1) ORDER BY name LIMIT 1',
      [tenantId, conn.id],
    ))[0];
    const preview = async () => (await svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', json: { company_name: company.name, summary: 'Onboarding check' }, key: isvKey })).body;
    expect(JSON.stringify(await preview())).toContain(second.id);
    const deleted = await svc.graphql('mutation($id: ID!) { delete_connection(id: $id) { id deleted } }', { id: second.id });
    expect(deleted.data.delete_connection).toEqual({ id: second.id, deleted: true });
    listed = await svc.api(`/tenants/${tenantId}/connections`, { key: isvKey });
    expect(listed.body.connections.map((c: any) => c.id)).toEqual([conn.id]);
    expect(JSON.stringify(await preview())).not.toContain(second.id);
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM tickets WHERE connection_id = $1', [second.id]))[0].n).toBe(0);
    expect((await svc.graphql('mutation($id: ID!) { delete_connection(id: $id) { id } }', { id: second.id })).errors[0].extensions.code).toBe('not_found');

    // A duplicate slug is a clear error, not the database's.
    const dup = await svc.graphql('mutation($id: ID!) { update_tenant(id: $id, slug: "sandbox-alpha") { id } }', { id: tenantId });
    expect(errorOf(dup)).toMatchObject({ code: 'validation', field: 'slug' });

    // Removing the tenant leaves nothing readable; its MSP key stops working.
    expect((await svc.api(`/tenants/${tenantId}/grants`, { key: mspKey })).status).toBe(200);
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM billing_versions WHERE tenant_id = $1', [tenantId]))[0].n).toBe(1);
    expect((await svc.graphql('mutation($id: ID!) { delete_tenant(id: $id) { deleted } }', { id: tenantId })).data.delete_tenant.deleted).toBe(true);
    expect((await svc.api(`/tenants/${tenantId}/tickets`, { key: isvKey })).status).toBe(404);
    expect((await svc.api(`/tenants/${tenantId}/grants`, { key: mspKey })).status).toBe(401);
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM tickets WHERE tenant_id = $1', [tenantId]))[0].n).toBe(0);
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM events WHERE tenant_id = $1', [tenantId]))[0].n).toBe(0);
    // Written by triggers as the agreements and the rest went: none stays either.
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM billing_versions WHERE tenant_id = $1', [tenantId]))[0].n).toBe(0);
  }, 120_000);

  it('a commit right after update_connection uses the new credentials (nothing cached outlives the change)', async () => {
    const tenantId = (await svc.graphql('mutation { create_tenant(name: "Rotated MSP", slug: "rotated-msp") { id } }')).data.create_tenant.id;
    const conn = (await svc.graphql(CREATE, { input: { tenant_id: tenantId, kind: 'psa', connector: 'connectwise', base_url: cwBase(), credentials: cwCredentials } })).data.create_connection;
    const isv = (await svc.graphql('mutation { create_isv(name: "Rotating ISV") { id } }')).data.create_isv.id;
    const key = (await svc.graphql('mutation($i: ID!) { issue_api_key(isv_id: $i) { key } }', { i: isv })).data.issue_api_key.key;
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.ticket.create"]) { id } }', { i: isv, c: conn.id });
    expect((await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {}, key })).status).toBe(200);
    const [{ name }] = await svc.services.ds.query(
      'SELECT name FROM companies WHERE connection_id = $1 GROUP BY name HAVING count(*) = 1 ORDER BY name LIMIT 1', [conn.id]);
    let n = 0;
    const commit = () => svc.api(`/tenants/${tenantId}/tickets`, { method: 'POST', key, json: { company_name: name, summary: `Rotation ${n}`, dry_run: false, idempotency_key: `rotation-${n++}` } });
    expect((await commit()).status).toBe(201);
    // Within the caches' lifetime, the next commit goes out with the rotated credentials (another
    // ConnectWise company holding the same records), and the one after with the first ones again.
    const cw = svc.services.simulators!.connectwise as any;
    cw.seed('rotated', { ...loadVendorFixtures('sandbox-alpha', 'connectwise').resources, tickets: [] });
    const landedIn = (instance: string, summary: string) => (cw.list(instance, 'tickets') as any[]).filter((t) => t.summary === summary).length;
    const rotated = await svc.graphql(UPDATE, { input: { id: conn.id, credentials: { ...cwCredentials, companyId: 'rotated' }, test: true } });
    expect(rotated.errors).toBeUndefined();
    expect((await commit()).status).toBe(201);
    expect([landedIn('rotated', 'Rotation 1'), landedIn('sandbox-alpha', 'Rotation 1')]).toEqual([1, 0]);
    expect((await svc.graphql(UPDATE, { input: { id: conn.id, credentials: cwCredentials } })).errors).toBeUndefined();
    expect((await commit()).status).toBe(201);
    expect([landedIn('rotated', 'Rotation 2'), landedIn('sandbox-alpha', 'Rotation 2')]).toEqual([0, 1]);
  }, 60_000);

  it('lists connectors as an enum with their credentials, and the grant keys', async () => {
    const r = await svc.graphql('{ connectors { connectors { name kind credentials } grant_keys } }');
    expect(r.data.connectors.connectors).toEqual(expect.arrayContaining([{ name: 'connectwise', kind: 'psa', credentials: ['companyId', 'publicKey', 'privateKey', 'clientId'] }]));
    expect(r.data.connectors.grant_keys).toContain('psa.ticket.create');
    const t = await svc.graphql('{ __type(name: "ConnectorName") { kind enumValues { name } } }');
    expect(t.data.__type.kind).toBe('ENUM');
  });

  it('serves a browser the explorer page from local assets, asking for the admin token', async () => {
    const res = await fetch(`${svc.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('Admin token');
    // GraphiQL and its React come from our own assets: every script is a local file, none inline, no CDN.
    const scripts = [...page.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const s of scripts) expect(s).toMatch(/src="\/assets\//);
    expect(page).not.toMatch(/https?:\/\/cdn|src="https?:/);
    // Errors carry no stack trace (only NODE_ENV=development with GRAPHQL_STACKTRACES=true shows one).
    const bad = await svc.graphql('{ no_such_field }');
    expect(bad.errors[0].extensions.stacktrace).toBeUndefined();
    expect((await fetch(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ isvs { isvs { id } } }"}' })).status).toBe(401);
  });
});

describe('connection test (probe) per connector', () => {
  const cases = () => [
    { kind: 'psa', connector: 'connectwise', path: '/sandbox-vendors/connectwise/v4_6_release/apis/3.0', credentials: cwCredentials, wrong: { privateKey: 'wrong' } },
    { kind: 'psa', connector: 'autotask', path: '/sandbox-vendors/autotask/atservicesrest/v1.0', credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' }, wrong: { secret: 'wrong' } },
    { kind: 'psa', connector: 'halopsa', path: '/sandbox-vendors/halopsa', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, wrong: { clientSecret: 'wrong' } },
    { kind: 'rmm', connector: 'ninjaone', path: '/sandbox-vendors/ninjaone', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, wrong: { clientSecret: 'wrong' } },
    { kind: 'distributor', connector: 'pax8', path: '/sandbox-vendors/pax8/v1', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, wrong: { clientSecret: 'wrong' } },
  ];

  it('passes with the sandbox credentials and names the vendor\'s refusal of wrong ones', async () => {
    svc.services.simulators!.autotask.seed('autotask-demo', loadVendorFixtures('autotask-demo', 'autotask').resources);
    const tenantId = (await svc.graphql('mutation { create_tenant(name: "Probe MSP", slug: "probe-msp") { id } }')).data.create_tenant.id;
    for (const c of cases()) {
      const input = { tenant_id: tenantId, kind: c.kind, connector: c.connector, base_url: `${svc.url}${c.path}`, test: true };
      const refused = await svc.graphql(CREATE, { input: { ...input, credentials: { ...c.credentials, ...c.wrong } } });
      expect({ connector: c.connector, ...errorOf(refused) }).toMatchObject({ connector: c.connector, code: 'validation', field: 'credentials' });
      expect(errorOf(refused).message).toContain(`Connection test failed: ${c.connector} answered`);
      const ok = await svc.graphql(CREATE, { input: { ...input, credentials: c.credentials } });
      expect({ connector: c.connector, errors: ok.errors }).toEqual({ connector: c.connector, errors: undefined });
      expect(ok.data.create_connection.tested).toBe(true);
      expect(ok.data.create_connection.status_mapping_source).toBe(c.connector === 'connectwise' || c.connector === 'autotask' ? 'derived' : 'none');
    }
  }, 60_000);
});
