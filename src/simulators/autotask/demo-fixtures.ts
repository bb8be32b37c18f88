/** The autotask-demo dataset (fixtures/autotask-demo/autotask), as `seed` takes it. For tests. */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../shared/project-root';

export const AUTOTASK_DEMO_INSTANCE = 'autotask-demo';

export function autotaskDemoDir(): string {
  return path.join(projectRoot(), 'fixtures', 'autotask-demo', 'autotask');
}

export function loadAutotaskDemoFixtures(): { resources: Record<string, unknown[]>; statusMapping: Record<string, string> } {
  const dir = autotaskDemoDir();
  const resources: Record<string, unknown[]> = {};
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.json') || file.startsWith('_')) continue;
    resources[file.slice(0, -'.json'.length)] = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  }
  const mapping = JSON.parse(fs.readFileSync(path.join(dir, '_mapping.json'), 'utf8')) as { statusMapping: Record<string, string> };
  return { resources, statusMapping: mapping.statusMapping };
}
