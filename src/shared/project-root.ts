import fs from 'node:fs';
import path from 'node:path';

/** The folder holding package.json: fixtures and docs assets are found from it, built or not. */
export function projectRoot(from = __dirname): string {
  let dir = from;
  for (let i = 0; i < 10; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error(`package.json not found above ${from}`);
}

/** The sandbox's fixtures: `fixtures/<tenant>/...` (vendor records, the ISV's book, its billing). */
export function fixturesDir(): string {
  return path.join(projectRoot(), 'fixtures');
}
