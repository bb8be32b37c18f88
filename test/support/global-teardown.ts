/** Removes the run's cluster template directory and its build of the service (global-setup.ts). */
import fs from 'node:fs';
import path from 'node:path';

export default function globalTeardown(): void {
  const dir = process.env.EMBEDDED_TEMPLATE_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  const build = process.env.CHILD_BUILD_DIR;
  if (build?.startsWith('dist-test-')) fs.rmSync(path.join(__dirname, '..', '..', build), { recursive: true, force: true });
}
