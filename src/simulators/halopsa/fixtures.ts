/** Reads a tenant's HaloPSA fixtures (fixtures/<tenant>/halopsa/*.json) for seeding and tests. */
import fs from 'node:fs';
import path from 'node:path';

/** The repository's fixtures folder, found upwards from here (works from src/ and from dist/src/). */
function fixturesRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'fixtures');
    if (fs.existsSync(path.join(candidate, 'sandbox-beta'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error('fixtures folder not found');
  }
}

export interface HaloFixtures {
  /** Seed keys -> native records (files not starting with `_`). */
  records: Record<string, unknown[]>;
  statusMapping: Record<string, string>;
}

export function loadHaloFixtures(tenant = 'sandbox-beta'): HaloFixtures {
  const dir = path.join(fixturesRoot(), tenant, 'halopsa');
  const records: Record<string, unknown[]> = {};
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.json') || file.startsWith('_')) continue;
    records[file.slice(0, -'.json'.length)] = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as unknown[];
  }
  const mappingFile = path.join(dir, '_mapping.json');
  const mapping = fs.existsSync(mappingFile)
    ? (JSON.parse(fs.readFileSync(mappingFile, 'utf8')) as { statusMapping?: Record<string, string> })
    : {};
  return { records, statusMapping: mapping.statusMapping ?? {} };
}
