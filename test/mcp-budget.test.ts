/**
 * Every MCP tool answer fits an agent's context (docs/architecture.md, MCP; src/mcp/answer-budget.ts), over
 * real HTTP with the SDK's own client: on the richest sandbox tenant, each list tool asked for 500 whole
 * records answers a page cut to the budget, and its cursor walks exactly the records REST walks, in the
 * same order, none twice. Every tool lists an output schema, in a stable order, and every structured
 * answer (pages, a route preview and its commit) is valid against it with ajv.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { startTestService, type TestService } from './support/service';
import { budgetChars } from '../src/mcp/answer-budget';

let svc: TestService;
let client: Client;
let tools: Tool[];
const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));

beforeAll(async () => {
  svc = await startTestService();
  client = new Client({ name: 'mcp-budget-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/`), { requestInit: { headers: { 'X-API-Key': svc.key } } }));
  ({ tools } = await client.listTools());
}, 120_000);
afterAll(async () => {
  await client?.close().catch(() => undefined);
  await svc?.close();
});

const LISTS = { list_tickets: ['tickets', 'tickets'], list_devices: ['devices', 'devices'], list_installed_applications: ['applications', 'applications'] } as const;
type ListTool = keyof typeof LISTS;

/** Every record of a REST list, walked at its largest page: the ids in order. */
async function restIds(tenantId: string, path: string, field: string): Promise<{ ids: string[]; chars: number }> {
  const ids: string[] = [];
  let chars = 0;
  let cursor: string | null = null;
  for (let page = 0; page < 200; page++) {
    const res = await svc.api(`/tenants/${tenantId}/${path}?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    ids.push(...(res.body[field] as { id: string }[]).map((r) => r.id));
    chars += JSON.stringify(res.body).length;
    cursor = res.body.next_cursor;
    if (!cursor) break;
  }
  return { ids, chars };
}

function valid(toolName: string, content: unknown): void {
  const schema = tools.find((t) => t.name === toolName)!.outputSchema!;
  const check = ajv.compile(schema);
  const ok = check(content);
  if (!ok) throw new Error(`${toolName}: ${ajv.errorsText(check.errors)}`);
}

const texts = (r: CallToolResult) => r.content.filter((b) => b.type === 'text').map((b) => (b as { text: string }).text);

describe('tools are listed in a stable order, each with an output schema', () => {
  it('sorted by name, every one with an object outputSchema ajv compiles', () => {
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('route_finding');
    for (const t of tools) {
      expect(t.outputSchema).toMatchObject({ type: 'object' });
      expect(() => ajv.compile(t.outputSchema!)).not.toThrow();
    }
  });
});

describe('a list tool at limit 500, view full, on the richest tenant', () => {
  let tenantId: string;
  const budget = () => budgetChars(svc.config.mcpAnswerBudgetTokens);

  beforeAll(async () => {
    // The richest tenant: the most characters over the three lists, as REST serves them whole.
    const tenants = (await svc.api('/tenants?limit=500')).body.tenants as { id: string }[];
    let best = -1;
    for (const t of tenants) {
      let chars = 0;
      for (const [path, field] of Object.values(LISTS)) chars += (await restIds(t.id, path, field)).chars;
      if (chars > best) { best = chars; tenantId = t.id; }
    }
  }, 120_000);

  it.each(Object.keys(LISTS) as ListTool[])('%s: each answer within the budget, the cursor walks REST\'s records without a gap or a repeat', async (tool) => {
    const [path, field] = LISTS[tool];
    const rest = await restIds(tenantId, path, field);
    // The case the budget is for: REST's whole records at 500 a page are over it.
    expect(rest.chars).toBeGreaterThan(budget());
    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    for (; pages < 500; pages++) {
      const result = (await client.callTool({ name: tool, arguments: { tenant_id: tenantId, limit: 500, view: 'full', ...(cursor ? { cursor } : {}) } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const [json, sizeLine] = texts(result);
      // What the agent reads: the page's JSON and its size line.
      expect(json.length + sizeLine.length).toBeLessThanOrEqual(budget());
      expect(JSON.parse(json)).toEqual(result.structuredContent);
      valid(tool, result.structuredContent);
      const page = result.structuredContent as Record<string, unknown>;
      const records = page[field] as { id: string; raw?: unknown }[];
      expect(records.length).toBeGreaterThan(0);
      // Whole records, as REST has them (view full keeps the vendor payload).
      expect(records.every((r) => 'raw' in r)).toBe(true);
      if (page.next_cursor) expect(sizeLine).toMatch(/500 asked, cut to whole records within the answer budget/);
      walked.push(...records.map((r) => r.id));
      cursor = page.next_cursor as string | null;
      if (!cursor) break;
    }
    expect(pages).toBeGreaterThan(0);
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).toEqual(rest.ids);
  }, 300_000);

  it('a record alone over the budget is a tool error pointing to fewer fields, which walk on past it', async () => {
    // A ticket whose description alone is over a 10,000-token budget (30,000 characters), twice in full view (canonical and raw).
    const created = await svc.api(`/tenants/${svc.alphaId}/tickets`, {
      method: 'POST', json: { company_name: 'Contoso Ltd', summary: 'Budget: a very long ticket', description: 'Long log line. '.repeat(3_000), dry_run: false, idempotency_key: 'mcp-budget-long' },
    });
    expect(created.status).toBe(201);
    // Read back by the next sync, as any vendor change is.
    let stored = false;
    for (let i = 0; i < 20 && !stored; i++) {
      await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
      stored = ((await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`)).body.tickets as { source_id: string }[]).some((t) => t.source_id === created.body.ticket_ref);
    }
    expect(stored).toBe(true);
    const saved = svc.config.mcpAnswerBudgetTokens;
    svc.config.mcpAnswerBudgetTokens = 10_000;
    try {
      const call = async (args: Record<string, unknown>) => (await client.callTool({ name: 'list_tickets', arguments: { tenant_id: svc.alphaId, limit: 500, ...args } })) as CallToolResult;
      let cursor: string | null = null;
      const refused: Record<string, any>[] = [];
      const walked: string[] = [];
      for (let pages = 0; pages < 500; pages++) {
        let result = await call({ view: 'full', ...(cursor ? { cursor } : {}) });
        if (result.isError) {
          refused.push(JSON.parse(texts(result)[0]));
          // What the error says to do: the same cursor with a few fields.
          result = await call({ fields: ['summary'], limit: 1, ...(cursor ? { cursor } : {}) });
          expect(result.isError).toBeFalsy();
        }
        const [json, line] = texts(result);
        expect(json.length + line.length).toBeLessThanOrEqual(30_000);
        const page = result.structuredContent as { tickets: { id: string }[]; next_cursor: string | null };
        walked.push(...page.tickets.map((t) => t.id));
        cursor = page.next_cursor;
        if (!cursor) break;
      }
      expect(refused).toHaveLength(1);
      expect(refused[0]).toMatchObject({ code: 'request_invalid', status: 422, details: { budget_chars: 30_000 } });
      expect(refused[0].details.record_chars).toBeGreaterThan(30_000);
      expect(refused[0].message).toMatch(/view "summary" or a few `fields`/);
      expect(walked).toEqual((await restIds(svc.alphaId, 'tickets', 'tickets')).ids);
    } finally {
      svc.config.mcpAnswerBudgetTokens = saved;
    }
  }, 300_000);
});

describe('route_finding: a preview and its commit are each valid against the one output schema', () => {
  it('dry run, then commit, both checked by ajv; the commit is answered whole', async () => {
    const companies = (svc.services.simulators!.connectwise as any).list('sandbox-alpha', 'companies') as { name: string }[];
    const company = companies.find((c) => companies.filter((x) => x.name === c.name).length === 1)!.name;
    const args = { tenant_id: svc.alphaId, kind: 'technical', title: 'Budget: BitLocker off', severity: 'high', company_name: company, idempotency_key: 'mcp-budget-finding-1' };
    const preview = (await client.callTool({ name: 'route_finding', arguments: args })) as CallToolResult;
    expect(preview.isError).toBeFalsy();
    expect(preview.structuredContent).toMatchObject({ dry_run: true });
    valid('route_finding', preview.structuredContent);
    const commit = (await client.callTool({ name: 'route_finding', arguments: { ...args, dry_run: false } })) as CallToolResult;
    expect(commit.isError).toBeFalsy();
    expect(commit.structuredContent).toMatchObject({ dry_run: false, partial_failure: false });
    valid('route_finding', commit.structuredContent);
    // The schema really tells the two apart: a preview claiming to be a commit is refused.
    const schema = tools.find((t) => t.name === 'route_finding')!.outputSchema!;
    expect(ajv.validate(schema, { ...(preview.structuredContent as object), dry_run: false })).toBe(false);
  });
});

describe('protocol versions', () => {
  it.each(['2025-11-25', '2025-06-18'])('an initialize asking for %s is answered in it', async (version) => {
    const res = await fetch(`${svc.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': svc.key },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'curl', version: '0' } } }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion).toBe(version);
  });
});
