/**
 * A reader that stops reading (`memgit --help | head -1`) is no error: memgit stops quietly, exit 0 and
 * nothing on stderr, however the race between its writes and the reader's exit falls. Many runs through a
 * shell pipe, since one run hits the closed pipe only some of the time.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt } from '../support/dist';

const RUNS = 30;
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('memgit-pipe-');
});

afterAll(() => removeDir(dir));

/** Run `memgit <args> | <reader>` RUNS times in bash: memgit's exit status of each run, and all it wrote to stderr. */
function throughClosedPipe(args: string, reader: string): { statuses: string[]; stderr: string; lastOutput: string } {
  const errors = path.join(dir, 'stderr');
  const output = path.join(dir, 'stdout');
  fs.writeFileSync(errors, '');
  const script = `for i in $(seq 1 ${RUNS}); do "$NODE" "$CLI" ${args} 2>>"$ERRORS" | ${reader} > "$OUTPUT"; echo "\${PIPESTATUS[0]}"; done`;
  const run = spawnSync('bash', ['-c', script], {
    encoding: 'utf8',
    env: { ...process.env, NODE: process.execPath, CLI: CLI_MAIN, ERRORS: errors, OUTPUT: output },
  });
  expect(run.status).toBe(0);
  return { statuses: run.stdout.trim().split('\n'), stderr: fs.readFileSync(errors, 'utf8'), lastOutput: fs.readFileSync(output, 'utf8') };
}

it('memgit --help | head -1 prints the first line and exits 0, every time', () => {
  const { statuses, stderr, lastOutput } = throughClosedPipe('--help', 'head -1');
  expect(stderr).toBe('');
  expect(statuses).toEqual(Array(RUNS).fill('0'));
  expect(lastOutput).toBe('Usage: memgit [options] [command]\n');
}, 120_000);

it('a reader that reads nothing at all: memgit log --help | true exits 0 quietly', () => {
  const { statuses, stderr } = throughClosedPipe('log --help', 'true');
  expect(stderr).toBe('');
  expect(statuses).toEqual(Array(RUNS).fill('0'));
}, 120_000);
