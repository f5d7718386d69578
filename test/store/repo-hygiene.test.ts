/**
 * Repository hygiene: the store's own git config protects git CLI users working inside it and pins the
 * formats isomorphic-git reads and writes, so that a hostile or merely unusual global git config
 * (index v4, split index, many-files mode, hooks, fsmonitor) can neither break memgit's writes nor make
 * the git CLI run anything.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { CLI_MAIN, ensureBuilt } from '../support/dist';
import { gitReport, makeTempDir, removeDir } from './git-helpers';

const EXPECTED_CONFIG: Array<[string, string]> = [
  ['core.symlinks', 'false'],
  ['core.protectNTFS', 'true'],
  ['core.protectHFS', 'true'],
  ['core.hooksPath', '/dev/null'],
  ['core.fsmonitor', 'false'],
  ['core.splitIndex', 'false'],
  ['core.untrackedCache', 'false'],
  ['core.autocrlf', 'false'],
  ['core.ignorecase', 'false'],
  ['index.version', '2'],
  ['feature.manyFiles', 'false'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

const git = (repo: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
  spawnSync('git', ['-C', repo, ...args], { encoding: 'utf8', env });

function indexVersion(repo: string): number {
  return fs.readFileSync(path.join(repo, '.git', 'index')).readUInt32BE(4);
}

let repo: string;
let home: string;
beforeAll(() => ensureBuilt());
beforeEach(() => {
  repo = makeTempDir();
  home = makeTempDir('memgit-home-');
});
afterEach(() => {
  removeDir(repo);
  removeDir(home);
});

test('a new store pins the protective config in the repository itself', async () => {
  const store = await MemoryStore.open(repo);
  await store.close();
  // An empty HOME and no system config: only the repository's own settings answer.
  const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' };
  for (const [key, value] of EXPECTED_CONFIG) {
    expect({ key, value: git(repo, env, 'config', '--local', '--get', key).stdout.trim() }).toEqual({ key, value });
  }
  expect(indexVersion(repo)).toBeLessThanOrEqual(3);
});

test('a hostile global git config cannot break a store or make the git CLI run a hook', async () => {
  const marker = path.join(home, 'ran');
  const hooks = path.join(home, 'hooks');
  fs.mkdirSync(hooks);
  for (const hook of ['pre-commit', 'post-commit', 'commit-msg', 'post-index-change', 'reference-transaction', 'post-checkout', 'fsmonitor']) {
    fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`, { mode: 0o755 });
  }
  fs.writeFileSync(
    path.join(home, '.gitconfig'),
    [
      '[index]',
      '\tversion = 4',
      '[core]',
      '\tsplitIndex = true',
      `\thooksPath = ${hooks}`,
      `\tfsmonitor = ${path.join(hooks, 'fsmonitor')}`,
      '\tuntrackedCache = true',
      '\tautocrlf = true',
      '\tsymlinks = true',
      '[feature]',
      '\tmanyFiles = true',
      '[splitIndex]',
      '\tmaxPercentChange = 0',
      '[gc]',
      '\tauto = 1',
      '[init]',
      '\tdefaultBranch = hostile',
      '[user]',
      '\tname = "\\"><img src=x> \\\\ Weird; Name"',
      '\temail = "not an email"',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), GIT_CONFIG_NOSYSTEM: '1' };
  const exec = (lines: object[]) => {
    const run = spawnSync(process.execPath, [CLI_MAIN, 'exec', '--repo', repo, '--session', 'sess_hostile_home'], {
      input: lines.map((input, i) => JSON.stringify({ type: 'tool_use', id: `toolu_${Date.now()}_${i}`, name: 'memory', input })).join('\n') + '\n',
      encoding: 'utf8',
      env,
    });
    expect(run.status).toBe(0);
    for (const line of run.stdout.trim().split('\n')) expect(JSON.parse(line).is_error).toBeUndefined();
  };

  exec([
    { command: 'create', path: '/memories/a.md', file_text: 'alpha\r\nbeta\n' },
    { command: 'create', path: '/memories/dir/b.md', file_text: 'b\n' },
    { command: 'str_replace', path: '/memories/a.md', old_str: 'beta', new_str: 'gamma' },
  ]);
  // The git CLI, under the same hostile config, works in the store: status refreshes the index, a commit
  // runs every hook git would run.
  expect(git(repo, env, 'status', '--porcelain').stdout).toBe('');
  const commit = git(repo, env, 'commit', '--allow-empty', '-q', '-m', 'a user commit');
  expect(commit.status).toBe(0);
  expect(git(repo, env, 'symbolic-ref', 'HEAD').stdout.trim()).toBe('refs/heads/main');
  expect(indexVersion(repo)).toBeLessThanOrEqual(3);
  expect(fs.readdirSync(path.join(repo, '.git')).filter((f) => f.startsWith('sharedindex.'))).toEqual([]);

  // memgit keeps writing after the git CLI rewrote the index, and everything stays consistent.
  exec([
    { command: 'insert', path: '/memories/dir/b.md', insert_line: 1, insert_text: 'c\n' },
    { command: 'rename', old_path: '/memories/dir/b.md', new_path: '/memories/c.md' },
    { command: 'delete', path: '/memories/dir' },
  ]);
  expect(git(repo, env, 'status', '--porcelain').stdout).toBe('');
  const report = gitReport(repo);
  expect(report.fsckCode).toBe(0);
  expect(report.status).toBe('');
  expect(report.commits).toHaveLength(1 + 3 + 1 + 3);
  // Bytes are exact (no autocrlf conversion), and no hook or fsmonitor ever ran.
  expect(fs.readFileSync(path.join(repo, 'memories', 'a.md'), 'utf8')).toBe('alpha\r\ngamma\n');
  expect(execFileSync('git', ['-C', repo, 'show', 'HEAD:memories/a.md'], { encoding: 'utf8', env })).toBe('alpha\r\ngamma\n');
  expect(fs.existsSync(marker)).toBe(false);
}, 60_000);
