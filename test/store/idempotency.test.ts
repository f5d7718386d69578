/**
 * Retries: a client that crashed after the commit and sends the same tool_use again must get the same
 * result and no second commit — in the same process, concurrently, and from another process.
 */
import { spawnSync } from 'node:child_process';
import { MemoryStore, ToolResult } from '../../src/store/memory-store';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { gitReport, makeTempDir, removeDir, toolUse } from './git-helpers';

const block = toolUse;
const session = { session: 'sess_retry' };

let repo: string;
let store: MemoryStore;
beforeAll(() => ensureBuilt());
beforeEach(async () => {
  repo = makeTempDir();
  store = await MemoryStore.open(repo);
});
afterEach(async () => {
  await store.close();
  removeDir(repo);
});

const commitCount = (): number => gitReport(repo).commits.length;

test('every mutating command retried with its id: same result, replayed, no second commit', async () => {
  const calls: Array<[string, Record<string, unknown>]> = [
    ['toolu_c', { command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' }],
    ['toolu_s', { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'three' }],
    ['toolu_i', { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'zero\n' }],
    ['toolu_r', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }],
    ['toolu_d', { command: 'delete', path: '/memories/b.md' }],
  ];
  for (const [id, input] of calls) {
    const first = await store.executeWithReport(block(id, input), session);
    expect(first.result.is_error).toBeUndefined();
    const before = commitCount();
    const again = await store.executeWithReport(block(id, input), session);
    expect(again.result).toEqual(first.result);
    expect(again.replayed).toBe(true);
    expect(again.commit).toBe(first.commit);
    expect(commitCount()).toBe(before);
  }
  const git = gitReport(repo);
  expect(git.commits.map((c) => c.message.split('\n')[0])).toEqual(['memgit: initialise store', ...calls.map(([id]) => id)]);
  expect(git.fsckCode).toBe(0);
  expect(git.status).toBe('');
});

test('the same id sent twice at once is applied once', async () => {
  const input = { command: 'insert', path: '/memories/log.md', insert_line: 0, insert_text: 'once\n' };
  await store.execute(block('toolu_setup', { command: 'create', path: '/memories/log.md', file_text: '' }), session);
  const results = await Promise.all([1, 2, 3].map(() => store.execute(block('toolu_twice', input), session)));
  expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
  expect(results[0].is_error).toBeUndefined();
  expect(commitCount()).toBe(3);
  const view = await store.execute(block('toolu_view', { command: 'view', path: '/memories/log.md' }), session);
  expect(view.content.match(/once/g)).toHaveLength(1);
});

test('an id reused with different input is refused, not applied', async () => {
  await store.execute(block('toolu_x', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), session);
  const before = commitCount();
  const reused = await store.execute(block('toolu_x', { command: 'create', path: '/memories/other.md', file_text: 'b\n' }), session);
  expect(reused.is_error).toBe(true);
  expect(reused.content).toContain('already used');
  expect(commitCount()).toBe(before);
  expect((await store.execute(block('toolu_v', { command: 'view', path: '/memories/other.md' }), session)).is_error).toBe(true);
});

test('a retry from another process (memgit exec) replays the commit the library made, and its own retries too', async () => {
  const create = { command: 'create', path: '/memories/a.md', file_text: 'from the library\n' };
  const first = await store.execute(block('toolu_lib', create), session);
  const edit = { command: 'str_replace', path: '/memories/a.md', old_str: 'library', new_str: 'exec' };
  const lines = [block('toolu_lib', create), block('toolu_exec', edit), block('toolu_exec', edit)].map((b) => JSON.stringify(b)).join('\n');
  const run = spawnSync(process.execPath, [CLI_MAIN, 'exec', '--repo', repo, '--session', 'sess_other'], { input: `${lines}\n`, encoding: 'utf8' });
  expect(run.status).toBe(0);
  const results = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as ToolResult);
  expect(results[0]).toEqual(first);
  expect(results[1].is_error).toBeUndefined();
  expect(results[2]).toEqual(results[1]);
  const git = gitReport(repo);
  expect(git.commits.map((c) => c.message.split('\n')[0])).toEqual(['memgit: initialise store', 'toolu_lib', 'toolu_exec']);
  expect(git.status).toBe('');
  // This process's store sees the other process's commit and replays it as well.
  expect(await store.execute(block('toolu_exec', edit), session)).toEqual(results[1]);
  expect(commitCount()).toBe(3);
});
