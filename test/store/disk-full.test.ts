/**
 * A disk that fills up and stays full until space is freed (an fs shim with a byte budget): every call
 * made while it is full ends cleanly — applied, or not applied with the fixed "disk is full" text —
 * and once space is freed the same calls, retried with their ids, land exactly once. Nothing is lost.
 */
import { fillingDisk } from './fault-injector';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { gitReport, headFiles, toolUse, useTempDir, workingTreeFiles } from './git-helpers';

const tempDir = useTempDir();
const SESSION = { session: 'sess_full' };
const FULL = 'Error: The memory store could not complete this command (the disk is full). Nothing was changed.';

const CALLS: Array<[string, Record<string, unknown>, string]> = [
  ['toolu_f1', { command: 'create', path: '/memories/notes/b.md', file_text: 'bee\n' }, 'File created successfully at: /memories/notes/b.md'],
  ['toolu_f2', { command: 'str_replace', path: '/memories/a.md', old_str: 'two', new_str: 'TWO' }, 'The memory file has been edited.'],
  ['toolu_f3', { command: 'insert', path: '/memories/a.md', insert_line: 0, insert_text: 'zero\n' }, 'The file /memories/a.md has been edited.'],
  ['toolu_f4', { command: 'rename', old_path: '/memories/notes/b.md', new_path: '/memories/c.md' }, 'Successfully renamed /memories/notes/b.md to /memories/c.md'],
  ['toolu_f5', { command: 'delete', path: '/memories/old.md' }, 'Successfully deleted /memories/old.md'],
];

test.each([0, 900, 1600, 3000])('a disk with %i bytes left: calls fail cleanly while full and land once after space is freed', async (budget) => {
  const dir = path.join(tempDir(), 'store');
  const logs: string[] = [];
  let store = await MemoryStore.open(dir, { log: (m) => logs.push(m) });
  await store.execute(toolUse('toolu_seed', { command: 'create', path: '/memories/a.md', file_text: 'one\ntwo\n' }), SESSION);
  await store.execute(toolUse('toolu_old', { command: 'create', path: '/memories/old.md', file_text: 'old\n' }), SESSION);

  const disk = fillingDisk(dir, budget);
  const failed: Array<[string, Record<string, unknown>, string]> = [];
  try {
    for (const call of CALLS) {
      const result = await store.execute(toolUse(call[0], call[1]), SESSION);
      if (result.is_error) {
        expect(result.content).toBe(FULL);
        failed.push(call);
      } else {
        expect(result.content.startsWith(call[2])).toBe(true);
      }
      // While full, reads still work.
      expect((await store.execute(toolUse(`${call[0]}_view`, { command: 'view', path: '/memories/a.md' }), SESSION)).is_error).toBeUndefined();
    }
  } finally {
    disk.free();
  }
  if (budget === 0) expect(failed.length).toBe(CALLS.length);
  if (process.env.MEMGIT_SWEEP_DEBUG) process.stderr.write(`budget ${budget}: ${CALLS.length - failed.length} applied, ${failed.length} refused\n`);
  expect(disk.isFull()).toBe(true);
  const whileFull = gitReport(dir);
  expect(whileFull.fsckOutput.split('\n').filter((line) => line && !line.startsWith('dangling '))).toEqual([]);
  expect(whileFull.fsckCode).toBe(0);

  // Space is freed: the model retries what failed (same ids), in order.
  for (const [id, input, text] of failed) {
    const result = await store.execute(toolUse(id, input), SESSION);
    expect(result.is_error).toBeUndefined();
    expect(result.content.startsWith(text)).toBe(true);
  }
  await store.close();
  store = await MemoryStore.open(dir, { log: (m) => logs.push(m) });
  await store.close();

  const report = gitReport(dir);
  expect(report.fsckCode).toBe(0);
  expect(report.status).toBe('');
  // Every call exactly once, in the order the model made them succeed.
  const subjects = report.commits.map((c) => c.message.split('\n')[0]);
  for (const [id] of CALLS) expect(subjects.filter((s) => s === id)).toHaveLength(1);
  const files = headFiles(dir);
  expect(files.get('memories/a.md')?.toString()).toBe('zero\none\nTWO\n');
  expect(files.get('memories/c.md')?.toString()).toBe('bee\n');
  expect(files.has('memories/old.md')).toBe(false);
  const worktree = workingTreeFiles(dir);
  expect([...worktree.keys()].sort()).toEqual([...files.keys()].filter((f) => f.startsWith('memories/')).sort());
  expect(fs.readFileSync(path.join(dir, 'memories', 'a.md'), 'utf8')).toBe('zero\none\nTWO\n');
  // The operator was told, with the details the model never sees.
  if (failed.length) expect(logs.some((m) => /ENOSPC/.test(m))).toBe(true);
});
