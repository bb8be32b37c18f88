/**
 * MCP answers are bounded, over real HTTP: a JSON-RPC batch (no longer in the MCP specification) is
 * refused with a JSON-RPC error before the transport runs any of it, and one answer over the byte
 * cap becomes a tool error in the Error envelope telling the caller to lower `limit`.
 */
import { startTestService, type TestService } from './support/service';

/** Small, so that one sandbox page at limit 500 is over it and a page of 5 is not. */
const CAP = 64 * 1024;
let svc: TestService;
beforeAll(async () => { svc = await startTestService({ mcpMaxAnswerBytes: CAP }); }, 120_000);
afterAll(async () => { await svc?.close(); });

function listApps(id: number, limit: number) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_installed_applications', arguments: { tenant_id: svc.alphaId, limit } } };
}

async function post(body: unknown): Promise<{ status: number; bytes: number; json: any }> {
  const res = await fetch(`${svc.url}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18', 'x-api-key': svc.key,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, bytes: Buffer.byteLength(text), json: JSON.parse(text) };
}

it('refuses a JSON-RPC batch with Invalid Request, running none of it', async () => {
  const batch = Array.from({ length: 20 }, (_, i) => listApps(i + 1, 500));
  const res = await post(batch);
  expect(res.status).toBe(400);
  expect(Array.isArray(res.json)).toBe(false);
  expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/batch/i) } });
  expect(res.bytes).toBeLessThan(1024);
});

it('answers a tool error asking for a lower limit when one answer would pass the cap', async () => {
  // The page really is over the cap (REST serves the same page), and a small page is not.
  const rest = await svc.api(`/tenants/${svc.alphaId}/applications?limit=500`);
  expect(Buffer.byteLength(JSON.stringify(rest.body))).toBeGreaterThan(CAP);

  const big = await post(listApps(7, 500));
  expect(big.status).toBe(200);
  expect(big.bytes).toBeLessThan(CAP);
  expect(big.json).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: true } });
  const envelope = JSON.parse(big.json.result.content[0].text);
  expect(envelope).toMatchObject({ code: 'request_invalid', status: 422, details: { max_bytes: CAP } });
  expect(envelope.details.answer_bytes).toBeGreaterThan(CAP);
  expect(envelope.message).toMatch(/lower `limit`/);

  const small = await post(listApps(8, 5));
  expect(small.json).toMatchObject({ jsonrpc: '2.0', id: 8, result: { structuredContent: { applications: expect.any(Array) } } });
  expect(small.json.result.isError).toBeUndefined();
  expect(small.json.result.structuredContent.applications).toHaveLength(5);
});

describe('JSON-RPC errors are JSON-RPC (the SDK\'s error codes), never an internal error', () => {
  async function raw(body: string, key: string | null = svc.key): Promise<{ status: number; json: any }> {
    const res = await fetch(`${svc.url}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18', ...(key ? { 'x-api-key': key } : {}) },
      body,
    });
    return { status: res.status, json: JSON.parse(await res.text()) };
  }

  it.each(['{"jsonrpc":"2.0","id":1,"method":', '{', 'not json', '{"a":"\\ud800'])('invalid JSON %j is -32700 Parse error', async (body) => {
    const res = await raw(body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.stringMatching(/Parse error/) } });
  });

  it('invalid JSON without a key is 401 first: authentication comes before the body is read', async () => {
    const res = await raw('{', null);
    expect(res.status).toBe(401);
    expect(res.json.code).toBe('unauthenticated');
  });

  it.each([
    ['tools/call with "arguments": []', { method: 'tools/call', params: { name: 'list_tickets', arguments: [] } }, /params\.arguments/],
    ['tools/call without a tool name', { method: 'tools/call', params: { arguments: {} } }, /params\.name/],
    ['tools/call with params a number', { method: 'tools/call', params: 5 }, /params/],
    ['initialize without params', { method: 'initialize' }, /params/],
    ['initialize with a wrong protocolVersion type', { method: 'initialize', params: { protocolVersion: 1, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }, /params\.protocolVersion/],
  ])('%s is -32602 Invalid params with a short message', async (_name, request, mentions) => {
    const res = await raw(JSON.stringify({ jsonrpc: '2.0', id: 9, ...request }));
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32602 } });
    expect(res.json.error.message).toMatch(mentions);
    expect(res.json.error.message.length).toBeLessThan(400);
  });

  it('an unknown method is -32601; an unknown tool and wrong argument types are tool errors', async () => {
    expect((await raw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'no/such' }))).json.error.code).toBe(-32601);
    // The SDK answers an unknown tool as a tool error naming it.
    const unknownTool = (await raw(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } }))).json;
    expect(unknownTool.result).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/no_such_tool/) }] });
    const wrong = await raw(JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_tickets', arguments: { tenant_id: 5, limit: 'ten' } } }));
    expect(wrong.json.result.isError).toBe(true);
    expect(JSON.parse(wrong.json.result.content[0].text)).toMatchObject({ code: 'request_invalid', status: 422 });
  });
});
