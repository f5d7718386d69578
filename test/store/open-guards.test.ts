/**
 * What `MemoryStore.open` refuses before touching the disk, and a retry after a call whose commit landed
 * but whose bookkeeping failed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { NotAStoreError } from '../../src/store/errors';
import { gitReport, QUIET, toolUse, useTempDir } from './git-helpers';
import { CLI_MAIN, ensureBuilt } from '../support/dist';

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
    // The commit landed: the call is answered as applied, and the failed append is repaired later.
    expect(await store.execute(insert, { session: 's' })).toEqual({ type: 'tool_result', tool_use_id: 'toolu_b', content: 'The file /memories/a.md has been edited.' });
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

describe('a git repository memgit did not create, even one without commits (`git init X`)', () => {
  /** Every file under .git with its bytes and mode: what "untouched" means. */
  const snapshot = (dir: string): string => {
    const parts: string[] = [];
    const walk = (rel: string): void => {
      for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
        const child = path.join(rel, name);
        const stat = fs.lstatSync(path.join(dir, child));
        if (stat.isDirectory()) {
          parts.push(`${child}/ ${stat.mode}`);
          walk(child);
        } else {
          parts.push(`${child} ${stat.mode} ${fs.readFileSync(path.join(dir, child)).toString('base64')}`);
        }
      }
    };
    walk('');
    return parts.join('\n');
  };

  test.each([
    ['with no commits', false],
    ['with a commit', true],
  ])('%s is refused by every kind of open, untouched', async (_name, withCommit) => {
    const dir = tempDir();
    execFileSync('git', ['init', '-q', '-b', 'main', dir]);
    if (withCommit) {
      fs.writeFileSync(path.join(dir, 'app.js'), 'console.log(1)\n');
      execFileSync('git', ['-C', dir, 'add', 'app.js']);
      execFileSync('git', ['-C', dir, '-c', 'user.name=dev', '-c', 'user.email=dev@example.invalid', 'commit', '-qm', 'project']);
    }
    const before = snapshot(dir);
    // Read-only commands (log, show, serve) open with create: false; exec creates stores.
    for (const create of [false, true]) {
      await expect(MemoryStore.open(dir, { ...QUIET, create })).rejects.toThrow(/is a git repository that memgit did not create/);
      expect(snapshot(dir)).toBe(before);
    }
    const config = fs.readFileSync(path.join(dir, '.git', 'config'), 'utf8');
    expect(config).not.toMatch(/memgit|hooksPath/);
    const log = spawnSync('git', ['-C', dir, 'log', '--format=%s'], { encoding: 'utf8' });
    expect(log.stdout).toBe(withCommit ? 'project\n' : '');
  });

  test('the CLI refuses it too: log, show and exec leave .git byte for byte as it was', async () => {
    await ensureBuilt();
    const dir = tempDir();
    execFileSync('git', ['init', '-q', '-b', 'main', dir]);
    const before = snapshot(dir);
    for (const args of [['log'], ['show', 'HEAD'], ['exec', '--session', 'sess_x']]) {
      const run = spawnSync(process.execPath, [CLI_MAIN, ...args, '--repo', dir], {
        encoding: 'utf8',
        input: '{"type":"tool_use","id":"toolu_x","name":"memory","input":{"command":"create","path":"/memories/a.md","file_text":"x"}}\n',
      });
      expect(run.status).not.toBe(0);
      expect(run.stderr).toMatch(/did not create/);
      expect(snapshot(dir)).toBe(before);
    }
  });
});

test('a first open interrupted after the marker is finished by the next open; a read-only open refuses it', async () => {
  const dir = path.join(tempDir(), 'store');
  fs.mkdirSync(path.join(dir, '.git', 'memgit'), { recursive: true });
  fs.writeFileSync(path.join(dir, '.git', 'memgit', 'MEMGIT_STORE'), 'memgit\n');
  await expect(MemoryStore.open(dir, { ...QUIET, create: false })).rejects.toThrow(/never finished/);
  const store = await MemoryStore.open(dir, QUIET);
  await store.close();
  expect(gitReport(dir).commits.map((c) => c.message)).toEqual(['memgit: initialise store\n']);
});
