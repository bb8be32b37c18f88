/** Tests run in one process, one file at a time: the embedded database and the shared
 * PostgreSQL/Redis are real, and files would otherwise fight over ports and CPU. */
const swcrc = JSON.parse(require('fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
delete swcrc['$schema'];
/**
 * CI's two passes side by side (.ci/run sets CI_PASS) share what does not depend on the runtime, so each runs once:
 * the browser files alternate between the passes (pages render the same operations on either store; every file runs
 * in one of them), and the unit files that start no service and touch no database or queue run in the embedded pass
 * only. Without CI_PASS (`npm test` anywhere else) every file runs. A file is taken for runtime-independent only when
 * nothing in it names a service, database, queue or runtime: when in doubt it runs in both.
 */
const fs = require('fs');
const path = require('path');
function testFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(path.join(__dirname, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...testFiles(rel));
    else if (e.name.endsWith('.test.ts')) out.push(rel);
  }
  return out;
}
// The standalone vendor simulators' harnesses (test/support/*-simulator.ts) start a simulator, not the service.
const TOUCHES_RUNTIME = /support\/(?!(?:dattormm|ninjaone|standalone)-simulator\b)|DATABASE_URL|REDIS_URL|startServer|createServices|pglite|bullmq|ioredis|redis|DataSource|database|postgres|queue|\bds\b/i;
function skippedInThisPass() {
  const pass = process.env.CI_PASS;
  if (pass !== 'embedded' && pass !== 'postgres') return [];
  const all = ['src', 'jobs', 'entities', 'test'].flatMap(testFiles).sort();
  const browser = all.filter((f) => f.endsWith('.browser.test.ts'));
  const skipped = browser.filter((_, i) => (i % 2 === 1) === (pass === 'embedded'));
  if (pass === 'postgres') {
    skipped.push(...all.filter((f) => !f.startsWith('test/') && !f.endsWith('.browser.test.ts') && !TOUCHES_RUNTIME.test(fs.readFileSync(path.join(__dirname, f), 'utf8'))));
  }
  return skipped.map((f) => `<rootDir>/${f.replace(/[.]/g, '\\.')}$`);
}

module.exports = {
  testPathIgnorePatterns: ['/node_modules/', ...skippedInThisPass()],
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/jobs', '<rootDir>/entities', '<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcrc, swcrc: false }] },
  setupFiles: ['reflect-metadata'],
  // One embedded-database template for the whole run (test/support/global-setup.ts).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  // Browser tests sign people in and run axe at two widths; with both runtimes side by side on two cores they need the room.
  testTimeout: 120000,
  // One worker process, files one at a time. Each file loads the whole service into a fresh module registry, and
  // some of it stays reachable after the file ends (module-level state of libraries); the worker is replaced after
  // any file that leaves it above this size, instead of the registry piling up until the heap runs out.
  maxWorkers: 1,
  workerIdleMemoryLimit: '1200MB',
};
