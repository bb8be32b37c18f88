/**
 * An agent with only MCP — the URL and a key — can begin. It reads the tenants
 * resource (or the instructions), picks a tenant, and pages through tickets and installed
 * applications with default pages small enough to hold (under 50,000 characters each).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from './support/service';

const PAGE_BUDGET = 50_000;
let svc: TestService;
let agent: Client;

beforeAll(async () => {
  svc = await startTestService();
  agent = new Client({ name: 'agent', version: '1.0.0' });
  // Only the URL and the key: nothing else from the test service reaches the agent.
  await agent.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.key } } }));
}, 120_000);
afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await svc?.close();
});

const text = (r: CallToolResult) => (r.content[0] as { type: 'text'; text: string }).text;

describe('an agent with only MCP', () => {
  it('finds the tenants in a resource, the same list GET /tenants gives', async () => {
    const { resources } = await agent.listResources();
    const tenantsResource = resources.find((r) => r.uri === 'tenants://visible');
    expect(tenantsResource).toBeDefined();
    const read = await agent.readResource({ uri: tenantsResource!.uri });
    const listed = JSON.parse((read.contents[0] as { text: string }).text);
    const rest = await svc.api('/tenants');
    expect(listed).toEqual(rest.body);
    expect(listed.tenants.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([svc.alphaId, svc.betaId]));
  });

  it('is told in the instructions which tenants it sees and how to begin; the tools stay four', async () => {
    const instructions = agent.getInstructions() ?? '';
    expect(instructions).toContain(svc.alphaId);
    expect(instructions).toContain(svc.betaId);
    expect(instructions).toContain('tenants://visible');
    const { tools } = await agent.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['list_devices', 'list_installed_applications', 'list_tickets', 'route_finding']);
    expect(tools.find((t) => t.name === 'list_tickets')!.description).toMatch(/Default page: 10 records/);
  });

  it.each(['list_tickets', 'list_devices', 'list_installed_applications'])('pages through %s with every default page under 50,000 characters', async (tool) => {
    const read = await agent.readResource({ uri: 'tenants://visible' });
    const tenantId = JSON.parse((read.contents[0] as { text: string }).text).tenants.find((t: { slug: string }) => t.slug === 'sandbox-alpha').id;
    let cursor: string | null = null;
    let pages = 0;
    let records = 0;
    do {
      const result = (await agent.callTool({ name: tool, arguments: { tenant_id: tenantId, ...(cursor ? { cursor } : {}) } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(text(result).length).toBeLessThan(PAGE_BUDGET);
      const page = JSON.parse(text(result));
      records += (page.tickets ?? page.devices ?? page.applications).length;
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(records).toBeGreaterThan(10); // more than one default page: the paging was exercised
    expect(pages).toBeGreaterThan(1);
  });

  it('an MSP key finds only its own tenant, in the resource and the instructions', async () => {
    const msp = new Client({ name: 'msp-agent', version: '1.0.0' });
    await msp.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.betaMspKey } } }));
    try {
      const read = await msp.readResource({ uri: 'tenants://visible' });
      expect(JSON.parse((read.contents[0] as { text: string }).text).tenants.map((t: { id: string }) => t.id)).toEqual([svc.betaId]);
      expect(msp.getInstructions()).toContain(svc.betaId);
      expect(msp.getInstructions()).not.toContain(svc.alphaId);
    } finally {
      await msp.close();
    }
  });

  it('a bad argument comes back as the Error envelope, not plain text', async () => {
    const result = (await agent.callTool({ name: 'route_finding', arguments: { tenant_id: svc.alphaId, kind: 'technical', title: 'x', severity: 'urgent', company_name: 'x', idempotency_key: 'k' } })) as CallToolResult;
    expect(result.isError).toBe(true);
    const body = JSON.parse(text(result));
    expect(body).toMatchObject({ code: 'request_invalid', status: 422 });
    expect(body.details.detail).toEqual([expect.objectContaining({ loc: ['arguments', 'severity'] })]);
  });

  it('severity is an enum whose description states the priority it becomes', async () => {
    const { tools } = await agent.listTools();
    const severity = (tools.find((t) => t.name === 'route_finding')!.inputSchema as any).properties.severity;
    expect(severity.enum).toEqual(['critical', 'high', 'medium', 'moderate', 'low', 'info', 'informational']);
    expect(severity.description).toContain('moderate -> medium');
  });
});
