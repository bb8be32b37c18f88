/**
 * The ISV's request log (docs/architecture.md, Request log): a failing request's `request_id` finds its
 * entry with its route, status and error code; the filters and the list contract; an ISV sees only its
 * own keys' requests and an MSP key none; no secret is kept anywhere (every entry of the log, its rows
 * as stored, and every line the service logged during the run), with vendor credentials pasted on a
 * connect page, a webhook secret and a connect link minted, and a freshly issued key used; entries older
 * than REQUEST_LOG_DAYS are gone after the prune.
 */
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '../src/shared/logger';
import { ConnectPageClient, sandboxBase } from './support/connect-page';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const logLines: string[] = [];
let sandboxIsv: string;

beforeAll(async () => {
  const stream = new Writable({ write(chunk, _enc, cb) { logLines.push(String(chunk)); cb(); } });
  svc = await startTestService({ webhookAllowLoopback: true }, { logger: createLogger('debug', stream) });
  sandboxIsv = ((await svc.services.access.authenticate(svc.key)) as { isvId: string }).isvId;
}, 120_000);
afterAll(async () => { await svc?.close(); });

/** What waits in the recorder's buffer is written now (it would be within a second). */
const settle = () => svc.services.requestRecorder.flush();
const rid = (what: string) => `${what}-${randomBytes(6).toString('hex')}`;

async function newIsv(name: string): Promise<{ id: string; key: string; keyId: string }> {
  const id = (await svc.graphql('mutation($n: String!) { create_isv(name: $n) { id } }', { n: name })).data.create_isv.id as string;
  const issued = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "log") { id key } }', { id })).data.issue_api_key;
  return { id, key: issued.key, keyId: issued.id };
}

/** Every entry of the caller's log, all pages. */
async function everyEntry(key?: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page = await svc.api(`/requests?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { ...(key ? { key } : {}) });
    expect(page.status).toBe(200);
    all.push(...page.body.requests);
    cursor = page.body.next_cursor;
    if (!cursor) break;
  }
  return all;
}

describe('the request log', () => {
  it('finds a failing request by the request_id of its Error envelope, with its route, status and error code', async () => {
    const missing = '5b0c2f52-0000-4000-8000-000000000000';
    const refused = await svc.api(`/tenants/${missing}/tickets?limit=5`);
    expect(refused.status).toBe(404);
    const id = refused.body.request_id as string;
    expect(refused.headers.get('x-request-id')).toBe(id);
    const invalid = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=0`);
    expect(invalid.status).toBe(422);
    await settle();

    const entry = await svc.api(`/requests/${id}`);
    expect(entry.status).toBe(200);
    expect(entry.body).toMatchObject({
      id, method: 'GET', path: `/tenants/${missing}/tickets`, route: '/tenants/{tenant_id}/tickets', tenant_id: missing, status: 404,
      error_code: 'not_found', surface: 'rest', key_prefix: svc.key.slice(0, 12), query: 'limit=5', request_body: null,
    });
    expect(JSON.parse(entry.body.response_body)).toMatchObject({ code: 'not_found', request_id: id });
    expect((await svc.api(`/requests/${invalid.body.request_id}`)).body).toMatchObject({ status: 422, error_code: 'request_invalid', tenant_id: svc.alphaId });
    const listed = await svc.api(`/requests?status=404&route=${encodeURIComponent('/tenants/{tenant_id}/tickets')}`);
    expect(listed.body.requests.map((r: any) => r.id)).toContain(id);
    expect(listed.body.requests[0]).not.toHaveProperty('response_body');
  });

  it('records MCP, the graph, and 401 answers of a known (revoked) key, never one of a key that names nobody', async () => {
    const mcpId = rid('mcp');
    const mcp = await fetch(`${svc.url}/`, {
      method: 'POST',
      headers: { 'x-api-key': svc.key, 'x-request-id': mcpId, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(mcp.status).toBe(200);
    const graphId = rid('graph');
    const graph = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'x-api-key': svc.key, 'x-request-id': graphId, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(graph.status).toBe(200);

    const other = await newIsv('Revoked Key ISV');
    await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id: other.keyId });
    await svc.services.access.invalidate();
    const revokedId = rid('revoked');
    expect((await svc.api('/tenants', { key: other.key, headers: { 'x-request-id': revokedId } })).status).toBe(401);
    const nobodyId = rid('nobody');
    expect((await svc.api('/tenants', { key: `sk_live_${randomBytes(24).toString('base64url')}`, headers: { 'x-request-id': nobodyId } })).status).toBe(401);
    await settle();

    expect((await svc.api(`/requests/${mcpId}`)).body).toMatchObject({ surface: 'mcp', route: '/', method: 'POST', status: 200, error_code: null });
    expect((await svc.api(`/requests/${graphId}`)).body).toMatchObject({ surface: 'graphql', route: '/graphql', method: 'POST', status: 200, error_code: null });
    const revoked = await svc.services.ds.query('SELECT isv_id, status, error_code FROM request_log WHERE id = $1', [revokedId]);
    expect(revoked).toEqual([{ isv_id: other.id, status: 401, error_code: 'unauthenticated' }]);
    expect(await svc.services.ds.query('SELECT 1 FROM request_log WHERE id = $1', [nobodyId])).toEqual([]);
  });

  it('filters by status, route, tenant and time, and pages newest first, each entry once', async () => {
    const ids = [rid('page-a'), rid('page-b'), rid('page-c')];
    for (const id of ids) expect((await svc.api(`/tenants/${svc.betaId}/status`, { headers: { 'x-request-id': id } })).status).toBe(200);
    await settle();
    const route = encodeURIComponent('/tenants/{tenant_id}/status');
    const walked: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const page = await svc.api(`/requests?route=${route}&tenant_id=${svc.betaId}&status=2xx&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.requests.length).toBeLessThanOrEqual(1);
      walked.push(...page.body.requests.map((r: any) => r.id));
      cursor = page.body.next_cursor;
      if (!cursor) break;
    }
    expect(walked).toEqual([...ids].reverse());
    expect((await svc.api(`/requests?route=${route}&tenant_id=${svc.betaId}&status=4xx`)).body.requests).toEqual([]);
    expect((await svc.api(`/requests?route=${route}&tenant_id=${svc.alphaId}`)).body.requests.map((r: any) => r.id)).not.toContain(ids[0]);
    expect((await svc.api(`/requests?route=${route}&since=2999-01-01T00:00:00Z`)).body.requests).toEqual([]);
    for (const bad of ['status=42', 'since=yesterday', 'cursor=abc', 'nope=1']) expect((await svc.api(`/requests?${bad}`)).status).toBe(422);
  });

  it('shows an ISV only its own keys\' requests; an MSP key is refused', async () => {
    const b = await newIsv('Other Log ISV');
    const bId = rid('isv-b');
    expect((await svc.api('/tenants', { key: b.key, headers: { 'x-request-id': bId } })).status).toBe(200);
    const aId = rid('isv-a');
    expect((await svc.api('/tenants', { headers: { 'x-request-id': aId } })).status).toBe(200);
    await settle();
    const bEntries = await everyEntry(b.key);
    expect(bEntries.map((r) => r.id)).toEqual([bId]);
    expect((await svc.api(`/requests/${aId}`, { key: b.key })).status).toBe(404);
    expect((await svc.api(`/requests/${bId}`)).status).toBe(404);
    expect((await everyEntry()).map((r) => r.id)).not.toContain(bId);
    const msp = await svc.api('/requests', { key: svc.alphaMspKey });
    expect(msp.status).toBe(403);
    expect(msp.body.code).toBe('role_required');
  });

  it('keeps no secret: not in any entry, not in the stored rows, not in any log line', async () => {
    const secrets: string[] = [svc.key];
    // A connect session (its link's token in the answer), and vendor credentials pasted on its page.
    const session = await svc.api('/connect-sessions', { method: 'POST', json: { msp_name: 'Redaction MSP', kinds: ['psa'], requested_grants: [] } });
    expect(session.status).toBe(201);
    const page = ConnectPageClient.fromUrl(session.body.connect_url);
    secrets.push(page.token);
    const vendor = { companyId: 'sandbox', publicKey: `pub-${randomBytes(9).toString('hex')}`, privateKey: `priv-${randomBytes(9).toString('hex')}`, clientId: '00000000-0000-0000-0000-000000000000' };
    secrets.push(vendor.publicKey, vendor.privateKey);
    expect((await page.test('psa', 'connectwise', sandboxBase(svc).connectwise, vendor)).status).toBeLessThan(500);
    // A webhook: its secret is in the answer, once.
    const hook = await svc.api(`/tenants/${svc.alphaId}/ticket-events/webhook`, { method: 'POST', json: { url: 'http://127.0.0.1:9/request-log' } });
    expect(hook.status).toBe(201);
    secrets.push(hook.body.secret);
    // A key issued now, used with secret headers, and pasted into a body the answer echoes.
    const fresh = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "fresh") { key } }', { id: sandboxIsv })).data.issue_api_key.key as string;
    secrets.push(fresh, 'bearer-value-0123456789', 'cookie-value-0123456789');
    const echoed = await svc.api(`/tenants/${svc.alphaId}/tickets`, {
      method: 'POST', key: fresh, headers: { authorization: 'Bearer bearer-value-0123456789', cookie: 'sid=cookie-value-0123456789' },
      json: { company_name: 'Contoso Ltd', summary: `pasted ${fresh} and ${hook.body.secret}` },
    });
    expect(echoed.status).toBeLessThan(500);
    await settle();

    const entries = await everyEntry();
    expect(entries.map((e) => e.id)).toEqual(expect.arrayContaining([session.body.request_id ?? session.headers.get('x-request-id'), hook.headers.get('x-request-id'), echoed.headers.get('x-request-id')]));
    const details = await Promise.all(entries.map(async (e) => (await svc.api(`/requests/${encodeURIComponent(e.id)}`)).body));
    const hookEntry = details.find((d) => d.id === hook.headers.get('x-request-id'));
    expect(JSON.parse(hookEntry.response_body)).toMatchObject({ secret: '[redacted]', url: 'http://127.0.0.1:9/request-log' });
    const echoedEntry = details.find((d) => d.id === echoed.headers.get('x-request-id'));
    expect(echoedEntry.request_headers).toEqual(expect.arrayContaining([
      { name: 'x-api-key', value: '[redacted]' }, { name: 'authorization', value: '[redacted]' }, { name: 'cookie', value: '[redacted]' },
    ]));
    expect(echoedEntry.key_prefix).toBe(fresh.slice(0, 12));

    const rows = JSON.stringify(await svc.services.ds.query('SELECT * FROM request_log'));
    const everything = [JSON.stringify(entries), JSON.stringify(details), rows, logLines.join('\n')];
    for (const secret of secrets) {
      for (const [i, text] of everything.entries()) expect({ where: ['entries', 'details', 'rows', 'log'][i], found: text.includes(secret) }).toEqual({ where: ['entries', 'details', 'rows', 'log'][i], found: false });
    }
  });

  it('prunes entries older than REQUEST_LOG_DAYS and keeps the rest', async () => {
    const now = Date.now();
    const days = svc.config.requestLog.days;
    const base = {
      isvId: sandboxIsv, apiKeyId: null, keyPrefix: 'sk_old', method: 'GET', path: '/tenants', route: '/tenants', tenantId: null, status: 200,
      durationMs: 1, errorCode: null, surface: 'rest' as const, query: null, requestHeaders: [], requestBody: null, requestBodyTruncated: false,
      responseHeaders: [], responseBody: null, responseBodyTruncated: false,
    };
    const [old, recent] = [rid('old'), rid('recent')];
    await svc.services.requestLog.store.insertMany([
      { ...base, id: old, at: new Date(now - (days + 1) * 86_400_000) },
      { ...base, id: recent, at: new Date(now - (days - 1) * 86_400_000) },
    ]);
    expect((await svc.api(`/requests/${old}`)).status).toBe(200);
    expect(await svc.services.requestLog.prune(now)).toBeGreaterThanOrEqual(1);
    expect((await svc.api(`/requests/${old}`)).status).toBe(404);
    expect((await svc.api(`/requests/${recent}`)).status).toBe(200);
  });

  it('counts what it drops in /metrics', async () => {
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/msp_request_log_dropped_total\{reason="full"\} \d+/);
    expect(metrics).toMatch(/msp_request_log_dropped_total\{reason="store"\} \d+/);
  });
});
