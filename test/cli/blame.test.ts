/**
 * `memgit blame` spawned as users run it: each line with the call, session and time that wrote it, at
 * HEAD and at an earlier call, as text and as JSON; hostile content cannot drive the terminal; bad
 * paths and refs are clear errors.
 */
import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, QUIET, removeDir, toolUse } from '../store/git-helpers';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';

let dir = '';

function memgit(args: string[]): SpawnSyncReturns<string> {
  const env = { ...process.env };
  delete env.MEMGIT_REPO;
  return spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', dir], { encoding: 'utf8', env, cwd: REPO_ROOT });
}

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('memgit-blame-');
  const store = await MemoryStore.open(dir, QUIET);
  const run = async (id: string, session: string, input: Record<string, unknown>) => {
    const result = await store.execute(toolUse(id, input), { session });
    expect(result.is_error).toBeUndefined();
  };
  await run('toolu_create', 'sess_a', { command: 'create', path: '/memories/notes/profile.md', file_text: 'name: Acme\nplan: basic\n' });
  await run('toolu_insert', 'sess_b', { command: 'insert', path: '/memories/notes/profile.md', insert_line: 1, insert_text: 'evil: \u001b]52;c;aGk=\u0007\u202e' });
  await run('toolu_move', 'sess_b', { command: 'rename', old_path: '/memories/notes/profile.md', new_path: '/memories/profile.md' });
  await run('toolu_edit', 'sess_c', { command: 'str_replace', path: '/memories/profile.md', old_str: 'plan: basic', new_str: 'plan: pro' });
  await store.close();
}, 300_000);

afterAll(() => removeDir(dir));

test('--json: every line with its call, session and time, following the rename', () => {
  const result = memgit(['blame', '/memories/profile.md', '--json']);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const out = JSON.parse(result.stdout) as { path: string; lines: Array<{ line: number; text: string; toolUseId: string; session: string; time: string }> };
  expect(out.path).toBe('/memories/profile.md');
  expect(out.lines.map((l) => [l.line, l.text, l.toolUseId, l.session])).toEqual([
    [1, 'name: Acme', 'toolu_create', 'sess_a'],
    [2, 'evil: \u001b]52;c;aGk=\u0007\u202e', 'toolu_insert', 'sess_b'],
    [3, 'plan: pro', 'toolu_edit', 'sess_c'],
  ]);
  for (const l of out.lines) expect(l.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

test('text output escapes control and bidi characters; --at shows an earlier call; relative paths work', () => {
  const text = memgit(['blame', 'profile.md']);
  expect(text.status).toBe(0);
  expect(text.stdout).not.toMatch(/[\u001b\u0007\u202e]/);
  expect(text.stdout).toContain('\\u{1b}]52;c;aGk=\\u{7}\\u{202e}');
  const rows = text.stdout.trim().split('\n');
  expect(rows).toHaveLength(3);
  expect(rows[2]).toMatch(/^[0-9a-f]{12} {2}toolu_edit {2}sess_c {2}\S+Z {2}3\) {2}plan: pro$/);

  const before = memgit(['blame', 'memories/notes/profile.md', '--at', 'toolu_insert', '--json']);
  expect(before.status).toBe(0);
  const lines = (JSON.parse(before.stdout) as { lines: Array<{ text: string; toolUseId: string }> }).lines;
  expect(lines.map((l) => [l.text, l.toolUseId])).toEqual([
    ['name: Acme', 'toolu_create'],
    ['evil: \u001b]52;c;aGk=\u0007\u202e', 'toolu_insert'],
    ['plan: basic', 'toolu_create'],
  ]);
});

test('clear errors: a deleted or unknown file, a bad path, an unknown ref', () => {
  const gone = memgit(['blame', '/memories/notes/profile.md']);
  expect(gone.status).toBe(1);
  expect(gone.stderr).toMatch(/^memgit: \/memories\/notes\/profile\.md does not exist at [0-9a-f]{12} \(deleted by toolu_move\)\n$/);
  expect(memgit(['blame', '/memories/nope.md']).stderr).toMatch(/^memgit: \/memories\/nope\.md has no history/);
  const traversal = memgit(['blame', '/memories/../etc/passwd']);
  expect(traversal.status).toBe(1);
  expect(traversal.stderr).toBe('memgit: Path /memories/../etc/passwd would escape /memories directory\n');
  const ref = memgit(['blame', 'profile.md', '--at', 'toolu_missing']);
  expect(ref.status).toBe(1);
  expect(ref.stderr).toMatch(/toolu_missing/);
  expect(ref.stdout).toBe('');
});
