/**
 * PostgreSQL + Redis only (several api processes share one database): a key revoked through one api
 * process is refused by another at once, not after the other's 5 s cache. Two services
 * on the same schema and queue prefix stand for two processes: each has its own caches and its own
 * Redis connections, exactly as separate processes would.
 */
import { randomBytes } from 'node:crypto';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';
import { startTestService, type TestService } from './support/service';

const suite = runtime.databaseUrl && runtime.redisUrl ? describe : describe.skip;

suite('revocation across processes', () => {
  const schema = `t_${uniqueSuffix()}`;
  const prefix = `revoke-${uniqueSuffix()}`;
  const env = { ENCRYPTION_KEY: randomBytes(32).toString('base64') };
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    a = await startTestService({ queuePrefix: prefix }, { env, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: false } });
    b = await startTestService({ queuePrefix: prefix }, { env, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: true } });
  }, 180_000);
  afterAll(async () => { await b?.close(); await a?.close(); await forgetRedisKeys(runtime.redisUrl, `${prefix}:`); });

  it('a key revoked in one process is refused by the other on the next request', async () => {
    const isv = await a.graphql('mutation { create_isv(name: "Revoked ISV") { id } }');
    const issued = await a.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "r") { id key } }', { id: isv.data.create_isv.id });
    const { id, key } = issued.data.issue_api_key;
    // Both processes have the key cached as valid.
    expect((await a.api('/tenants', { key })).status).toBe(200);
    expect((await b.api('/tenants', { key })).status).toBe(200);
    const revoked = await a.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id });
    expect(revoked.data.revoke_api_key.revoked).toBe(true);
    // The publish has been acknowledged by Redis when revoke answered; delivery to the other process takes
    // a moment: allow it at most 200 ms (well inside one request), never the cache's 5 s.
    let status = 0;
    for (let i = 0; i < 20; i++) {
      status = (await b.api('/tenants', { key })).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toBe(401);
    expect((await a.api('/tenants', { key })).status).toBe(401);
  });
});
