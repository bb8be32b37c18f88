/**
 * MSP keys (docs/architecture.md, Tenancy, keys and grants): the tenant's own key sees its tenant only, turns each ISV's grants
 * off and on (the ISV sees it at once), and is refused ISV writes; an ISV key is refused the grants
 * routes. Keys are issued through the graph and shown once.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let isvId: string;
let cwConnection: string;
beforeAll(async () => {
  svc = await startTestService();
  isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
  cwConnection = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'psa'", [svc.alphaId]))[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

const msp = (key = svc.alphaMspKey) => ({ key });
const preview = (key?: string) => svc.api(`/tenants/${svc.alphaId}/tickets`, { method: 'POST', key, json: { company_name: 'Contoso Ltd', summary: 'Grant check' } });

describe('what an MSP key sees', () => {
  it('its own tenant and nothing else', async () => {
    const tenants = await svc.api('/tenants', msp());
    expect(tenants.status).toBe(200);
    expect(tenants.body.tenants.map((t: any) => t.id)).toEqual([svc.alphaId]);
    expect((await svc.api(`/tenants/${svc.alphaId}/status`, msp())).status).toBe(200);
    expect((await svc.api(`/tenants/${svc.alphaId}/tickets?limit=5`, msp())).body.tickets).toHaveLength(5);
    const other = await svc.api(`/tenants/${svc.betaId}/tickets`, msp());
    expect({ status: other.status, code: other.body.code }).toEqual({ status: 404, code: 'not_found' });
    expect((await svc.api(`/tenants/${svc.betaId}/grants`, msp())).status).toBe(404);
  });

  it("every ISV's grants on its tenant", async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/grants`, msp());
    expect(res.status).toBe(200);
    const rows = res.body.grants.filter((g: any) => g.isv_id === isvId);
    expect(rows.map((g: any) => g.kind).sort()).toEqual(['distributor', 'psa', 'rmm']);
    expect(rows.find((g: any) => g.kind === 'psa')).toMatchObject({ isv_name: 'Sandbox ISV', connection_id: cwConnection, connector: 'connectwise' });
    expect(rows.find((g: any) => g.kind === 'psa').keys).toContain('psa.ticket.create');
  });
});

describe('the keys each connection kind takes', () => {
  it('each connection shows only the keys of its kind, and a key of another kind is refused naming the allowed ones', async () => {
    const rows = (await svc.api(`/tenants/${svc.alphaId}/grants`, msp())).body.grants.filter((g: any) => g.isv_id === isvId);
    const keysOf = (kind: string): string[] => rows.find((g: any) => g.kind === kind).keys;
    expect(keysOf('psa').every((k) => k.startsWith('psa.') || k.startsWith('billing.'))).toBe(true);
    expect(keysOf('rmm').sort()).toEqual(['rmm.device.events', 'rmm.device.write']);
    expect(keysOf('distributor').every((k) => k.startsWith('distributor.') || k.startsWith('billing.'))).toBe(true);
    expect(keysOf('distributor')).toContain('distributor.company.create');

    const rmm = rows.find((g: any) => g.kind === 'rmm').connection_id;
    const wrong = await svc.api(`/tenants/${svc.alphaId}/grants/${isvId}`, { ...msp(), method: 'PUT', json: { connections: [{ connection_id: rmm, keys: ['rmm.device.events', 'psa.ticket.create'] }] } });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatchObject({ code: 'request_invalid', details: { kind: 'rmm', refused: ['psa.ticket.create'], allowed: ['rmm.device.events', 'rmm.device.write'] } });
    // Nothing was written: the RMM keeps its keys.
    expect((await svc.api(`/tenants/${svc.alphaId}/grants`, msp())).body.grants.find((g: any) => g.isv_id === isvId && g.kind === 'rmm').keys.sort())
      .toEqual(['rmm.device.events', 'rmm.device.write']);
  });
});

describe('turning grants off and on', () => {
  it('the ISV sees a grant turned off at once (grant_missing), and turned on again at once (success)', async () => {
    expect((await preview()).status).toBe(200);
    const current: string[] = (await svc.api(`/tenants/${svc.alphaId}/grants`, msp())).body.grants.find((g: any) => g.isv_id === isvId && g.kind === 'psa').keys;

    const off = await svc.api(`/tenants/${svc.alphaId}/grants/${isvId}`, { ...msp(), method: 'PUT', json: { connections: [{ connection_id: cwConnection, keys: current.filter((k) => k !== 'psa.ticket.create') }] } });
    expect(off.status).toBe(200);
    expect(off.body.grants.find((g: any) => g.isv_id === isvId && g.kind === 'psa').keys).not.toContain('psa.ticket.create');
    // The other connections keep their keys.
    expect(off.body.grants.filter((g: any) => g.isv_id === isvId && g.kind !== 'psa').every((g: any) => g.keys.length > 0)).toBe(true);
    const refused = await preview();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'grant_missing', needed: 'psa.ticket.create', details: { needed: 'psa.ticket.create' } });

    const on = await svc.api(`/tenants/${svc.alphaId}/grants/${isvId}`, { ...msp(), method: 'PUT', json: { connections: [{ connection_id: cwConnection, keys: current }] } });
    expect(on.status).toBe(200);
    expect((await preview()).status).toBe(200);
  });

  it('refuses an unknown grant key (422), a connection of another tenant and an unknown ISV (404)', async () => {
    const put = (isv: string, json: unknown) => svc.api(`/tenants/${svc.alphaId}/grants/${isv}`, { ...msp(), method: 'PUT', json });
    expect((await put(isvId, { connections: [{ connection_id: cwConnection, keys: ['psa.everything'] }] })).status).toBe(422);
    const betaConnection = (await svc.services.ds.query("SELECT id FROM connections WHERE tenant_id = $1 AND kind = 'psa'", [svc.betaId]))[0].id;
    expect((await put(isvId, { connections: [{ connection_id: betaConnection, keys: [] }] })).status).toBe(404);
    expect((await put('00000000-0000-0000-0000-000000000000', { connections: [{ connection_id: cwConnection, keys: [] }] })).status).toBe(404);
    expect((await put('not-an-id', { connections: [{ connection_id: cwConnection, keys: [] }] })).status).toBe(404);
  });
});

describe('roles', () => {
  it('an ISV key on the grants routes gets role_required naming the MSP role', async () => {
    for (const res of [
      await svc.api(`/tenants/${svc.alphaId}/grants`),
      await svc.api(`/tenants/${svc.alphaId}/grants/${isvId}`, { method: 'PUT', json: { connections: [{ connection_id: cwConnection, keys: [] }] } }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'role_required', details: { role: 'msp' } });
    }
  });

  it('an MSP key on an ISV write gets role_required naming the ISV role, and nothing is written', async () => {
    const before = (await svc.services.ds.query('SELECT count(*)::int AS n FROM idempotency_records'))[0].n;
    for (const [path, json] of [
      ['/tickets', { company_name: 'Contoso Dental', summary: 'x', dry_run: false, idempotency_key: 'msp-1' }],
      ['/findings/route', { kind: 'technical', title: 'x', severity: 'high', company_name: 'x', idempotency_key: 'msp-2' }],
      ['/ticket-events/webhook', { url: 'https://hooks.example.com/x' }],
    ] as const) {
      const res = await svc.api(`/tenants/${svc.alphaId}${path}`, { ...msp(), method: 'POST', json });
      expect({ path, status: res.status, code: res.body.code, role: res.body.details?.role }).toEqual({ path, status: 403, code: 'role_required', role: 'isv' });
    }
    expect((await svc.services.ds.query('SELECT count(*)::int AS n FROM idempotency_records'))[0].n).toBe(before);
  });
});

describe('issuing MSP keys through the graph', () => {
  it('issue_msp_key returns the key once; it works for its tenant only; the list never shows it; revoked, it is refused', async () => {
    const issued = await svc.graphql('mutation($t: ID!) { issue_msp_key(tenant_id: $t, label: "ops") { id key kind tenant_id prefix } }', { t: svc.betaId });
    const { id, key, kind, tenant_id: tenantId, prefix } = issued.data.issue_msp_key;
    expect({ kind, tenantId }).toEqual({ kind: 'msp', tenantId: svc.betaId });
    expect(key).toMatch(/^sk_msp_/);
    expect(key.startsWith(prefix)).toBe(true);
    expect((await svc.api(`/tenants/${svc.betaId}/grants`, { key })).status).toBe(200);
    expect((await svc.api(`/tenants/${svc.alphaId}/status`, { key })).status).toBe(404);
    const listed = await svc.graphql('query($t: ID!) { api_keys(tenant_id: $t) { keys { id prefix kind } } }', { t: svc.betaId });
    expect(JSON.stringify(listed.data)).not.toContain(key);
    expect(listed.data.api_keys.keys.map((k: any) => k.id)).toContain(id);
    await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id });
    expect((await svc.api(`/tenants/${svc.betaId}/grants`, { key })).status).toBe(401);
  });

  it('an unknown tenant is not found', async () => {
    const res = await svc.graphql('mutation { issue_msp_key(tenant_id: "00000000-0000-0000-0000-000000000000") { key } }');
    expect(res.errors[0].extensions.code).toBe('not_found');
  });
});
