/**
 * The working tree drifts from HEAD: a transient lstat failure while a call projects its commit, or
 * someone with disk access replacing a tracked folder by a symlink, or planting a FIFO. The projection is
 * rebuilt from HEAD — at once by the call that finds it, and by the next open — so that no deleted file
 * stays on disk and no sibling of a replaced folder goes missing. Links are never followed.
 */
import { injector } from './fault-injector';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, headFiles, makeTempDir, QUIET, removeDir, storeFingerprint, toolUse, useTempDir, workingTreeFiles } from './git-helpers';

const tempDir = useTempDir();
const SESSION = { session: 'sess_drift' };
let n = 0;
// Settled: these tests look at the working tree, which follows an acknowledged call under the write lock.
const call = async (store: MemoryStore, input: Record<string, unknown>) => {
  const result = await store.execute(toolUse(`toolu_d${++n}`, input), SESSION);
  await store.settled();
  return result;
};

/** The working tree holds exactly HEAD's memory files, and git sees nothing to report. */
function expectProjected(dir: string): void {
  const report = gitReport(dir);
  expect(report.status).toBe('');
  expect(report.fsckCode).toBe(0);
  const head = [...headFiles(dir)].filter(([file]) => file.startsWith('memories/'));
  const worktree = workingTreeFiles(dir);
  expect([...worktree.keys()].sort()).toEqual(head.map(([file]) => file).sort());
  for (const [file, bytes] of head) expect(worktree.get(file)?.equals(bytes)).toBe(true);
}

async function seeded(dir: string): Promise<MemoryStore> {
  const store = await MemoryStore.open(dir, QUIET);
  for (const [file, text] of [['dir/b.md', 'bee\n'], ['dir/c.md', 'sea\n'], ['dir/sub/d.md', 'dee\n'], ['top.md', 'top\n']]) {
    expect((await call(store, { command: 'create', path: `/memories/${file}`, file_text: text })).is_error).toBeUndefined();
  }
  return store;
}

test.each(['memories', 'memories/dir', 'memories/dir/b.md'])('a transient lstat failure (%s) while a delete is projected leaves no file behind', async (target) => {
  const dir = path.join(tempDir(), 'store');
  const store = await seeded(dir);
  let failedOnce = false;
  injector.reset(dir);
  injector.persistent = (c) => {
    if (failedOnce || c.name !== 'lstat' || c.file !== path.join(dir, target)) return null;
    failedOnce = true;
    return 'EIO';
  };
  try {
    const result = await call(store, { command: 'delete', path: '/memories/dir/b.md' });
    expect(result).toEqual({ type: 'tool_result', tool_use_id: `toolu_d${n}`, content: 'Successfully deleted /memories/dir/b.md' });
  } finally {
    injector.reset(null);
  }
  expect(failedOnce).toBe(true);
  expect(fs.existsSync(path.join(dir, 'memories', 'dir', 'b.md'))).toBe(false);
  expectProjected(dir);
  await store.close();
  await (await MemoryStore.open(dir, QUIET)).close();
  expectProjected(dir);
});

test('a tracked folder replaced by a symlink: the next write restores its siblings at once, never touching the target', async () => {
  const dir = path.join(tempDir(), 'store');
  const outside = makeTempDir('memgit-outside-');
  try {
    fs.writeFileSync(path.join(outside, 'b.md'), 'outside\n');
    const outsideBefore = storeFingerprint(outside);
    const store = await seeded(dir);
    fs.rmSync(path.join(dir, 'memories', 'dir'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'memories', 'dir'));
    // A write into the replaced folder, and a delete through it.
    expect((await call(store, { command: 'create', path: '/memories/dir/new.md', file_text: 'new\n' })).is_error).toBeUndefined();
    expectProjected(dir);
    expect(fs.lstatSync(path.join(dir, 'memories', 'dir')).isDirectory()).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'memories', 'dir', 'c.md'), 'utf8')).toBe('sea\n');
    expect(fs.readFileSync(path.join(dir, 'memories', 'dir', 'sub', 'd.md'), 'utf8')).toBe('dee\n');

    fs.rmSync(path.join(dir, 'memories', 'dir'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'memories', 'dir'));
    expect((await call(store, { command: 'delete', path: '/memories/dir/b.md' })).is_error).toBeUndefined();
    expectProjected(dir);
    expect(storeFingerprint(outside)).toBe(outsideBefore);
    await store.close();
  } finally {
    removeDir(outside);
  }
});

test('links and special files planted anywhere in the working tree while the store is closed are replaced on open', async () => {
  const dir = path.join(tempDir(), 'store');
  const outside = makeTempDir('memgit-outside-');
  try {
    await (await seeded(dir)).close();
    const mem = (rel: string) => path.join(dir, 'memories', rel);
    fs.rmSync(mem('dir/sub'), { recursive: true });
    fs.symlinkSync(outside, mem('dir/sub')); // a nested folder
    fs.rmSync(mem('top.md'));
    execFileSync('mkfifo', [mem('top.md')]); // a file
    fs.symlinkSync('/etc/passwd', mem('dir/extra.md')); // an untracked link
    const store = await MemoryStore.open(dir, QUIET);
    expectProjected(dir);
    expect(fs.readFileSync(mem('top.md'), 'utf8')).toBe('top\n');
    expect(fs.readFileSync(mem('dir/sub/d.md'), 'utf8')).toBe('dee\n');
    expect(fs.readdirSync(outside)).toEqual([]);
    await store.close();

    // The memory root itself replaced by a link.
    fs.rmSync(path.join(dir, 'memories'), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, 'memories'));
    await (await MemoryStore.open(dir, QUIET)).close();
    expectProjected(dir);
    expect(fs.lstatSync(path.join(dir, 'memories')).isDirectory()).toBe(true);
    expect(fs.readdirSync(outside)).toEqual([]);
  } finally {
    removeDir(outside);
  }
});
