/** Tests run in one process, one file at a time: the embedded database and the shared
 * PostgreSQL/Redis are real, and files would otherwise fight over ports and CPU. */
const swcrc = JSON.parse(require('fs').readFileSync(__dirname + '/.swcrc', 'utf8'));
delete swcrc['$schema'];
module.exports = {
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
