/**
 * Once per test run: a private directory where every in-memory embedded database of the run (each test
 * file, each child service) finds the cluster template made by the first (src/db/embedded-cluster.ts),
 * instead of each running initdb again. Removed by global-teardown.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export default function globalSetup(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-test-pgtemplate-'));
  fs.chmodSync(dir, 0o700);
  process.env.EMBEDDED_TEMPLATE_DIR = dir;
  // The run's own build of the service for the tests that start it as a process (test/support/child-service.ts).
  process.env.CHILD_BUILD_DIR = `dist-test-${process.pid}`;
}
