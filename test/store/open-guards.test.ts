/**
 * What `MemoryStore.open` refuses before touching the disk, and a retry after a call whose commit landed
 * but whose bookkeeping failed.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { NotAStoreError } from '../../src/store/errors';
import { gitReport, QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();

test('a git repository memgit did not create is refused untouched', async () => {
  const dir = tempDir();
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  fs.writeFileSync(path.join(dir, 'app.js'), 'console.log(1)\n');
  execFileSync('git', ['-C', dir, 'add', 'app.js']);
  execFileSync('git', ['-C', dir, '-c', 'user.name=dev', '-c', 'user.email=dev@example.invalid', 'commit', '-qm', 'project']);
  const configBefore = fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8');
  await expect(MemoryStore.open(dir, QUIET)).rejects.toBeInstanceOf(NotAStoreError);
  expect(fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8')).toBe(configBefore);
  expect(execFileSync('git', ['-C', dir, 'log', '--format=%s'], { encoding: 'utf8' })).toBe('project\n');
  expect(execFileSync('git', ['-C', dir, 'status', '--porcelain'], { encoding: 'utf8' })).toBe('');
  expect(fs.existsSync(path.join(dir, 'memories'))).toBe(false);
});

test('a file, a non-empty folder, and (with create: false) a missing store are refused before anything is created', async () => {
  const dir = tempDir();
  const file = path.join(dir, 'notes.txt');
  fs.writeFileSync(file, 'x');
  await expect(MemoryStore.open(file, QUIET)).rejects.toThrow(/is not a folder/);

  const busy = path.join(dir, 'busy');
  fs.mkdirSync(busy);
  fs.writeFileSync(path.join(busy, 'keep.me'), 'x');
  await expect(MemoryStore.open(busy, QUIET)).rejects.toThrow(/is not empty and is not a git repository/);
  expect(fs.readdirSync(busy)).toEqual(['keep.me']);

  const missing = path.join(dir, 'typo');
  await expect(MemoryStore.open(missing, { ...QUIET, create: false })).rejects.toThrow(/there is no memgit store at/);
  expect(fs.existsSync(missing)).toBe(false);
});

test('a retry after a call whose commit landed but whose history append failed is replayed, not applied twice', async () => {
  const dir = tempDir();
  const repo = path.join(dir, 'store');
  const store = await MemoryStore.open(repo, QUIET);
  try {
    await store.execute(toolUse('toolu_a', { command: 'create', path: '/memories/a.md', file_text: 'one' }), { session: 's' });
    // Make the next history append fail after the ref has moved (EISDIR on append).
    const historyFile = store.history.file;
    fs.renameSync(historyFile, `${historyFile}.saved`);
    fs.mkdirSync(historyFile);
    const insert = toolUse('toolu_b', { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'zero' });
    await expect(store.execute(insert, { session: 's' })).rejects.toThrow();
    fs.rmdirSync(historyFile);
    fs.renameSync(`${historyFile}.saved`, historyFile);

    const retried = await store.executeWithReport(insert, { session: 's' });
    expect(retried.replayed).toBe(true);
    expect(retried.result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_b', content: 'The file /memories/a.md has been edited.' });
    const report = gitReport(repo);
    expect(report.commits.map((c) => c.message.split('\n')[0])).toEqual(['memgit: initialise store', 'toolu_a', 'toolu_b']);
    expect(report.fsckOutput).toBe('');
    expect(report.status).toBe('');
    expect(fs.readFileSync(path.join(repo, 'memories', 'a.md'), 'utf8')).toBe('zero\none');
  } finally {
    await store.close();
  }
});
