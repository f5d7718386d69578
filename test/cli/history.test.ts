/**
 * The auditor's history commands as users run them: the compiled CLI (writes in a child process,
 * queries in this one: test/support/cli-in-process.ts), checked against
 * the real git CLI. One way to name a point (tool_use id, commit or prefix, HEAD, HEAD~N, ISO time),
 * `log`'s filters and marks, `show` naming the commit that reverted a call, store discovery from a
 * subdirectory, and the exit codes (1 not found, 2 conflict, 64 usage).
 */
import { spawnSync, SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { memgitInProcess } from '../support/cli-in-process';
import { CLI_MAIN, ensureBuilt, REPO_ROOT } from '../support/dist';
import { makeTempDir, removeDir, storeFingerprint } from '../store/git-helpers';

jest.setTimeout(300_000); // every step spawns the CLI; a busy 2-core machine starts node slowly

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, USER: 'auditor' };
  delete env.MEMGIT_REPO;
  return env;
}

function memgit(args: string[], options: { input?: string; cwd?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [CLI_MAIN, ...args], { input: options.input ?? '', encoding: 'utf8', env: cleanEnv(), cwd: options.cwd ?? REPO_ROOT });
}

function git(dir: string, ...args: string[]): string {
  const run = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout.trim();
}

/**
 * A query (show, log, cat, ls, diff, sessions, --help) of the built CLI, run in this process: the same
 * program, its output and exit status, without a node process per question. Writes (exec, revert,
 * restore, reset, gc) and runs that depend on the working folder spawn the CLI above.
 */
function query(args: string[]) {
  return memgitInProcess(args, { USER: 'auditor' });
}

const line = (id: string, input: Record<string, unknown>) => JSON.stringify({ type: 'tool_use', id, name: 'memory', input });

/** exec a batch of calls under one session; every call must succeed. */
function exec(repo: string, session: string, calls: string[]): void {
  const run = memgit(['exec', '--repo', repo, '--session', session], { input: calls.join('\n') + '\n' });
  expect(run.status).toBe(0);
  for (const out of run.stdout.trim().split('\n')) expect(JSON.parse(out).is_error).toBeUndefined();
}

let repo: string;
/** Commit ids, oldest first (index 0 = the initial commit). */
let commits: string[];

beforeAll(async () => {
  await ensureBuilt();
  repo = makeTempDir('memgit-history-');
  dirs.push(repo);
  exec(repo, 'sess_20261202T140312_k3f9', [
    line('toolu_01', { command: 'create', path: '/memories/a.md', file_text: 'one\nsecret code 42\n' }),
    line('toolu_02', { command: 'create', path: '/memories/notes/n.md', file_text: 'note\n' }),
    line('toolu_03', { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/b.md' }),
  ]);
  exec(repo, 'sess_20261202T150000_zz01', [
    line('toolu_04', { command: 'str_replace', path: '/memories/b.md', old_str: 'secret code 42', new_str: 'public' }),
    line('toolu_05', { command: 'insert', path: '/memories/notes/n.md', insert_line: 1, insert_text: 'more\n' }),
  ]);
  // Reverted, the revert reverted (the call re-applied), and the call reverted a second time.
  expect(memgit(['revert', 'toolu_04', '--repo', repo]).status).toBe(0);
  expect(memgit(['revert', 'HEAD', '--repo', repo]).status).toBe(0);
  expect(memgit(['revert', 'toolu_04', '--repo', repo]).status).toBe(0);
  commits = git(repo, 'rev-list', '--reverse', 'HEAD').split('\n');
  expect(commits).toHaveLength(9);
});

describe('one way to name a point', () => {
  it.each([
    ['toolu_03', 3],
    ['HEAD', 8],
    ['HEAD~1', 7],
    ['HEAD^^', 6],
    ['HEAD~8', 0],
  ])('show %s names the commit git names', async (ref, index) => {
    const run = (await query(['show', ref, '--repo', repo, '--json']));
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).commit).toBe(commits[index]);
  });

  it('a commit prefix, and an ISO time (the commit in effect then) resolve too', async () => {
    expect(JSON.parse((await query(['show', commits[2].slice(0, 8), '--repo', repo, '--json'])).stdout).commit).toBe(commits[2]);
    const future = (await query(['show', '2999-01-01T00:00:00Z', '--repo', repo, '--json']));
    expect(JSON.parse(future.stdout).commit).toBe(git(repo, 'rev-parse', 'HEAD'));
    const headTime = git(repo, 'log', '-1', '--format=%cI', 'HEAD'); // a time at HEAD's second
    expect(JSON.parse((await query(['show', headTime, '--repo', repo, '--json'])).stdout).commit).toBe(commits[8]);
  });

  it('a point that names nothing is "not found" (exit 1); a malformed one is a usage error (exit 64)', async () => {
    const beyond = (await query(['show', 'HEAD~9', '--repo', repo]));
    expect(beyond.status).toBe(1);
    expect(beyond.stderr).toBe('memgit: HEAD~9 goes back further than the first commit (the store has 9 commits)\n');
    const before = (await query(['show', '2001-01-01', '--repo', repo]));
    expect(before.status).toBe(1);
    expect(before.stderr).toMatch(/^memgit: the store did not exist yet at 2001-01-01 \(its first commit is at /);
    const bad = (await query(['show', '2026-02-30', '--repo', repo]));
    expect(bad.status).toBe(64);
    expect(bad.stderr).toBe('memgit: "2026-02-30" is not a valid time\n');
  });

  it('restore --at and reset --to take the same points (HEAD~N, a time) and write one commit', () => {
    const dir = makeTempDir('memgit-history-restore-');
    dirs.push(dir);
    exec(dir, 'sess_r', [
      line('toolu_r1', { command: 'create', path: '/memories/x.md', file_text: 'v1\n' }),
      line('toolu_r2', { command: 'str_replace', path: '/memories/x.md', old_str: 'v1', new_str: 'v2' }),
    ]);
    const restore = memgit(['restore', '/memories/x.md', '--at', 'HEAD~1', '--repo', dir]);
    expect(restore.status).toBe(0);
    expect(git(dir, 'show', 'HEAD:memories/x.md')).toBe('v1');
    const reset = memgit(['reset', '--to', '2999-01-01', '--repo', dir, '--dry-run']);
    expect(reset.status).toBe(0);
    expect(reset.stderr).toContain('nothing to change');
    expect(git(dir, 'rev-list', '--count', 'HEAD')).toBe('4');
    expect(git(dir, 'status', '--porcelain')).toBe('');
  });
});

describe('memgit log', () => {
  const ids = async (args: string[]) => {
    const run = (await query(['log', '--repo', repo, '--json', ...args]));
    expect(run.status).toBe(0);
    return run.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).toolUseId ?? JSON.parse(l).title);
  };

  it('--follow follows a file back through its rename; without it the path is literal', async () => {
    const reverts = [expect.stringMatching(/^revert /), expect.stringMatching(/^revert /), expect.stringMatching(/^revert /)];
    expect(await ids(['--path', '/memories/b.md', '--follow'])).toEqual([...reverts, 'toolu_04', 'toolu_03', 'toolu_01']);
    expect(await ids(['--path', '/memories/b.md'])).toEqual([...reverts, 'toolu_04', 'toolu_03']);
    expect(await ids(['--path', '/memories/a.md', '--follow'])).toEqual(['toolu_03', 'toolu_01']); // its life ended in the rename
  });

  it('--session, --command, --since/--until and -n narrow the list', async () => {
    expect(await ids(['--session', 'sess_20261202T150000_zz01'])).toEqual(['toolu_05', 'toolu_04']);
    expect(await ids(['--command', 'create'])).toEqual(['toolu_02', 'toolu_01']);
    expect(await ids(['--command', 'operator'])).toHaveLength(3);
    expect(await ids(['--since', '2999-01-01'])).toEqual([]);
    expect(await ids(['--until', '2001-01-01'])).toEqual([]);
    expect(await ids(['--since', '2001-01-01', '-n', '2'])).toHaveLength(2);
  });

  it('-S finds the calls that introduced or removed a text, marked as such', async () => {
    const run = (await query(['log', '--repo', repo, '-S', 'secret code', '--json']));
    const rows = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((r) => [r.toolUseId ?? r.title.slice(0, 6), r.pickaxe])).toEqual([
      ['revert', 'introduced'],
      ['revert', 'removed'],
      ['revert', 'introduced'],
      ['toolu_04', 'removed'],
      ['toolu_01', 'introduced'],
    ]);
    // Case-insensitive by default (issue 26: one meaning on the UI, the API and the CLI); --case sensitive for the exact case.
    expect((await query(['log', '--repo', repo, '-S', 'SECRET', '--case', 'sensitive', '--oneline'])).stderr).toBe('memgit: no commits match\n');
    expect((await query(['log', '--repo', repo, '-S', 'SECRET', '-i', '--oneline'])).stdout.trim().split('\n')).toHaveLength(5);
    expect((await query(['log', '--repo', repo, '-S', 'SECRET', '--oneline'])).stdout.trim().split('\n')).toHaveLength(5);
  });

  it('marks reverted calls, in text and JSON; --oneline, --stat and -p', async () => {
    const json = (await query(['log', '--repo', repo, '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    const call = json.find((r) => r.toolUseId === 'toolu_04');
    expect(call.revertedBy).toEqual([commits[6], commits[8]]);
    expect(json.find((r) => r.commit === commits[6]).revertedBy).toEqual([commits[7]]);
    const oneline = (await query(['log', '--repo', repo, '--oneline', '--session', 'sess_20261202T150000_zz01'])).stdout;
    expect(oneline).toBe(
      `${commits[5].slice(0, 12)} toolu_05 insert /memories/notes/n.md\n` +
        `${commits[4].slice(0, 12)} toolu_04 str_replace /memories/b.md  (reverted by ${commits[6].slice(0, 12)}, ${commits[8].slice(0, 12)})\n`,
    );
    const stat = (await query(['log', '--repo', repo, '--stat', '-n', '1', '--path', '/memories/notes'])).stdout;
    expect(stat).toContain(' /memories/notes/n.md | +1 -0\n');
    const patch = (await query(['log', '--repo', repo, '-p', '--path', '/memories/notes/n.md'])).stdout;
    expect(patch).toContain('--- a/memories/notes/n.md\n+++ b/memories/notes/n.md\n@@ -1,1 +1,2 @@\n note\n+more\n');
  });

  it('refuses a path outside /memories and an invalid session (usage, 64), an unknown session (not found, 1)', async () => {
    for (const args of [['--path', 'notes'], ['--path', '/etc/passwd'], ['--session', 'two words'], ['--since', 'yesterday'], ['--command', 'view'], ['--follow'], ['--bogus']]) {
      const run = (await query(['log', '--repo', repo, ...args]));
      expect({ args, status: run.status }).toEqual({ args, status: 64 });
      expect(run.stdout).toBe('');
    }
    const unknown = (await query(['log', '--repo', repo, '--session', 'sess_nobody']));
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe('memgit: no session "sess_nobody" in this store (memgit sessions lists them)\n');
  });
});

describe('memgit show', () => {
  it('names the commit that reverted a call, and the revert that reverted that revert', async () => {
    const call = (await query(['show', 'toolu_04', '--repo', repo]));
    expect(call.status).toBe(0);
    expect(call.stdout).toContain(`reverted by ${commits[6]} revert toolu_04 `);
    expect(call.stdout).toContain(`(itself reverted by ${commits[7].slice(0, 12)})`);
    expect(call.stdout).toContain(`reverted by ${commits[8]} revert toolu_04 `); // the second revert too
    const firstRevert = JSON.parse((await query(['show', commits[6], '--repo', repo, '--json'])).stdout);
    expect(firstRevert.revertedBy).toEqual([commits[7]]);
    expect(firstRevert.reverts).toEqual([commits[4]]);
    expect(JSON.parse((await query(['show', 'toolu_05', '--repo', repo, '--json'])).stdout).revertedBy).toEqual([]);
  });
});

describe('finding the store', () => {
  it('commands run inside a store (or below it) use it without --repo', () => {
    const below = path.join(repo, 'memories', 'notes');
    const run = memgit(['log', '--oneline', '-n', '1'], { cwd: below });
    expect(run.status).toBe(0);
    expect(run.stdout.startsWith(commits[8].slice(0, 12))).toBe(true);
  });

  it('never adopts a git repository memgit did not create; its config and history stay as they were', () => {
    const foreign = makeTempDir('memgit-foreign-');
    dirs.push(foreign);
    git(foreign, 'init', '-q');
    fs.mkdirSync(path.join(foreign, 'sub'));
    const before = storeFingerprint(foreign);
    const config = fs.readFileSync(path.join(foreign, '.git', 'config'));
    const run = memgit(['log'], { cwd: path.join(foreign, 'sub') });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('there is no memgit store at');
    expect(fs.readFileSync(path.join(foreign, '.git', 'config'))).toEqual(config);
    expect(storeFingerprint(foreign)).toBe(before);
    expect(fs.existsSync(path.join(foreign, 'sub', 'memories-repo'))).toBe(false);
  });
});

describe('memgit cat / ls / diff / sessions', () => {
  it('cat prints a file exactly as git has it at a point; a file absent then exits 1', async () => {
    const run = (await query(['cat', '/memories/a.md', '--at', 'toolu_02', '--repo', repo]));
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(spawnSync('git', ['-C', repo, 'show', `${commits[2]}:memories/a.md`], { encoding: 'utf8' }).stdout);
    const json = JSON.parse((await query(['cat', '/memories/b.md', '--at', 'HEAD~1', '--repo', repo, '--json'])).stdout);
    // HEAD~1 is the revert of the revert: toolu_04's edit re-applied.
    expect(json).toEqual({ path: '/memories/b.md', commit: commits[7], toolUseId: null, size: 11, content: 'one\npublic\n' });
    const absent = (await query(['cat', '/memories/a.md', '--repo', repo]));
    expect(absent.status).toBe(1);
    expect(absent.stderr).toBe(`memgit: /memories/a.md does not exist at commit ${commits[8].slice(0, 12)}\n`);
    expect((await query(['cat', '/memories/notes', '--repo', repo])).stderr).toContain('is a directory');
    expect((await query(['cat', 'a.md', '--repo', repo])).status).toBe(64);
  });

  it('ls lists the files (and empty directories) at a point, with sizes, as git ls-tree does', async () => {
    const run = (await query(['ls', '--at', 'toolu_02', '--repo', repo, '--json']));
    expect(run.status).toBe(0);
    const listing = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const tree = git(repo, 'ls-tree', '-r', '-l', commits[2], 'memories')
      .split('\n')
      .map((l) => /^\d+ blob ([0-9a-f]+) +(\d+)\t(.*)$/.exec(l)!)
      .filter((m) => !m[3].endsWith('.keep'))
      .map((m) => ({ path: `/${m[3]}`, type: 'file', size: Number(m[2]), oid: m[1] }));
    expect(listing).toEqual(tree);
    expect((await query(['ls', '/memories/notes', '--repo', repo])).stdout).toBe(`      10  /memories/notes/n.md\n`);
  });

  it('diff compares two points with the unified diff git computes, pairs renames, limits to a path', async () => {
    const run = (await query(['diff', 'toolu_02', 'toolu_04', '--repo', repo]));
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      '--- a/memories/a.md\n+++ b/memories/b.md\n@@ -1,2 +1,2 @@\n one\n-secret code 42\n+public\n',
    );
    // git (too small a file for its similarity index) sees a delete and an add; the lines it adds and
    // removes, net of the rename, are the ones memgit shows.
    const gitDiff = git(repo, 'diff', commits[2], commits[4], '--', 'memories');
    expect(gitDiff).toContain('-secret code 42\n');
    expect(gitDiff).toContain('+public');
    expect((await query(['diff', 'HEAD~4', '/memories/notes', '--repo', repo, '--name-status'])).stdout).toBe('M\t/memories/notes/n.md\n');
    const json = JSON.parse((await query(['diff', 'HEAD~3', 'HEAD', '--repo', repo, '--json'])).stdout);
    expect(json).toMatchObject({ from: commits[5], to: commits[8], path: '/memories', files: [{ status: 'modified', oldPath: '/memories/b.md', added: 1, removed: 1 }] });
    for (const bad of [['/memories'], ['HEAD', 'HEAD~1', 'HEAD~2'], ['HEAD', '/etc']]) {
      expect((await query(['diff', ...bad, '--repo', repo])).status).toBe(64);
    }
  });

  it('sessions lists each session with its first/last time, calls, writes and reverted calls', async () => {
    const run = (await query(['sessions', '--repo', repo, '--json']));
    expect(run.status).toBe(0);
    const rows = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    // The documented session records (memgit.session/1): the id is `id` (issue 26; it was `session`).
    expect(rows.map(({ id: session, calls, writes, reverted }) => ({ session, calls, writes, reverted }))).toEqual([
      { session: 'sess_20261202T150000_zz01', calls: 2, writes: 2, reverted: 1 },
      { session: 'sess_20261202T140312_k3f9', calls: 3, writes: 3, reverted: 0 },
    ]);
    const times = git(repo, 'log', '--format=%cI', '--grep', 'Memory-Session: sess_20261202T140312_k3f9').split('\n');
    expect(Date.parse(rows[1].first)).toBe(Date.parse(times[times.length - 1]));
    expect(Date.parse(rows[1].last)).toBe(Date.parse(times[0]));
    expect((await query(['sessions', '--repo', repo])).stdout.split('\n')[0]).toMatch(/^sess_20261202T150000_zz01  \S+Z  \S+Z  commits 2  writes 2  reverted 1  reads 0  failed 0$/);
  });

  it('sessions lists sessions that only read or only failed, from the call log, marked as such', async () => {
    const dir = makeTempDir('memgit-history-readonly-');
    dirs.push(dir);
    exec(dir, 'sess_20261204T090000_wrt1', [line('toolu_w1', { command: 'create', path: '/memories/a.md', file_text: 'a\n' })]);
    const reads = memgit(['exec', '--repo', dir, '--session', 'sess_20261204T100000_read'], {
      input: [line('toolu_r1', { command: 'view', path: '/memories' }), line('toolu_r2', { command: 'view', path: '/memories/a.md' })].join('\n') + '\n',
    });
    expect(reads.stdout.trim().split('\n').map((l) => JSON.parse(l).is_error)).toEqual([undefined, undefined]);
    const fails = memgit(['exec', '--repo', dir, '--session', 'sess_20261204T110000_fail'], {
      input: line('toolu_f1', { command: 'str_replace', path: '/memories/a.md', old_str: 'zzz', new_str: 'y' }) + '\n',
    });
    expect(JSON.parse(fails.stdout).is_error).toBe(true);
    // Reads and failures make no commit: the git CLI sees the writer only.
    expect(git(dir, 'log', '--format=%s')).toBe('toolu_w1\nmemgit: initialise store');

    const run = (await query(['sessions', '--repo', dir, '--json']));
    expect(run.status).toBe(0);
    const rows = run.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map(({ id: session, calls, writes, reads, failed, logOnly }) => ({ session, calls, writes, reads, failed, logOnly }))).toEqual([
      { session: 'sess_20261204T110000_fail', calls: 0, writes: 0, reads: 0, failed: 1, logOnly: true },
      { session: 'sess_20261204T100000_read', calls: 0, writes: 0, reads: 2, failed: 0, logOnly: true },
      { session: 'sess_20261204T090000_wrt1', calls: 1, writes: 1, reads: 0, failed: 0, logOnly: false },
    ]);
    const text = (await query(['sessions', '--repo', dir])).stdout.split('\n');
    expect(text[1]).toMatch(/^sess_20261204T100000_read  \S+Z  \S+Z  commits 0  writes 0  reverted 0  reads 2  failed 0  \(no commits: call log only\)$/);
    expect(text[2]).toMatch(/reads 0  failed 0$/);

    // Its commits: none, said as such (not "no session"); its calls: the reads, in order.
    const log = (await query(['log', '--repo', dir, '--session', 'sess_20261204T100000_read']));
    expect(log.status).toBe(0);
    expect(log.stderr).toBe('memgit: session sess_20261204T100000_read made no commits; its reads and failed calls: memgit log --all-calls --session sess_20261204T100000_read\n');
    const calls = (await query(['log', '--repo', dir, '--session', 'sess_20261204T100000_read', '--all-calls', '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(calls.map((c) => [c.id, c.kind])).toEqual([['toolu_r2', 'read'], ['toolu_r1', 'read']]);
    expect((await query(['log', '--repo', dir, '--session', 'sess_nobody'])).status).toBe(1);
  });

  it.each(['cat', 'ls', 'diff', 'sessions', 'log', 'show'])('memgit %s --help shows an example and the exit codes', async (command) => {
    const run = (await query([command, '--help']));
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`memgit ${command}`);
    expect(run.stdout).toContain('Exit codes: 0 success; 1 not found');
    expect(run.stdout).toContain('64 usage error');
  });
});

describe('memgit gc', () => {
  it('--json reports; a second gc with nothing new does no work and leaves the pack as it was', () => {
    const dir = makeTempDir('memgit-history-gc-');
    dirs.push(dir);
    exec(dir, 'sess_gc', [line('toolu_g1', { command: 'create', path: '/memories/g.md', file_text: 'g\n' })]);
    const first = memgit(['gc', '--repo', dir, '--json']);
    expect(first.status).toBe(0);
    expect(first.stderr).toBe(''); // not a terminal: no progress lines
    expect(JSON.parse(first.stdout)).toMatchObject({ full: true, upToDate: false, packedObjects: expect.any(Number) });
    const packDir = path.join(dir, '.git', 'objects', 'pack');
    const packs = fs.readdirSync(packDir).map((name) => [name, fs.statSync(path.join(packDir, name)).mtimeMs]);
    const second = memgit(['gc', '--repo', dir, '--json']);
    expect(JSON.parse(second.stdout)).toMatchObject({ upToDate: true, packedObjects: 0, looseRemoved: 0, packsRemoved: 0 });
    expect(fs.readdirSync(packDir).map((name) => [name, fs.statSync(path.join(packDir, name)).mtimeMs])).toEqual(packs);
    expect(memgit(['gc', '--repo', dir]).stdout).toMatch(/^nothing to pack: every object is in one pack already/);
    expect(spawnSync('git', ['-C', dir, 'fsck', '--full'], { encoding: 'utf8' }).status).toBe(0);
    // A new call makes loose objects again: the next gc packs them.
    exec(dir, 'sess_gc', [line('toolu_g2', { command: 'create', path: '/memories/h.md', file_text: 'h\n' })]);
    expect(JSON.parse(memgit(['gc', '--repo', dir, '--json']).stdout)).toMatchObject({ upToDate: false, packsRemoved: 1 });
  });
});
