/** POST /sandbox/reset: production tenants refused; sandbox re-seeded, audit cleared, one sandbox_reset event. */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

describe('POST /sandbox/reset', () => {
  it('gives 422 request_invalid for a production tenant the caller can see', async () => {
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const t = await svc.graphql('mutation { create_tenant(name: "Real MSP", slug: "real-msp") { id } }');
    const tenantId = t.data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenantId, kind: 'rmm', connector: 'ninjaone', base_url: `${svc.url}/sandbox-vendors/ninjaone`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["rmm.device.events"]) { id } }', { i: isv, c: c.data.create_connection.id });
    const res = await svc.api('/sandbox/reset', { method: 'POST', json: { tenant_id: tenantId } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('request_invalid');
  });

  it('re-seeds the simulators, re-syncs, clears the audit log and writes one sandbox_reset event', async () => {
    // The MSP changes a ticket in ConnectWise, and we sync it in.
    const cw = svc.services.simulators!.connectwise as any;
    const original = (await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`)).body.tickets.find((t: any) => t.record_type === 'ServiceTicket');
    const find = async () => (await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`)).body.tickets.find((t: any) => t.source_id === original.source_id);
    cw.update('sandbox-alpha', 'tickets', Number(original.source_id), { summary: 'Changed by the MSP' });
    await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    expect((await find()).summary).toBe('Changed by the MSP');
    expect((await svc.api(`/tenants/${svc.alphaId}/audit`)).body.audit.length).toBeGreaterThan(0);

    const res = await svc.api('/sandbox/reset', { method: 'POST', json: { tenant_id: svc.alphaId } });
    expect(res.status).toBe(200);
    expect(res.body.sandbox).toBe(true);
    expect(res.body.connections.every((c: any) => c.ok)).toBe(true);

    expect((await find()).summary).toBe(original.summary);
    expect((await svc.api(`/tenants/${svc.alphaId}/audit`)).body.audit).toEqual([]);
    const events = await svc.services.ds.query('SELECT kind FROM events WHERE tenant_id = $1', [svc.alphaId]);
    expect(events).toEqual([{ kind: 'sandbox_reset' }]);
    // Beta untouched.
    expect((await svc.api(`/tenants/${svc.betaId}/audit`)).body.audit.length).toBeGreaterThan(0);
  });
});
