/**
 * When an agent's call is acknowledged: once its commit is durable and in the history index. Its
 * working-tree file and the git index follow under the write lock, before the lock goes and before the
 * next call of any process; `store.settled()` waits for them; a process killed in between leaves the
 * transaction marker, and the next open projects HEAD.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { DIST_ENTRY, ensureBuilt } from '../support/dist';
import { gitReport, QUIET, toolUse, useTempDir, workingTreeFiles } from './git-helpers';

const tempDir = useTempDir();
const SESSION = { session: 'sess_ack' };

beforeAll(() => ensureBuilt());

test('the result comes with the commit durable and indexed; settled() adds the working tree and index', async () => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  try {
    const report = await store.executeWithReport(toolUse('toolu_ack_1', { command: 'create', path: '/memories/a.md', file_text: 'alpha\n' }), SESSION);
    expect(report.result.is_error).toBeUndefined();
    // At the acknowledgement: the branch names the commit on disk, the history index and the call log know it.
    expect(fs.readFileSync(path.join(dir, '.git', 'refs', 'heads', 'main'), 'utf8').trim()).toBe(report.commit);
    expect(store.history.byToolUseId('toolu_ack_1')?.commit).toBe(report.commit);
    expect(fs.readFileSync(path.join(dir, '.git', 'memgit', 'calls-v1.jsonl'), 'utf8')).toContain('"toolu_ack_1"');
    await store.settled();
    expect(workingTreeFiles(dir).get('memories/a.md')?.toString('utf8')).toBe('alpha\n');
    expect(fs.existsSync(path.join(dir, '.git', 'memgit', 'transaction'))).toBe(false);
    const git = gitReport(dir);
    expect(git.status).toBe('');
    expect(git.fsckCode).toBe(0);
  } finally {
    await store.close();
  }
});

test('the next call starts only once the previous one is projected', async () => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  try {
    await store.execute(toolUse('toolu_next_1', { command: 'create', path: '/memories/one.md', file_text: 'one\n' }), SESSION);
    await store.execute(toolUse('toolu_next_2', { command: 'create', path: '/memories/two.md', file_text: 'two\n' }), SESSION);
    // The second call waited for the first one's projection: its file is there without settled().
    expect(workingTreeFiles(dir).get('memories/one.md')?.toString('utf8')).toBe('one\n');
    await store.settled();
    expect([...workingTreeFiles(dir).keys()].sort()).toEqual(['memories/one.md', 'memories/two.md']);
    expect(gitReport(dir).status).toBe('');
  } finally {
    await store.close();
  }
});

test('a process killed right after the acknowledgement loses nothing: the next open projects HEAD', () => {
  const dir = tempDir();
  // The child exits the instant its call is acknowledged, before the projection (started on the next
  // turn of the event loop) can run: no close, no exit handlers.
  const script = `
    const { MemoryStore } = require(${JSON.stringify(DIST_ENTRY)});
    (async () => {
      const store = await MemoryStore.open(${JSON.stringify(dir)}, { log: () => undefined });
      await store.execute({ type: 'tool_use', id: 'toolu_seed', name: 'memory', input: { command: 'create', path: '/memories/seed.md', file_text: 'seed\\n' } }, { session: 'sess_kill' });
      await store.settled();
      const result = await store.execute({ type: 'tool_use', id: 'toolu_killed', name: 'memory', input: { command: 'create', path: '/memories/acked.md', file_text: 'acked\\n' } }, { session: 'sess_kill' });
      process.stdout.write(JSON.stringify(result) + '\\n');
      process.kill(process.pid, 'SIGKILL');
    })();
  `;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(child.signal).toBe('SIGKILL');
  expect(JSON.parse(child.stdout)).toEqual({ type: 'tool_result', tool_use_id: 'toolu_killed', content: 'File created successfully at: /memories/acked.md' });
  // Killed between the acknowledgement and the projection: the commit is there, the working tree is not yet.
  expect(fs.existsSync(path.join(dir, '.git', 'memgit', 'transaction'))).toBe(true);
  expect(fs.existsSync(path.join(dir, 'memories', 'acked.md'))).toBe(false);
  const before = gitReport(dir);
  expect(before.commits.map((c) => c.message.split('\n')[0]).slice(-1)).toEqual(['toolu_killed']);
  expect(before.fsckCode).toBe(0);
  return (async () => {
    const store = await MemoryStore.open(dir, QUIET);
    try {
      expect(workingTreeFiles(dir).get('memories/acked.md')?.toString('utf8')).toBe('acked\n');
      expect(fs.existsSync(path.join(dir, '.git', 'memgit', 'transaction'))).toBe(false);
      expect(store.history.byToolUseId('toolu_killed')).toBeDefined();
      expect(gitReport(dir).status).toBe('');
    } finally {
      await store.close();
    }
  })();
});
