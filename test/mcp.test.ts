/**
 * MCP at POST / (docs/architecture.md, MCP), driven by the SDK's own client over real HTTP: exactly four
 * tools; the list tools answer what REST answers for the same tenant, limit and cursor; errors carry
 * REST's codes; the API key is checked before MCP and isolates ISVs exactly as on REST.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let client: Client;
let otherKey: string;
const clients: Client[] = [];
const MISSING_TENANT = '00000000-0000-4000-8000-000000000000';

async function connect(key: string): Promise<Client> {
  const c = new Client({ name: 'mcp-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': key } } }));
  clients.push(c);
  return c;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await c.callTool({ name, arguments: args })) as CallToolResult;
}

/** The JSON text block; for a success it must say the same as the structured content. */
function textJson(result: CallToolResult): any {
  const block = result.content[0];
  if (block?.type !== 'text') throw new Error(`expected a text block, got ${JSON.stringify(result.content)}`);
  return JSON.parse(block.text);
}

beforeAll(async () => {
  svc = await startTestService();
  client = await connect(svc.key);
  const isv = await svc.graphql('mutation { create_isv(name: "MCP Other ISV") { id } }');
  const issued = await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "mcp") { key } }', { id: isv.data.create_isv.id });
  otherKey = issued.data.issue_api_key.key;
}, 120_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await svc?.close();
});

describe('tools', () => {
  it('lists exactly the four tools; no ticket create', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['list_devices', 'list_installed_applications', 'list_tickets', 'route_finding']);
  });

  it('list tools take {tenant_id, limit 1..500, cursor, fields, view}', async () => {
    const { tools } = await client.listTools();
    const schema = tools.find((t) => t.name === 'list_tickets')!.inputSchema as any;
    expect(Object.keys(schema.properties).sort()).toEqual(['cursor', 'fields', 'limit', 'tenant_id', 'view']);
    expect(schema.properties.view).toMatchObject({ enum: ['summary', 'full'], default: 'summary' });
    expect(schema.required).toEqual(['tenant_id']);
    expect(schema.properties.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 500, default: 10 });
  });

  it('route_finding takes tenant_id plus the RouteFindingBody fields, dry_run defaulting to true', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'route_finding')!;
    const schema = tool.inputSchema as any;
    expect(Object.keys(schema.properties).sort()).toEqual(
      ['company_name', 'description', 'dry_run', 'idempotency_key', 'kind', 'project_source_id', 'severity', 'tenant_id', 'title'],
    );
    expect([...schema.required].sort()).toEqual(['company_name', 'idempotency_key', 'kind', 'severity', 'tenant_id', 'title']);
    expect(schema.properties.kind.enum).toEqual(['technical', 'organizational']);
    expect(schema.properties.dry_run).toMatchObject({ type: 'boolean', default: true });
    expect(tool.annotations?.readOnlyHint).toBe(false);
  });
});

describe('list tools answer what REST answers', () => {
  const cases: [string, string, 'alpha' | 'beta'][] = [
    ['list_tickets', 'tickets', 'alpha'],
    ['list_tickets', 'tickets', 'beta'],
    ['list_devices', 'devices', 'alpha'],
    ['list_installed_applications', 'applications', 'alpha'],
  ];

  it.each(cases)('%s pages through %s of sandbox-%s exactly like REST', async (tool, path, which) => {
    const tenant = which === 'alpha' ? svc.alphaId : svc.betaId;
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 40; page++) {
      const result = await call(client, tool, { tenant_id: tenant, limit: 25, view: 'full', ...(cursor ? { cursor } : {}) });
      expect(result.isError).toBeFalsy();
      const items = (result.structuredContent as any)[path] as { id: string }[];
      expect(items.length).toBeLessThanOrEqual(25);
      // A page over the answer budget is cut to fewer whole records (test/mcp-budget.test.ts): REST's page of that size.
      const rest = await svc.api(`/tenants/${tenant}/${path}?limit=${items.length}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(rest.status).toBe(200);
      expect(result.structuredContent).toEqual(rest.body);
      expect(textJson(result)).toEqual(rest.body);
      seen.push(...items.map((i) => i.id));
      cursor = (result.structuredContent as any).next_cursor ?? undefined;
      if (!cursor) break;
    }
    expect(cursor).toBeUndefined();
    expect(seen.length).toBeGreaterThan(25); // more than one page was followed
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('limit defaults to 10 (a page an agent can hold), the first 10 of REST\'s page', async () => {
    const result = await call(client, 'list_installed_applications', { tenant_id: svc.alphaId });
    const rest = await svc.api(`/tenants/${svc.alphaId}/applications?limit=10`);
    const items = (result.structuredContent as any).applications as { id: string }[];
    expect(items).toHaveLength(10);
    expect(items.map((i) => i.id)).toEqual(rest.body.applications.map((i: any) => i.id));
    expect((result.structuredContent as any).next_cursor).toBe(rest.body.next_cursor);
  });
});

describe('errors', () => {
  it('a tenant the key cannot see is a tool error with code not_found, as on REST', async () => {
    const result = await call(client, 'list_devices', { tenant_id: MISSING_TENANT });
    expect(result.isError).toBe(true);
    const rest = await svc.api(`/tenants/${MISSING_TENANT}/devices`);
    expect(textJson(result)).toMatchObject({ code: 'not_found', status: 404, message: rest.body.message });
    expect(textJson(result).doc_url).toMatch(/\/docs\/errors#not_found$/);
  });

  it.each([
    ['limit over 500', { limit: 501 }],
    ['limit 0', { limit: 0 }],
    ['a cursor this service did not issue', { cursor: 'not-a-cursor' }],
    ['an undeclared property', { updated_since: '2026-01-01T00:00:00Z' }],
  ])('input with %s is refused before anything runs', async (_n, extra) => {
    const result = await call(client, 'list_tickets', { tenant_id: svc.alphaId, ...extra });
    expect(result.isError).toBe(true);
    // The Error envelope the README promises, with every problem under details.detail.
    const body = JSON.parse((result.content[0] as { text: string }).text);
    expect(body).toMatchObject({ code: 'request_invalid', status: 422 });
    expect(body.details.detail[0].loc[0]).toBe('arguments');
  });

  it('a tenant_id that names no visible tenant (a malformed one included) is not_found, as on REST', async () => {
    const result = await call(client, 'list_tickets', { tenant_id: 'sandbox-alpha' });
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ code: 'not_found', status: 404 });
  });
});

describe('authentication and isolation', () => {
  const initialize = JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '0' } },
  });
  const post = (headers: Record<string, string>) => fetch(`${svc.url}/`, {
    method: 'POST', body: initialize,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });

  it.each([['no key', {}], ['an unknown key', { 'x-api-key': 'sk_live_nope_nope_nope_nope' }]])('%s gives HTTP 401 with the Error envelope', async (_n, headers) => {
    const res = await post(headers);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated', status: 401 });
  });

  it('a valid key initializes with a JSON (not SSE) answer and no session id', async () => {
    const res = await post({ 'x-api-key': svc.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(((await res.json()) as any).result.serverInfo.name).toBe('msp-integration-service');
  });

  it.each(['GET', 'DELETE'])('%s / is 405', async (method) => {
    const res = await fetch(`${svc.url}/`, { method, headers: { 'x-api-key': svc.key, accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('a second ISV sees nothing of the sandbox tenants: not_found, same as a missing tenant', async () => {
    const other = await connect(otherKey);
    const missing = textJson(await call(other, 'list_tickets', { tenant_id: MISSING_TENANT }));
    for (const tenant of [svc.alphaId, svc.betaId, svc.gammaId]) {
      for (const tool of ['list_tickets', 'list_devices', 'list_installed_applications']) {
        const result = await call(other, tool, { tenant_id: tenant });
        expect(result.isError).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        expect(textJson(result)).toEqual(missing);
      }
    }
    expect(missing.code).toBe('not_found');
  });
});

describe('route_finding', () => {
  // Enabled once the findings feature exposes the route_finding graph mutation (lead, src/tickets/).
  it('runs the same operation as POST /tenants/{tenant_id}/findings/route; dry_run defaults to a preview', async () => {
    const companies = (svc.services.simulators!.connectwise as any).list('sandbox-alpha', 'companies') as { name: string }[];
    const company = companies.find((c) => companies.filter((x) => x.name === c.name).length === 1)!.name;
    const body = {
      kind: 'technical', title: 'BitLocker disabled on 3 laptops', severity: 'high',
      company_name: company, idempotency_key: 'mcp-test-finding-1',
    };
    const result = await call(client, 'route_finding', { tenant_id: svc.alphaId, ...body });
    expect(result.isError).toBeFalsy();
    const rest = await svc.api(`/tenants/${svc.alphaId}/findings/route`, { method: 'POST', json: body });
    expect(rest.status).toBe(200);
    expect(result.structuredContent).toEqual(rest.body);
    expect(textJson(result)).toEqual(rest.body);
    expect((result.structuredContent as any).dry_run).toBe(true);
  });
});
