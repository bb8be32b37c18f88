/** Reads a tenant's ConnectWise fixture files (fixtures/<tenant>/connectwise/*.json) for seeding. */
import fs from 'node:fs';
import path from 'node:path';

export interface ConnectWiseFixtures {
  /** Seed key (file name without .json) -> native records. */
  resources: Record<string, unknown[]>;
  /** `_mapping.json`'s status mapping (empty when the file is missing). */
  statusMapping: Record<string, string>;
}

export function fixturesDir(tenant: string, root = path.resolve(__dirname, '../../../fixtures')): string {
  return path.join(root, tenant, 'connectwise');
}

export function loadConnectWiseFixtures(tenant = 'sandbox-alpha', root?: string): ConnectWiseFixtures {
  const dir = fixturesDir(tenant, root);
  const resources: Record<string, unknown[]> = {};
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.json') || file.startsWith('_')) continue;
    resources[file.slice(0, -'.json'.length)] = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown[];
  }
  const mappingFile = path.join(dir, '_mapping.json');
  const statusMapping = fs.existsSync(mappingFile)
    ? ((JSON.parse(fs.readFileSync(mappingFile, 'utf8')) as { statusMapping?: Record<string, string> }).statusMapping ?? {})
    : {};
  return { resources, statusMapping };
}
