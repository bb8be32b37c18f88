/** What the reference says is prose stated from the declarations: no description carries code. */
import fs from 'node:fs';
import path from 'node:path';
import { allOperations } from '../features';
import { buildOpenApi } from './openapi';
import { operationExamples, PLACEHOLDER_IDS } from './examples';

/** Every `description` in a document, with where it is. */
export function descriptionsOf(node: unknown, at = '', out: { at: string; text: string }[] = []): { at: string; text: string }[] {
  if (Array.isArray(node)) node.forEach((n, i) => descriptionsOf(n, `${at}/${i}`, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'description' && typeof v === 'string') out.push({ at, text: v });
      descriptionsOf(v, `${at}/${k}`, out);
    }
  }
  return out;
}

/** What only code leaves behind in text: an arrow function, an object stringified, an async function. */
const CODE = /=>|\[object|async /;

describe('descriptions in the reference', () => {
  it('no description of the generated document or of schema/openapi.json contains code', () => {
    const built = buildOpenApi(allOperations(), 'http://127.0.0.1:3000', operationExamples(PLACEHOLDER_IDS));
    const emitted = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'schema', 'openapi.json'), 'utf8'));
    for (const doc of [built, emitted]) {
      const texts = descriptionsOf(doc);
      expect(texts.length).toBeGreaterThan(100);
      expect(texts.filter((d) => CODE.test(d.text)).map((d) => `${d.at}: ${d.text.slice(0, 160)}`)).toEqual([]);
    }
  });

  it('the check finds code where it is', () => {
    expect(descriptionsOf({ a: { description: 'Grant `async ({ body }) => x`.' } }).filter((d) => CODE.test(d.text))).toHaveLength(1);
  });

  it('a derived grant is stated as its cases', () => {
    const doc = buildOpenApi(allOperations(), 'http://127.0.0.1:3000') as { paths: Record<string, Record<string, { description?: string }>> };
    expect(doc.paths['/tenants/{tenant_id}/findings/route']!.post!.description).toContain('Grant by target: `psa.ticket.create` on the PSA when');
    expect(doc.paths['/tenants/{tenant_id}/companies']!.post!.description).toContain('`distributor.company.create` on the distributor when');
    expect(doc.paths['/tenants/{tenant_id}/ticket-events/webhook']!.post!.description).toContain('Any one of the grants `psa.ticket.events`');
  });
});
