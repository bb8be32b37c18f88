/**
 * The isolation matrix (docs/architecture.md, Proof): every tenant-scoped operation of /openapi.json, over
 * REST, MCP and GraphQL, called on the sandbox-alpha tenant by four callers that must learn nothing of it:
 * another ISV (with a grant on a tenant of its own), the other sandbox tenants' MSP keys, no key and a
 * revoked key. Only 401 or 404 may come back, as an Error envelope, and no answer may carry alpha's
 * data; an operation that names its tenant in the body and is for one kind of key only may answer the
 * other kind `role_required` first (decided before the tenant is read, so it tells nothing of it). The operations are read from the document, so every operation added later is in the matrix.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { baseRequest, documentedOperations, rng, SchemaWalker } from './support/openapi-fuzz';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let doc: any;
let callers: { name: string; key: string | null; expect: number; kind?: 'isv' | 'msp' }[];
/** Strings only alpha's data holds: a leak shows up as one of them in an answer. */
let alphaMarkers: string[];

beforeAll(async () => {
  svc = await startTestService();
  doc = await (await fetch(`${svc.url}/openapi.json`)).json();
  const isv = await svc.graphql('mutation { create_isv(name: "Matrix ISV") { id } }');
  const isvId = isv.data.create_isv.id;
  const issue = async () => (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "m") { id key } }', { id: isvId })).data.issue_api_key;
  const other = await issue();
  const revoked = await issue();
  // The other ISV holds a grant on a tenant of its own, so it is a real, working caller.
  const tenant = await svc.graphql('mutation { create_tenant(name: "Matrix MSP", slug: "matrix-msp") { id } }');
  const conn = await svc.graphql(
    'mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }',
    { input: { tenant_id: tenant.data.create_tenant.id, kind: 'psa', connector: 'connectwise', base_url: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
      credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' } } },
  );
  await svc.graphql('mutation($isv: ID!, $c: ID!) { set_grant(isv_id: $isv, connection_id: $c, keys: ["psa.ticket.create", "psa.ticket.events"]) { id } }',
    { isv: isvId, c: conn.data.create_connection.id });
  expect((await svc.api('/tenants', { key: revoked.key })).status).toBe(200);
  await svc.graphql('mutation($id: ID!) { revoke_api_key(id: $id) { revoked } }', { id: revoked.id });
  callers = [
    { name: 'another ISV', key: other.key, expect: 404, kind: 'isv' },
    { name: "the other tenant's MSP key", key: svc.betaMspKey, expect: 404, kind: 'msp' },
    { name: "the N-central tenant's MSP key", key: svc.gammaMspKey, expect: 404, kind: 'msp' },
    { name: 'no key', key: null, expect: 401 },
    { name: 'a revoked key', key: revoked.key, expect: 401 },
  ];
  const tickets = (await svc.api(`/tenants/${svc.alphaId}/tickets?limit=5`)).body.tickets as any[];
  alphaMarkers = ['Sandbox Alpha', ...tickets.map((t) => t.id), ...tickets.map((t) => t.summary)];
}, 120_000);
afterAll(async () => { await svc?.close(); });

const fill = (template: string, values: Record<string, string>) => template.replace(/\{([^}]+)\}/g, (_m, n) => encodeURIComponent(values[n] ?? 'x'));

describe('REST', () => {
  it('every tenant-scoped operation x every outside caller: only 401 or 404, nothing of alpha in the answer', async () => {
    const walker = new SchemaWalker(doc);
    const tenantInBody = (o: any) => Boolean(walker.resolve(o.op.requestBody?.content?.['application/json']?.schema ?? {}).properties?.tenant_id);
    const ops = documentedOperations(doc).filter((o) => o.template.includes('{tenant_id}') || tenantInBody(o));
    expect(ops.length).toBeGreaterThan(40);
    const leaks: string[] = [];
    const outsiderAnswer = new Map<string, string>();
    let cells = 0;
    for (const o of ops) {
      const b = baseRequest(doc, o, { baseUrl: svc.url, tenantIds: [svc.alphaId], isvKey: svc.key, mspKey: svc.alphaMspKey }, rng(7));
      if (tenantInBody(o)) b.body = { ...b.body, tenant_id: svc.alphaId };
      // A sandbox change's `connection_id` belongs to the credential changes only (a flat object for GraphQL's
      // sake): the generated body must be a valid one, so the answer is about the tenant, not the body.
      if (o.template === '/sandbox/simulate' && b.body?.change && !String(b.body.change.kind).startsWith('credentials_')) delete b.body.change.connection_id;
      const path = fill(o.template, { ...b.pathValues, tenant_id: svc.alphaId }) + (b.query.length ? `?${b.query.join('&')}` : '');
      for (const c of callers) {
        cells++;
        const headers: Record<string, string> = {};
        if (c.key) headers['x-api-key'] = c.key;
        if (b.body !== undefined) headers['content-type'] = 'application/json';
        const res = await fetch(`${svc.url}${path}`, { method: o.method, headers, body: b.body === undefined ? undefined : JSON.stringify(b.body) });
        const text = await res.text();
        const code = (() => { try { return JSON.parse(text).code; } catch { return null; } })();
        const roleFirst = tenantInBody(o) && c.kind === 'msp' && /ISV key only/.test(o.op.description ?? '');
        const wanted = c.expect === 401 ? 'unauthenticated' : roleFirst ? 'role_required' : 'not_found';
        const status = roleFirst && c.expect === 404 ? 403 : c.expect;
        if (c.expect === 404) outsiderAnswer.set(o.template + o.method, (() => { try { return JSON.parse(text).message; } catch { return text; } })());
        if (res.status !== status || code !== wanted || alphaMarkers.some((m) => m && text.includes(m))) {
          leaks.push(`${o.method} ${o.template} as ${c.name}: ${res.status} ${text.slice(0, 160)}`);
        }
      }
    }
    expect(leaks).toEqual([]);
    expect(cells).toBe(ops.length * callers.length);
    // Control: the same requests reach alpha for its own callers (the 404s above are not the request's fault).
    for (const o of ops.filter((x) => (x.template.match(/\{/g) ?? []).length === 1)) {
      const b = baseRequest(doc, o, { baseUrl: svc.url, tenantIds: [svc.alphaId], isvKey: svc.key, mspKey: svc.alphaMspKey }, rng(7));
      const required = new Set(b.params.filter((p: any) => p.in === 'query' && p.required).map((p: any) => encodeURIComponent(p.name)));
      const query = b.query.filter((q) => required.has(q.split('=')[0]));
      const path = fill(o.template, { tenant_id: svc.alphaId }) + (query.length ? `?${query.join('&')}` : '');
      const answers: string[] = [];
      for (const key of [svc.key, svc.alphaMspKey]) {
        const res = await fetch(`${svc.url}${path}`, {
          method: o.method, headers: { 'x-api-key': key, ...(b.body !== undefined ? { 'content-type': 'application/json' } : {}) },
          body: b.body === undefined ? undefined : JSON.stringify(b.body),
        });
        const text = await res.text();
        answers.push(res.status === 404 ? (() => { try { return JSON.parse(text).message; } catch { return text; } })() : String(res.status));
      }
      // At least one of alpha's own callers gets past the tenant: not the answer an outsider got.
      expect([o.method, o.template, answers.every((a) => a === outsiderAnswer.get(o.template + o.method) || a === '401')]).toEqual([o.method, o.template, false]);
    }
  }, 300_000);

  it('the tenant list of an outside caller never names alpha', async () => {
    for (const c of callers.filter((x) => x.expect === 404)) {
      const res = await svc.api('/tenants', { key: c.key });
      expect(res.status).toBe(200);
      expect(res.body.tenants.map((t: any) => t.id)).not.toContain(svc.alphaId);
    }
  });
});

describe('MCP', () => {
  it('every tool on alpha: not_found for a key that cannot see it, 401 without a working key', async () => {
    const failures: string[] = [];
    for (const c of callers) {
      if (c.expect === 401) {
        const res = await fetch(`${svc.url}/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(c.key ? { 'x-api-key': c.key } : {}) },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tickets', arguments: { tenant_id: svc.alphaId } } }),
        });
        if (res.status !== 401) failures.push(`${c.name}: ${res.status}`);
        continue;
      }
      const client = new Client({ name: 'matrix', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': c.key! } } }));
      try {
        const { tools } = await client.listTools();
        expect(tools.length).toBe(4);
        for (const tool of tools) {
          // A valid call for the tool's own input schema, on alpha.
          const sample = new SchemaWalker({}).sample(tool.inputSchema, rng(3)) as Record<string, unknown>;
          const required = new Set((tool.inputSchema.required ?? []) as string[]);
          const args = { ...Object.fromEntries(Object.entries(sample).filter(([k]) => required.has(k))), tenant_id: svc.alphaId };
          const result = await client.callTool({ name: tool.name, arguments: args });
          const text = JSON.stringify(result.content);
          if (!result.isError || !text.includes('not_found') || alphaMarkers.some((m) => m && text.includes(m))) failures.push(`${tool.name} as ${c.name}: ${text.slice(0, 200)}`);
        }
      } finally {
        await client.close();
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('GraphQL', () => {
  it('an API key on the graph is the same caller as on REST: outsiders get not_found, no or a revoked key 401, nothing of alpha', async () => {
    for (const c of callers) {
      const res = await fetch(`${svc.url}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json', ...(c.key ? { 'x-api-key': c.key } : {}) },
        body: JSON.stringify({ query: 'query($t: ID!) { list_tickets(tenant_id: $t) { tickets { id summary } } }', variables: { t: svc.alphaId } }),
      });
      const text = await res.text();
      if (c.expect === 401) {
        expect([c.name, res.status, JSON.parse(text).code]).toEqual([c.name, 401, 'unauthenticated']);
      } else {
        expect([c.name, JSON.parse(text).errors?.[0]?.extensions?.code]).toEqual([c.name, 'not_found']);
      }
      for (const m of alphaMarkers) if (m) expect(text).not.toContain(m);
    }
    // A key as a bearer token is not the admin token.
    const bearer = await fetch(`${svc.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.key}` },
      body: JSON.stringify({ query: 'query($t: ID!) { list_tickets(tenant_id: $t) { tickets { id } } }', variables: { t: svc.alphaId } }),
    });
    expect(bearer.status).toBe(401);
  });
});
