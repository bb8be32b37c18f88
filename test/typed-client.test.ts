/**
 * The README's typed client: openapi-typescript with its default flags generates the types of
 * /openapi.json, and a small openapi-fetch client written as an ISV would write it compiles under
 * `tsc --strict` without a cast: request fields that have a default (`dry_run`, `limit`) may be left
 * out, and the answers are typed (a cost row's resolution, a list's items).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { allOperations } from '../src/features';
import { buildOpenApi } from '../src/rest/openapi';
import { operationExamples, PLACEHOLDER_IDS } from '../src/rest/examples';

const root = path.join(__dirname, '..');

const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './msp-api';

const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { 'X-API-Key': 'sk_sandbox_0000000000000000000000000000dev' } });

export async function tour(tenant: string): Promise<string[]> {
  const out: string[] = [];
  const tickets = await api.GET('/tenants/{tenant_id}/tickets', { params: { path: { tenant_id: tenant }, query: { limit: 5 } } });
  // A record's fields other than its id are optional in the type: \`fields=\` may narrow the answer.
  for (const t of tickets.data?.tickets ?? []) out.push(t.id, t.summary ?? '');
  // No dry_run: a preview by default.
  const preview = await api.POST('/tenants/{tenant_id}/tickets', { params: { path: { tenant_id: tenant } }, body: { company_name: 'Contoso Ltd', summary: 'Printer offline' } });
  // An Error envelope has a code; a request-schema failure (HTTPValidationError) lists the fields.
  if (preview.error) out.push('code' in preview.error ? preview.error.code : preview.error.detail.map((d) => d.msg).join(', '));
  const cost = await api.POST('/tenants/{tenant_id}/billing/costs', {
    params: { path: { tenant_id: tenant } },
    body: { external_customer_ref: 'cust-001', product_source_id: 'edr-endpoint', period_start: '2026-11-01', period_end: '2026-11-30',
      actual_quantity: 48, billable_quantity: 48, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 148.8 },
  });
  if (cost.data) {
    out.push(cost.data.cost.resolution.status, cost.data.identified_by);
    if (cost.data.cost.resolution.fix !== null) out.push(cost.data.cost.resolution.fix);
  }
  const suggestion = await api.POST('/tenants/{tenant_id}/agreement-line-mappings/suggest', {
    params: { path: { tenant_id: tenant } }, body: { vendor_key: 'isv', vendor_product_ref: 'edr-endpoint' },
  });
  for (const c of suggestion.data?.candidates ?? []) out.push(c.agreement_line_ref);
  const approve = await api.POST('/tenants/{tenant_id}/charges/{charge_id}/approve', { params: { path: { tenant_id: tenant, charge_id: 'c' } }, body: {} });
  if (approve.data) out.push(String(approve.data.dry_run));
  await api.POST('/tenants/{tenant_id}/sync', { params: { path: { tenant_id: tenant } } });
  return out;
}
`;

describe('a typed client from /openapi.json', () => {
  it('openapi-typescript (default flags) and openapi-fetch compile under tsc --strict, defaulted fields optional', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'typed-client-'));
    try {
      const doc = buildOpenApi(allOperations(), 'http://127.0.0.1:3000', operationExamples(PLACEHOLDER_IDS));
      fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
      // The README's command, the local binary, no flags.
      execFileSync(path.join(root, 'node_modules', '.bin', 'openapi-typescript'), ['openapi.json', '-o', 'msp-api.ts'], { cwd: dir, stdio: 'pipe' });
      fs.writeFileSync(path.join(dir, 'client.ts'), CLIENT);
      fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
      const program = ts.createProgram([path.join(dir, 'client.ts')], {
        strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
        moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [], skipLibCheck: true,
      });
      const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      expect(problems).toEqual([]);

      // The same client breaks when a required field is missing: the check can fail.
      fs.writeFileSync(path.join(dir, 'client.ts'), CLIENT.replace("actual_quantity: 48, ", ''));
      const broken = ts.createProgram([path.join(dir, 'client.ts')], program.getCompilerOptions());
      expect(ts.getPreEmitDiagnostics(broken).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n')).toMatch(/actual_quantity/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
