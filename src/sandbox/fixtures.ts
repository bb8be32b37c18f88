/** Sandbox fixtures: `fixtures/<tenant>/<vendor>/<resource>.json`, in each vendor's native shape. */
import fs from 'node:fs';
import path from 'node:path';
import { fixturesDir } from '../shared/project-root';

export interface VendorFixtures {
  /** resource -> native records */
  resources: Record<string, unknown[]>;
  statusMapping: Record<string, string>;
}

export function loadVendorFixtures(tenantSlug: string, vendor: string): VendorFixtures {
  const dir = path.join(fixturesDir(), tenantSlug, vendor);
  const resources: Record<string, unknown[]> = {};
  let statusMapping: Record<string, string> = {};
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith('.json')) continue;
    const content = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    if (file === '_mapping.json') statusMapping = content.statusMapping ?? {};
    else if (!file.startsWith('_') && Array.isArray(content)) resources[file.slice(0, -'.json'.length)] = content;
  }
  return { resources, statusMapping };
}
