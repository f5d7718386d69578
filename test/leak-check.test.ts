/**
 * The leak check every test file runs under (test/support/leak-check-environment.ts), run by jest on three
 * fixtures in one worker: a file that leaves a FileHandle open fails, named with its descriptor and, with
 * MEMGIT_TRACE_HANDLES=1, the line that opened it, whether its module keeps the handle or nothing does; a
 * file that closes its handle passes.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './support/dist';

test('a file that leaves a FileHandle open fails at its teardown, naming where it was opened; one that closes it passes', () => {
  const config = {
    rootDir: REPO_ROOT,
    roots: ['<rootDir>/test/fixtures/leak-check'],
    testRegex: '\\.leak\\.ts$',
    testEnvironment: '<rootDir>/test/support/leak-check-environment.ts',
    transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  };
  const run = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', JSON.stringify(config), '--runInBand', '--json'], {
    cwd: REPO_ROOT,
    env: { ...process.env, MEMGIT_TRACE_HANDLES: '1' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const report = JSON.parse(run.stdout) as { testResults: Array<{ name: string; status: string; message: string }> };
  const byFile = Object.fromEntries(report.testResults.map((r) => [path.basename(r.name), r]));
  expect(Object.keys(byFile).sort()).toEqual(['closes-its-handle.leak.ts', 'drops-a-handle.leak.ts', 'keeps-a-handle.leak.ts']);
  expect(byFile['closes-its-handle.leak.ts'].status).toBe('passed');
  for (const [file, line] of [['keeps-a-handle.leak.ts', 6], ['drops-a-handle.leak.ts', 5]] as const) {
    expect({ file, status: byFile[file].status }).toEqual({ file, status: 'failed' });
    expect(byFile[file].message).toMatch(new RegExp(`${file.replace(/\./g, '\\.')} left 1 FileHandle\\(s\\) open after its last test:\\n\\s*descriptor \\d+, opened\\n\\s*at .*${file.replace(/\./g, '\\.')}:${line}:`));
  }
  expect(run.status).toBe(1);
});
