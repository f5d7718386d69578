/**
 * The tests' temporary folders (test/support/temp-root.js, jest's globalSetup): a fresh folder that the
 * test files and what they start see as TMPDIR, in memory when the machine has a tmpfs at /dev/shm.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { makeTempRoot } = require('./support/temp-root') as { makeTempRoot: (env: NodeJS.ProcessEnv) => string | null };

it('this worker and the processes it starts use the folder globalSetup made, when it made one', () => {
  const root = process.env.MEMGIT_TEST_TEMP_ROOT;
  if (root === undefined) {
    // No tmpfs here, or MEMGIT_TEST_TMPDIR=os: TMPDIR is the user's own.
    expect(path.basename(os.tmpdir())).not.toMatch(/^memgit-tests-/);
    return;
  }
  expect(os.tmpdir()).toBe(root);
  expect(execFileSync('sh', ['-c', 'printf %s "$TMPDIR"'], { encoding: 'utf8' })).toBe(root);
  expect(fs.statSync(root).mode & 0o777).toBe(0o711);
});

it('makes a fresh folder that others may pass through but not list, where MEMGIT_TEST_TMPDIR says', () => {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-temp-root-'));
  try {
    const made = makeTempRoot({ MEMGIT_TEST_TMPDIR: parent })!;
    expect(path.dirname(made)).toBe(parent);
    expect(path.basename(made)).toMatch(/^memgit-tests-/);
    expect(fs.statSync(made).mode & 0o777).toBe(0o711);
    expect(makeTempRoot({ MEMGIT_TEST_TMPDIR: parent })).not.toBe(made); // fresh each time
    expect(makeTempRoot({ MEMGIT_TEST_TMPDIR: 'os' })).toBeNull();
  } finally {
    fs.rmSync(parent, { recursive: true, force: true });
  }
});
