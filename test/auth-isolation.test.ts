/**
 * Keys and tenant isolation: no key, an unknown key and a revoked key are 401; a second ISV sees none
 * of the sandbox ISV's tenants on any read (404, exactly as for a tenant that does not exist); keys are
 * stored hashed; /graphql takes the admin token or an API key, and an API key never opens an admin field.
 */
import { createHash } from 'node:crypto';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let otherKey: string;
let otherKeyId: string;
let otherTenantId: string;
beforeAll(async () => {
  svc = await startTestService();
  const isv = await svc.graphql('mutation { create_isv(name: "Other ISV") { id } }');
  const issued = await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "ci") { id key prefix } }', { id: isv.data.create_isv.id });
  otherKey = issued.data.issue_api_key.key;
  otherKeyId = issued.data.issue_api_key.id;
  const tenant = await svc.graphql('mutation { create_tenant(name: "Other MSP", slug: "other-msp") { id } }');
  otherTenantId = tenant.data.create_tenant.id;
  const conn = await svc.graphql(
    `mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id connector limited } }`,
    { input: { tenant_id: otherTenantId, kind: 'psa', connector: 'connectwise', base_url: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
      credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' } } },
  );
  await svc.graphql('mutation($isv: ID!, $c: ID!) { set_grant(isv_id: $isv, connection_id: $c, keys: ["psa.ticket.create"]) { id } }',
    { isv: isv.data.create_isv.id, c: conn.data.create_connection.id });
}, 120_000);
afterAll(async () => { await svc?.close(); });

const READS = ['tickets', 'devices', 'agreements', 'members', 'ticket-boards', 'ticket-statuses', 'ticket-priorities',
  'applications', 'incidents', 'connections', 'audit', 'status'];

describe('authentication', () => {
  it.each([['no key', null], ['unknown key', 'sk_live_nope_nope_nope_nope']])('%s gives 401 unauthenticated', async (_n, key) => {
    for (const path of ['/tenants', `/tenants/${svc.alphaId}/tickets`]) {
      const res = await svc.api(path, { key });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthenticated', status: 401 });
      expect(res.body.doc_url).toMatch(/\/docs\/errors#unauthenticated$/);
      expect(typeof res.body.message).toBe('string');
    }
  });

  it('stores keys as SHA-256 hashes with a display prefix only', async () => {
    const rows = await svc.services.ds.query('SELECT key_hash, prefix FROM api_keys');
    const sha = createHash('sha256').update(otherKey).digest('hex');
    expect(rows.some((r: any) => r.key_hash === sha && otherKey.startsWith(r.prefix))).toBe(true);
    const dump = JSON.stringify(await svc.services.ds.query('SELECT * FROM api_keys'));
    expect(dump).not.toContain(otherKey);
    expect(dump).not.toContain(svc.key);
  });

  it('/graphql refuses a caller without credentials, and an API key is not an admin token', async () => {
    const none = await fetch(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ isvs { id } }' }) });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { code: string }).code).toBe('unauthenticated');
    // A key as a bearer token is a wrong admin token.
    const bearer = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.key}` }, body: JSON.stringify({ query: '{ isvs { id } }' }),
    });
    expect(bearer.status).toBe(401);
    // A key in X-API-Key is an ISV (or MSP) caller: the admin fields refuse it by role, and nothing of them is answered.
    for (const key of [svc.key, svc.alphaMspKey]) {
      const res = await fetch(`${svc.url}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ query: '{ isvs { isvs { id } } }' }),
      });
      const body = (await res.json()) as { data: unknown; errors: { extensions: { code: string; details: { role: string } } }[] };
      expect([res.status, body]).toMatchObject([200, { data: null }]);
      expect(body.errors[0].extensions).toMatchObject({ code: 'role_required', details: { role: 'admin' } });
    }
  });
});

describe('tenant isolation', () => {
  it('the second ISV lists only its own tenant', async () => {
    const res = await svc.api('/tenants', { key: otherKey });
    expect(res.status).toBe(200);
    expect(res.body.tenants.map((t: any) => t.id)).toEqual([otherTenantId]);
  });

  it.each(READS)('GET %s of a sandbox tenant is 404 for the second ISV, same as a missing tenant', async (path) => {
    for (const tenant of [svc.alphaId, svc.betaId, svc.gammaId]) {
      const res = await svc.api(`/tenants/${tenant}/${path}`, { key: otherKey });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
      const missing = await svc.api(`/tenants/00000000-0000-4000-8000-000000000000/${path}`, { key: otherKey });
      expect(missing.status).toBe(404);
      expect(missing.body.message).toBe(res.body.message);
    }
  });

  it('sync and sandbox reset of a tenant it cannot see are 404 too', async () => {
    expect((await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', key: otherKey, json: {} })).status).toBe(404);
    expect((await svc.api('/sandbox/reset', { method: 'POST', key: otherKey, json: { tenant_id: svc.alphaId } })).status).toBe(404);
  });

  it('the sandbox ISV cannot see the second ISV tenant either', async () => {
    const res = await svc.api(`/tenants/${otherTenantId}/tickets`);
    expect(res.status).toBe(404);
  });

  it('the second ISV reads its own tenant after a sync, served from the store', async () => {
    const sync = await svc.api(`/tenants/${otherTenantId}/sync`, { method: 'POST', key: otherKey, json: {} });
    expect(sync.status).toBe(200);
    expect(sync.body.ok).toBe(true);
    const res = await svc.api(`/tenants/${otherTenantId}/tickets?limit=5`, { key: otherKey });
    expect(res.status).toBe(200);
    expect(res.body.sandbox).toBe(false);
    expect(res.body.tickets).toHaveLength(5);
  });

  it('a revoked key is refused at once', async () => {
    expect((await svc.api('/tenants', { key: otherKey })).status).toBe(200);
    const revoked = await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id: otherKeyId });
    expect(revoked.data.revoke_api_key.revoked).toBe(true);
    const res = await svc.api('/tenants', { key: otherKey });
    expect(res.status).toBe(401);
  });
});
