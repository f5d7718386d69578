/** @type {import('jest').Config} */
module.exports = {
  // node's, failing a test file that leaves a FileHandle open (test/support/leak-check-environment.ts)
  testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
};
