/**
 * Field selection (docs/architecture.md, Reads and MCP): an agent's default ticket page is a summary it
 * can hold and says how big it is; `fields` narrows it further; REST's `fields=` narrows the same way,
 * keeps the record's identity, and refuses an unknown name with a 422 naming `fields`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let client: Client;

beforeAll(async () => {
  svc = await startTestService();
  client = new Client({ name: 'mcp-view-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.key } } }));
}, 120_000);
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await svc?.close();
});

async function tickets(args: Record<string, unknown>) {
  const result = (await client.callTool({ name: 'list_tickets', arguments: { tenant_id: svc.alphaId, ...args } })) as CallToolResult;
  expect(result.isError).toBeFalsy();
  const texts = result.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text);
  return { result, json: texts[0], sizeLine: texts[1], items: (result.structuredContent as any).tickets as Record<string, unknown>[] };
}

describe('MCP list tools: view and fields', () => {
  it('the default ticket page is a summary of 10 tickets under 8,000 characters that states its size', async () => {
    const page = await tickets({});
    const full = await tickets({ view: 'full' });
    expect(page.items).toHaveLength(10);
    expect(page.json.length).toBeLessThan(8_000);
    // The full page carries the vendor payload twice and is several times bigger.
    expect(full.json.length).toBeGreaterThan(page.json.length * 3);
    for (const t of page.items) {
      expect(t).not.toHaveProperty('raw');
      expect(t).not.toHaveProperty('vendor');
      expect(t).toEqual(expect.objectContaining({ id: expect.any(String), source_id: expect.any(String), summary: expect.any(String), status: expect.anything() }));
    }
    expect(full.items[0]).toHaveProperty('raw');
    expect(full.items[0]).toHaveProperty('vendor.native');
    expect(page.sizeLine).toBe(`10 tickets, ${page.json.length} characters; pass cursor for more.`);
  });

  it('`fields` narrows the page further, keeping id and source_id', async () => {
    const page = await tickets({ fields: ['summary', 'status'] });
    const summary = await tickets({});
    expect(page.items).toHaveLength(10);
    for (const t of page.items) expect(Object.keys(t).sort()).toEqual(['id', 'source_id', 'status', 'summary']);
    expect(page.json.length).toBeLessThan(summary.json.length / 2);
  });

  it('an unknown field is a request_invalid tool error', async () => {
    const result = (await client.callTool({ name: 'list_tickets', arguments: { tenant_id: svc.alphaId, fields: ['nonsense'] } })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(JSON.parse((result.content[0] as { text: string }).text)).toMatchObject({ code: 'request_invalid', status: 422 });
  });
});

describe('REST fields=', () => {
  it('narrows a list and a single read to the named fields plus the identity', async () => {
    const list = await svc.api(`/tenants/${svc.alphaId}/devices?limit=3&fields=hostname,online`);
    expect(list.status).toBe(200);
    expect(list.body.devices).toHaveLength(3);
    for (const d of list.body.devices) expect(Object.keys(d).sort()).toEqual(['hostname', 'id', 'online', 'source_id']);
    expect(list.body.next_cursor).toEqual(expect.any(String));
    const next = await svc.api(`/tenants/${svc.alphaId}/devices?limit=3&fields=hostname,online&cursor=${encodeURIComponent(list.body.next_cursor)}`);
    expect(next.body.devices.map((d: any) => d.id)).not.toContain(list.body.devices[0].id);

    const one = await svc.api(`/tenants/${svc.alphaId}/devices/${list.body.devices[0].id}?fields=os`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(['id', 'os', 'source_id']);
  });

  it('answers whole records, raw and vendor.native included, without fields=', async () => {
    const list = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`);
    expect(list.body.tickets[0]).toHaveProperty('raw');
    expect(list.body.tickets[0].vendor.native).toEqual(list.body.tickets[0].raw);
  });

  it('refuses an unknown field name with a 422 naming fields', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets?fields=summary,nonsense`);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'fields'], msg: expect.stringContaining('nonsense') })]);
    const single = await svc.api(`/tenants/${svc.alphaId}/devices/anything?fields=raw2`);
    expect(single.status).toBe(422);
  });
});
