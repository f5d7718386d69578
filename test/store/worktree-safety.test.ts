/**
 * Someone with disk access plants links and special files in the working tree, or commits tree entries
 * memgit never writes (symlink, gitlink, executable modes) with the git CLI. memgit must never follow a
 * link — reads come from git, writes replace the link itself — never read or write outside the store,
 * never check such an entry out, and repair the working tree when the store is reopened.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, makeTempDir, removeDir, storeFingerprint } from './git-helpers';

const session = { session: 'sess_disk' };
let n = 0;
// Settled: these tests plant links in the working tree and look at it, which follows an acknowledged call.
const call = async (store: MemoryStore, input: Record<string, unknown>) => {
  const result = await store.execute({ type: 'tool_use', id: `toolu_w${++n}`, name: 'memory', input }, session);
  await store.settled();
  return result;
};

let repo: string;
let outside: string;
beforeEach(() => {
  repo = makeTempDir();
  outside = makeTempDir('memgit-outside-');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
  fs.writeFileSync(path.join(outside, 'x.md'), 'outside x\n');
});
afterEach(() => {
  removeDir(repo);
  removeDir(outside);
});

test('planted symlinks and FIFOs are never followed, are replaced by writes, and are removed on reopen', async () => {
  let store = await MemoryStore.open(repo);
  for (const [file, text] of [['a.md', 'alpha\n'], ['dir/x.md', 'inside x\n'], ['dir/keep.md', 'keep\n'], ['f.md', 'fifo\n']]) {
    expect((await call(store, { command: 'create', path: `/memories/${file}`, file_text: text })).is_error).toBeUndefined();
  }
  const outsideBefore = storeFingerprint(outside);
  const mem = (rel: string) => path.join(repo, 'memories', rel);
  fs.rmSync(mem('a.md'));
  fs.symlinkSync(path.join(outside, 'secret.txt'), mem('a.md'));
  fs.rmSync(mem('dir'), { recursive: true });
  fs.symlinkSync(outside, mem('dir'));
  fs.rmSync(mem('f.md'));
  execFileSync('mkfifo', [mem('f.md')]);

  // Reads come from git, not through the links.
  expect((await call(store, { command: 'view', path: '/memories/a.md' })).content).toContain('alpha');
  expect((await call(store, { command: 'view', path: '/memories/dir/x.md' })).content).toContain('inside x');
  expect((await call(store, { command: 'view', path: '/memories/f.md' })).content).toContain('fifo');
  const listing = (await call(store, { command: 'view', path: '/memories' })).content;
  expect(listing).not.toContain('secret');

  // Writes replace the link or FIFO itself and never touch what a link points to.
  expect((await call(store, { command: 'str_replace', path: '/memories/a.md', old_str: 'alpha', new_str: 'beta' })).is_error).toBeUndefined();
  expect(fs.lstatSync(mem('a.md')).isFile()).toBe(true);
  expect(fs.readFileSync(mem('a.md'), 'utf8')).toBe('beta\n');
  expect((await call(store, { command: 'create', path: '/memories/f.md', file_text: 'no longer a fifo\n' })).is_error).toBeUndefined();
  expect(fs.lstatSync(mem('f.md')).isFile()).toBe(true);
  expect((await call(store, { command: 'delete', path: '/memories/dir/x.md' })).is_error).toBeUndefined();
  expect(storeFingerprint(outside)).toBe(outsideBefore);
  expect((await call(store, { command: 'create', path: '/memories/dir/y.md', file_text: 'y\n' })).is_error).toBeUndefined();
  expect(fs.lstatSync(mem('dir')).isDirectory()).toBe(true);
  expect(fs.existsSync(path.join(outside, 'y.md'))).toBe(false);
  expect(storeFingerprint(outside)).toBe(outsideBefore);
  await store.close();

  // New plants while closed: reopening finds them and rebuilds the working tree from HEAD.
  fs.symlinkSync('/etc/passwd', mem('passwd.md'));
  execFileSync('mkfifo', [mem('pipe.md')]);
  fs.rmSync(mem('dir'), { recursive: true });
  fs.symlinkSync(outside, mem('dir'));
  const logged: string[] = [];
  store = await MemoryStore.open(repo, { log: (m) => logged.push(m) });
  expect(logged.join('\n')).toMatch(/repaired .*removed memories\/(passwd|pipe|dir)/);
  expect(fs.existsSync(mem('passwd.md'))).toBe(false);
  expect(fs.existsSync(mem('pipe.md'))).toBe(false);
  expect(fs.lstatSync(mem('dir')).isDirectory()).toBe(true);
  expect(fs.readFileSync(mem('dir/keep.md'), 'utf8')).toBe('keep\n');
  expect(storeFingerprint(outside)).toBe(outsideBefore);
  await store.close();
  const git = gitReport(repo);
  expect(git.fsckCode).toBe(0);
  expect(git.status).toBe('');
});

test('symlink, gitlink and executable entries committed with the git CLI are refused on checkout and hidden from view', async () => {
  let store = await MemoryStore.open(repo);
  await call(store, { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' });
  await store.close();
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
  const target = git('hash-object', '-w', '--stdin', path.join(outside, 'secret.txt')).split('\n')[0];
  const script = execFileSync('git', ['-C', repo, 'hash-object', '-w', '--stdin'], { input: '#!/bin/sh\ntouch /tmp/pwned\n', encoding: 'utf8' }).trim();
  const head = git('rev-parse', 'HEAD');
  git('update-index', '--add', '--cacheinfo', `120000,${target},memories/link.md`);
  git('update-index', '--add', '--cacheinfo', `160000,${head},memories/sub`);
  git('update-index', '--add', '--cacheinfo', `100755,${script},memories/run.sh`);
  git('-c', 'user.name=planter', '-c', 'user.email=p@example.com', 'commit', '-q', '-m', 'planted entries');
  // A checkout from scratch (as after a crash or a fresh clone): the index is rebuilt from HEAD.
  fs.rmSync(path.join(repo, '.git', 'index'));

  const logged: string[] = [];
  store = await MemoryStore.open(repo, { log: (m) => logged.push(m) });
  const log = logged.join('\n');
  expect(log).toContain('refused memories/link.md (mode 120000');
  expect(log).toContain('refused memories/sub (mode 160000');
  expect(log).toContain('refused memories/run.sh (mode 100755');
  for (const planted of ['link.md', 'sub', 'run.sh']) expect(fs.existsSync(path.join(repo, 'memories', planted))).toBe(false);

  const listing = (await call(store, { command: 'view', path: '/memories' })).content;
  expect(listing).toContain('a.md');
  for (const planted of ['link.md', 'sub', 'run.sh']) expect(listing).not.toContain(planted);
  expect((await call(store, { command: 'view', path: '/memories/link.md' })).is_error).toBe(true);

  // Writing where a planted entry sits replaces it with a plain file.
  expect((await call(store, { command: 'create', path: '/memories/link.md', file_text: 'plain\n' })).is_error).toBeUndefined();
  expect((await call(store, { command: 'create', path: '/memories/sub/x.md', file_text: 'x\n' })).is_error).toBeUndefined();
  expect(git('ls-tree', 'HEAD', 'memories/link.md')).toMatch(/^100644 blob /);
  expect(git('ls-tree', 'HEAD', 'memories/sub')).toMatch(/^040000 tree /);
  expect(fs.lstatSync(path.join(repo, 'memories', 'link.md')).isFile()).toBe(true);
  await store.close();
  expect(fs.existsSync('/tmp/pwned')).toBe(false);
});
