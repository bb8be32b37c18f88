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
