/**
 * The README's typed client: openapi-typescript with its default flags generates the types of
 * /openapi.json, and what an ISV writes against it compiles under `tsc --strict` with no cast and no
 * non-null assertion: README's own snippet (read from README.md), and a program that pages every device
 * into `Device[]`, reads a ticket's summary as a string, commits a ticket and reads `error.code` on any
 * error body. Request fields that have a default (`dry_run`, `limit`) may be left out. The TypeScript
 * major is the one the generator supports (its peer range).
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

/** The first ```ts block after README's openapi-typescript command: the snippet README tells an ISV to write. */
function readmeSnippet(): string {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const from = readme.indexOf('npx openapi-typescript');
  const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(from));
  if (from < 0 || !block) throw new Error("README has no ts snippet after its openapi-typescript command");
  return block[1];
}

const PROGRAM = `
import createClient from 'openapi-fetch';
import type { components, paths } from './msp-api';

type Device = components['schemas']['Device'];
const api = createClient<paths>({ baseUrl: 'http://127.0.0.1:3000', headers: { 'X-API-Key': 'sk_sandbox_0000000000000000000000000000dev' } });

/** Every device of a tenant, page after page: whole records, no field optional that the record always has. */
export async function allDevices(tenant: string): Promise<Device[]> {
  const all: Device[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const { data, error } = await api.GET('/tenants/{tenant_id}/devices', { params: { path: { tenant_id: tenant }, query: { limit: 500, cursor } } });
    if (error) throw new Error(error.code + ': ' + error.message);
    all.push(...data.devices);
    if (data.next_cursor === null) break;
    cursor = data.next_cursor;
  }
  return all;
}

export async function tour(tenant: string): Promise<string[]> {
  const out: string[] = [];
  const tickets = await api.GET('/tenants/{tenant_id}/tickets', { params: { path: { tenant_id: tenant }, query: { limit: 5 } } });
  for (const t of tickets.data?.tickets ?? []) out.push(t.id, t.source_id, String(t.summary.length));
  // No dry_run: a preview by default; every error body has a code (an HTTPValidationError lists the fields too).
  const preview = await api.POST('/tenants/{tenant_id}/tickets', { params: { path: { tenant_id: tenant } }, body: { company_name: 'Contoso Ltd', summary: 'Printer offline' } });
  if (preview.error) out.push(preview.error.code, preview.error.message);
  // The commit: a stable idempotency key, the created ticket's reference.
  const created = await api.POST('/tenants/{tenant_id}/tickets', {
    params: { path: { tenant_id: tenant } },
    body: { company_name: 'Contoso Ltd', summary: 'Printer offline', dry_run: false, idempotency_key: 'finding-4711' },
  });
  if (created.error) out.push(created.error.code);
  else if ('ticket_ref' in created.data && created.data.ticket_ref !== null) out.push(created.data.ticket_ref);
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
  await api.POST('/tenants/{tenant_id}/sync', { params: { path: { tenant_id: tenant } } });
  return out;
}
`;

/** The generated client in a scratch directory, and a compile of the given files under --strict. */
function scratchClient(): { dir: string; compile: (files: Record<string, string>) => string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'typed-client-'));
  const doc = buildOpenApi(allOperations(), 'http://127.0.0.1:3000', operationExamples(PLACEHOLDER_IDS));
  fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
  // The README's command, the local binary, no flags (README writes msp-api.d.ts; either imports as './msp-api').
  execFileSync(path.join(root, 'node_modules', '.bin', 'openapi-typescript'), ['openapi.json', '-o', 'msp-api.ts'], { cwd: dir, stdio: 'pipe' });
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const compile = (files: Record<string, string>) => {
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
    const program = ts.createProgram(Object.keys(files).map((f) => path.join(dir, f)), {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler, lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [], skipLibCheck: true,
    });
    return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  };
  return { dir, compile };
}

describe('a typed client from /openapi.json', () => {
  it('the installed TypeScript is a major the generator supports (its peer range)', () => {
    const peer: string = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'openapi-typescript', 'package.json'), 'utf8')).peerDependencies.typescript;
    const majors = [...peer.matchAll(/\^?(\d+)(?:\.[x\d]+)*/g)].map((m) => Number(m[1]));
    expect(majors.length).toBeGreaterThan(0);
    expect(majors).toContain(Number(ts.version.split('.')[0]));
  });

  it("README's snippet and a program paging devices and committing a ticket compile under --strict: no cast, no non-null assertion", () => {
    const { dir, compile } = scratchClient();
    try {
      const readme = readmeSnippet();
      for (const text of [readme, PROGRAM]) {
        expect(text).not.toMatch(/\bas\s+(unknown|any|[A-Z]\w*)\b/);
        expect(text).not.toMatch(/\w[!]\.|[\w)\]]!\s*[;,)]/);
      }
      expect(compile({ 'readme.ts': readme, 'client.ts': PROGRAM })).toEqual([]);

      // The check can fail: a required request field left out, a field no record has, and code read off a
      // body that may not carry it.
      expect(compile({ 'client.ts': PROGRAM.replace('actual_quantity: 48, ', '') }).join('\n')).toMatch(/actual_quantity/);
      expect(compile({ 'client.ts': PROGRAM.replace('t.summary.length', 't.summry.length') }).join('\n')).toMatch(/summry/);
      expect(compile({ 'readme.ts': readme.replace('t.summary.length', 't.description.length') }).join('\n')).toMatch(/possibly 'null'|possibly null/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
