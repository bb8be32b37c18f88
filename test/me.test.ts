/**
 * `GET /me` (design: the ISV's console and its API twins): any key learns whom it belongs to. An ISV key
 * answers its ISV, an MSP key its tenant, over REST and the typed graph alike; no key or a revoked one is
 * 401 like everywhere. Every answer is checked against /openapi.json by the harness.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let isvId: string;
beforeAll(async () => {
  svc = await startTestService();
  isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('GET /me', () => {
  it("answers an ISV key's ISV and an MSP key's tenant", async () => {
    expect(await svc.api('/me')).toMatchObject({ status: 200, body: { kind: 'isv', id: isvId, name: 'Sandbox ISV' } });
    expect(await svc.api('/me', { key: svc.alphaMspKey })).toMatchObject({ status: 200, body: { kind: 'tenant', id: svc.alphaId, name: 'Sandbox Alpha MSP' } });
    const beta = await svc.api('/me', { key: svc.betaMspKey });
    expect(beta.body).toMatchObject({ kind: 'tenant', id: svc.betaId });
  });

  it('answers the same over the graph, for the key that calls', async () => {
    const viaGraph = async (key: string) => ((await (await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ query: '{ me { kind id name } }' }),
    })).json()) as { data: { me: unknown } }).data.me;
    expect(await viaGraph(svc.key)).toEqual((await svc.api('/me')).body);
    expect(await viaGraph(svc.alphaMspKey)).toEqual((await svc.api('/me', { key: svc.alphaMspKey })).body);
  });

  it('is 401 without a key and for a revoked key', async () => {
    expect(await svc.api('/me', { key: null })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
    const issued = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "me test") { id key } }', { id: isvId })).data.issue_api_key;
    expect((await svc.api('/me', { key: issued.key })).body.kind).toBe('isv');
    await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id: issued.id });
    expect(await svc.api('/me', { key: issued.key })).toMatchObject({ status: 401, body: { code: 'unauthenticated' } });
  });
});
