/**
 * The CI-sized fuzz run (docs/architecture.md, Proof): every operation of /openapi.json, a plausible request
 * and its mutations, against the running sandbox. No answer may be a 500 (or an undocumented 5xx), every
 * error body must be an Error or an HTTPValidationError, every answer documented for its operation.
 * `npm run bench` runs the same generator at >= 10,000 requests.
 */
import { describeFindings, FuzzRunner } from './support/openapi-fuzz';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'false' } }); }, 120_000);
afterAll(async () => { await svc?.close(); });

const PER_OPERATION = Number(process.env.FUZZ_PER_OPERATION ?? 12);
const MCP_REQUESTS = Number(process.env.FUZZ_MCP_REQUESTS ?? 300);

it('answers every fuzzed request of every operation without a 5xx, inside the envelope, as documented', async () => {
  const doc: any = await (await fetch(`${svc.url}/openapi.json`)).json();
  const runner = new FuzzRunner(doc, { baseUrl: svc.url, tenantIds: [svc.alphaId, svc.betaId, svc.gammaId], isvKey: svc.key, mspKey: svc.alphaMspKey });
  const report = await runner.run({ perOperation: PER_OPERATION, seed: Number(process.env.FUZZ_SEED ?? 1), concurrency: 3, percentPaths: 2, mcp: MCP_REQUESTS });
  const operations = Object.values(doc.paths as Record<string, object>).reduce((n, m) => n + Object.keys(m).length, 0);
  expect(report.requests).toBe(operations * PER_OPERATION);
  // Dates past the ends of the range and cursors of other lists, tenants and keys were among them.
  expect(report.extremeDateRequests).toBeGreaterThan(0);
  expect(report.foreignCursorRequests).toBeGreaterThan(0);
  expect(describeFindings(report.serverErrors)).toBe('');
  expect(describeFindings(report.outsideEnvelope)).toBe('');
  expect(describeFindings(report.undocumented)).toBe('');
  // Paths whose escapes do not decode: authentication first, then 404; MCP's JSON-RPC: never -32603.
  expect(report.percentPathRequests).toBeGreaterThan(operations);
  expect(describeFindings(report.percentPathUnexpected)).toBe('');
  expect(report.mcpRequests).toBe(MCP_REQUESTS);
  expect(describeFindings(report.rpcInternalErrors)).toBe('');
  console.log(JSON.stringify({ requests: report.requests, percentPathRequests: report.percentPathRequests, mcpRequests: report.mcpRequests, extremeDateRequests: report.extremeDateRequests, foreignCursorRequests: report.foreignCursorRequests, byStatus: report.byStatus }));
  // The service still answers normally afterwards.
  expect((await svc.api(`/tenants/${svc.alphaId}/tickets?limit=1`)).status).toBe(200);
}, 900_000);
