/**
 * Two projects partition the test files:
 * - "quick" (`npm run test:quick`, the inner loop, under a minute): the contract, the store, history and
 *   the other in-process tests. No browser, no Python, no HAProxy, no built CLI spawned as a process, no
 *   crash or fault sweep: a file listed here runs in the test's own process (git's CLI checks the stores).
 * - "rest": every other test file. `npm test` runs both.
 * A new test file is in "rest" unless it is added to QUICK below (a path under test/, or a folder ending in /).
 */
const QUICK = [
  'contract/',
  'history/imports.test.ts',
  'store/cache-budget.test.ts',
  'store/diff-trees.test.ts',
  'store/fault.test.ts',
  'store/flags.test.ts',
  'store/front-door.test.ts',
  'store/history-index/',
  'store/lean-commit.test.ts',
  'store/lru-map.test.ts',
  'store/hostile-paths.test.ts',
  'store/narrow-doors.test.ts',
  'store/pack-by-position.test.ts',
  'store/points.test.ts',
  'store/resolve-ref.test.ts',
  'store/store-vectors.test.ts',
  'store/timeline.test.ts',
  'detect/detect-hostile.test.ts',
  'detect/detect-write.test.ts',
  'terminal/',
  'circles.test.ts',
  'temp-root.test.ts',
  'web/services/',
  'web/labels.test.ts',
];

const path = require('node:path');

const TEST_DIR = path.join(__dirname, 'test');
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Each QUICK entry as a regular expression on a test file's absolute path. */
const quickRegexes = QUICK.map((entry) => `^${escape(path.join(TEST_DIR, entry))}${entry.endsWith('/') ? '.*\\.test\\.ts' : ''}$`);

/** What both projects share. */
const common = {
  // node's, failing a test file that leaves a FileHandle open (test/support/leak-check-environment.ts)
  testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
  roots: ['<rootDir>/test'],
  // Transpiled file by file (tsconfig.json has isolatedModules): the types are checked once for the whole
  // tree by `npm run build`, which `npm test` runs first (package.json's pretest).
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
};

/** @type {import('jest').Config} */
module.exports = {
  // Jest's default on 2 cores is one worker. Most files wait on git, subprocesses, sockets and the disk, so
  // three workers keep the 2 cores busy: the whole suite took 477 s with three against 570 s with two.
  maxWorkers: 3,
  // A worker is replaced once a file leaves its heap above this. jest keeps something of every file a worker
  // ran (each file loads its own copy of the store, the web stack and their dependencies): a worker's heap
  // reached 300 MB, where every collection costs in proportion. Measured on the whole suite (when the leak
  // check still forced three collections a file): jest 520 s without a limit, 415 s at 150 MB, and no
  // better at 100 MB. Once it no longer did (cold jest cache): 336 s without a limit against 310–322 s at
  // 150 MB, though a restarted worker loads jest and TypeScript again (27 workers in a run instead of 4).
  workerIdleMemoryLimit: '150MB',
  // The longest files first, from measured durations when jest has no cache (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
  // Temporary folders in memory when the machine has a tmpfs (test/support/temp-root.js).
  globalSetup: '<rootDir>/test/support/temp-root.js',
  globalTeardown: '<rootDir>/test/support/temp-root-teardown.js',
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'quick', testRegex: quickRegexes },
    { ...common, displayName: 'rest', testMatch: ['**/*.test.ts'], testPathIgnorePatterns: ['/node_modules/', ...quickRegexes] },
  ],
};
