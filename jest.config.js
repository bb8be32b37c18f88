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
  maxWorkers: 1,
};
