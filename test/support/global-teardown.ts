/** Removes the run's cluster template directory (global-setup.ts). */
import fs from 'node:fs';

export default function globalTeardown(): void {
  const dir = process.env.EMBEDDED_TEMPLATE_DIR;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
