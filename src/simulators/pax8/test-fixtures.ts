/** Reads the sandbox Pax8 fixture files (tests): `{<resource>: records}` from fixtures/<tenant>/pax8. */
import fs from 'node:fs';
import path from 'node:path';

export function readPax8Fixtures(tenant = 'sandbox-alpha'): Record<string, unknown[]> {
  const dir = path.resolve(__dirname, '../../../fixtures', tenant, 'pax8');
  const out: Record<string, unknown[]> = {};
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.json') || file.startsWith('_')) continue;
    out[file.slice(0, -'.json'.length)] = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown[];
  }
  return out;
}
