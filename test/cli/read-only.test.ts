/**
 * The CLI on a store memgit may not write (a read-only clone: `memgit.readonly` in its config, as
 * `memgit clone` sets it): nothing claims a write could happen, and every refused write exits non-zero.
 */
import { spawn, spawnSync, SpawnSyncReturns } from 'node:child_process';
import { makeTempDir, removeDir } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

const READ_ONLY = 'this store is a read-only clone for auditing; it takes no writes';
let dir: string;

function memgit(args: string[], input = ''): SpawnSyncReturns<string> {
  const env = { ...process.env };
  delete env.MEMGIT_REPO;
  delete env.MEMGIT_TOKEN;
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { input, encoding: 'utf8', env, cwd: REPO_ROOT });
}

function toolUse(id: string, input: unknown): string {
  return JSON.stringify({ type: 'tool_use', id, name: 'memory', input });
}

function git(...args: string[]): string {
  return spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).stdout.trim();
}

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('memgit-cli-ro-');
  const made = memgit(['exec', '--repo', dir, '--session', 'sess_ro'], [
    toolUse('toolu_ro_1', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }),
    toolUse('toolu_ro_1b', { command: 'str_replace', path: '/memories/a.md', old_str: 'a', new_str: 'b' }),
  ].join('\n') + '\n');
  expect(made.status).toBe(0);
  git('config', 'memgit.readonly', 'true');
});

afterAll(() => removeDir(dir));

test('revert --dry-run (and the other rollbacks) say the change could not be applied here, and exit 1', () => {
  const head = git('rev-parse', 'HEAD');
  for (const args of [
    ['revert', 'toolu_ro_1b'],
    ['restore', '/memories/a.md', '--at', 'toolu_ro_1'],
    ['reset', '--to', 'toolu_ro_1'],
    ['rollback-session', 'sess_ro'],
  ]) {
    const dry = memgit([...args, '--repo', dir, '--dry-run']);
    expect([args[0], dry.status]).toEqual([args[0], 1]);
    expect(dry.stderr).toContain(`could not be applied: ${READ_ONLY}`);
    expect(dry.stdout).not.toMatch(/would commit/);
    const json = memgit([...args, '--repo', dir, '--dry-run', '--json']);
    expect([args[0], json.status]).toEqual([args[0], 1]);
    expect(JSON.parse(json.stdout)).toMatchObject({ status: 'preview', applicable: false, refused: expect.stringContaining(READ_ONLY) });
    const real = memgit([...args, '--repo', dir, '--reason', 'try']);
    expect([args[0], real.status, real.stderr]).toEqual([args[0], 1, expect.stringContaining(READ_ONLY)]);
  }
  expect(git('rev-parse', 'HEAD')).toBe(head);
});

test('exec answers every line, and exits 1 when the store refused a call', () => {
  const writes = memgit(['exec', '--repo', dir, '--session', 'sess_ro'], [
    toolUse('toolu_ro_v', { command: 'view', path: '/memories/a.md' }),
    toolUse('toolu_ro_2', { command: 'create', path: '/memories/b.md', file_text: 'b\n' }),
  ].join('\n') + '\n');
  expect(writes.status).toBe(1);
  const lines = writes.stdout.trim().split('\n').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_ro_v' });
  expect(lines[1]).toEqual({ type: 'error', error: expect.stringContaining(READ_ONLY) });
  expect(writes.stderr).toContain(`memgit: 1 call was not applied: ${READ_ONLY}`);
  // Reads only: nothing refused, exit 0.
  const reads = memgit(['exec', '--repo', dir, '--session', 'sess_ro'], `${toolUse('toolu_ro_v2', { command: 'view', path: '/memories' })}\n`);
  expect([reads.status, reads.stderr]).toEqual([0, '']);
});

test('the start-up lines of `memgit serve` advertise no rollback and print no operator token', async () => {
  const env = { ...process.env };
  delete env.MEMGIT_TOKEN;
  const child = spawn(process.execPath, [CLI_MAIN, 'serve', '--repo', dir, '--port', '0'], { env, cwd: REPO_ROOT });
  let out = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (/a read-only clone: .*\n/.test(out) || /operator token .*\n/.test(out)) resolve();
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
    });
  } finally {
    child.kill('SIGTERM');
  }
  expect(out).toContain('memgit: loopback only: reading needs no login\n');
  expect(out).toContain('memgit: a read-only clone: no revert, restore, reset, session rollback or redaction is offered (memgit restore-from makes a writable copy)\n');
  expect(out).not.toMatch(/operator token|rollbacks need|revert or restore/);
});
