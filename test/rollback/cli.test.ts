import { spawnSync } from 'node:child_process';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { storeFingerprint } from '../store/git-helpers';
import { call, create, dispose, git, newStore, remove, rename, replace } from './helpers';
import { MemoryStore } from '../../src/store/memory-store';

/** The rollback commands run as users run them: the compiled CLI in a child process. */

function memgit(...args: string[]) {
  const env = { ...process.env, USER: 'ops_bob' };
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { encoding: 'utf8', env, cwd: REPO_ROOT });
}

describe('memgit revert / restore / rollback-session / reset', () => {
  let store: MemoryStore;
  let dir: string;
  beforeAll(async () => {
    await ensureBuilt();
  });
  beforeEach(async () => {
    store = await newStore();
    dir = store.dir;
    await call(store, 'toolu_01', create('/memories/facts.md', 'one\ntwo\nthree\n'), 'sess_a');
    await call(store, 'toolu_02', replace('/memories/facts.md', 'two', 'two is a lie'), 'sess_bad');
    await call(store, 'toolu_03', create('/memories/notes.md', 'n\n'), 'sess_bad');
    await call(store, 'toolu_04', remove('/memories/notes.md'), 'sess_a');
    await store.close();
  });
  afterEach(async () => dispose(store));

  it('revert --dry-run prints the diff and writes nothing; revert commits with the operator and reason', () => {
    const before = storeFingerprint(dir);
    const dry = memgit('revert', 'toolu_02', '--dry-run', '--repo', dir);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('dry run: would commit "revert toolu_02"');
    expect(dry.stdout).toContain('-two is a lie\n+two\n');
    expect(storeFingerprint(dir)).toBe(before);

    const done = memgit('revert', 'toolu_02', '--reason', 'false fact', '--repo', dir);
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    expect(done.stdout).toMatch(/^\[[0-9a-f]{12}\] revert toolu_02\n/);
    expect(git(dir, 'log', '-1', '--format=%B').trimEnd()).toBe(
      `revert toolu_02\n\nMemory-Actor: operator:ops_bob\nMemory-Reverts: ${git(dir, 'rev-parse', 'HEAD~3')}\nMemory-Reason: false fact`,
    );
    expect(git(dir, 'show', 'HEAD:memories/facts.md')).toBe('one\ntwo\nthree');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });

  it('a conflict lists the later call, file and lines, exits 2 and writes nothing', () => {
    const edit = memgit('revert', 'toolu_01', '--operator', 'carol', '--repo', dir);
    expect(edit.status).toBe(2);
    expect(edit.stdout).toBe('');
    expect(edit.stderr).toContain('memgit: conflict: revert toolu_01');
    expect(edit.stderr).toMatch(/\/memories\/facts\.md: .*later calls changed it/);
    expect(edit.stderr).toMatch(/by toolu_02 \(commit [0-9a-f]{12}, session sess_bad, wrote lines 2\)/);
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('5');
  });

  it('restore --at brings a deleted file back; bad input is a clear error', () => {
    const done = memgit('restore', '/memories/notes.md', '--at', 'toolu_03', '--operator', 'carol', '--repo', dir);
    expect(done.status).toBe(0);
    expect(git(dir, 'show', 'HEAD:memories/notes.md')).toBe('n');
    expect(git(dir, 'log', '-1', '--format=%s%n%(trailers:key=Memory-Actor,valueonly)').trimEnd()).toBe('restore /memories/notes.md at toolu_03\noperator:carol');
    const bad = memgit('restore', '/etc/passwd', '--at', 'toolu_03', '--repo', dir);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('memgit: Path must start with /memories');
    const badOperator = memgit('reset', '--to', 'toolu_01', '--operator', 'x y', '--repo', dir);
    expect(badOperator.status).toBe(1);
    expect(badOperator.stderr).toContain('invalid operator name');
  });

  it('restore follows a rename; a restore that would delete a file needs --delete', async () => {
    const reopened = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    await call(reopened, 'toolu_05', create('/memories/a.md', 'alpha\n'), 'sess_a');
    await call(reopened, 'toolu_06', rename('/memories/a.md', '/memories/b.md'), 'sess_a');
    await call(reopened, 'toolu_07', replace('/memories/b.md', 'alpha', 'beta'), 'sess_a');
    await reopened.close();

    const followed = memgit('restore', '/memories/b.md', '--at', 'toolu_05', '--repo', dir);
    expect(followed.stderr).toBe('');
    expect(followed.status).toBe(0);
    expect(followed.stdout).toMatch(/^\[[0-9a-f]{12}\] restore \/memories\/b\.md at toolu_05 \(then \/memories\/a\.md\)\n/);
    expect(git(dir, 'show', 'HEAD:memories/b.md')).toBe('alpha');
    expect(git(dir, 'ls-tree', '--name-only', 'HEAD', 'memories/')).toBe('memories/b.md\nmemories/facts.md');
    expect(git(dir, 'status', '--porcelain')).toBe('');

    // b.md did not exist after toolu_04: restoring it there would delete it.
    const before = storeFingerprint(dir);
    const refused = memgit('restore', '/memories/b.md', '--at', 'toolu_04', '--repo', dir);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'memgit: restore /memories/b.md at toolu_04 (then /memories/a.md) would delete /memories/b.md (not there after toolu_04); nothing was written. Pass --delete (library: `delete: true`) to delete.\n',
    );
    expect(storeFingerprint(dir)).toBe(before);
    const deleted = memgit('restore', '/memories/b.md', '--at', 'toolu_04', '--delete', '--repo', dir);
    expect(deleted.status).toBe(0);
    expect(deleted.stdout).toContain('-alpha\n');
    expect(git(dir, 'ls-tree', '--name-only', 'HEAD', 'memories/')).toBe('memories/facts.md');
    expect(git(dir, 'fsck', '--full')).toBe('');
  });

  it('rollback-session --json and reset --to, each one commit', () => {
    const session = memgit('rollback-session', 'sess_bad', '--json', '--repo', dir);
    expect(session.status).toBe(0);
    const outcome = JSON.parse(session.stdout);
    expect(outcome).toMatchObject({ operation: 'rollback-session', status: 'committed', title: 'rollback-session sess_bad' });
    expect(outcome.reverts).toEqual([git(dir, 'rev-parse', 'HEAD~2'), git(dir, 'rev-parse', 'HEAD~3')]);
    expect(git(dir, 'show', 'HEAD:memories/facts.md')).toBe('one\ntwo\nthree');

    const dry = memgit('reset', '--to', 'toolu_03', '--dry-run', '--repo', dir);
    expect(dry.status).toBe(0);
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('6');
    const reset = memgit('reset', '--to', 'toolu_03', '--repo', dir);
    expect(reset.status).toBe(0);
    const point = git(dir, 'log', '--format=%H', '--grep=^toolu_03$');
    expect(git(dir, 'rev-parse', 'HEAD:memories')).toBe(git(dir, 'rev-parse', `${point}:memories`));
  });
});
