/**
 * A store is owner-only (folders 0700, files 0600 or read-only 0400) whatever the umask: under umask 000,
 * common in containers, a world-writable `.git` would let another local user plant a hook or move a ref.
 * A store found open to others is tightened on open, and the operator is told.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { QUIET, toolUse, useTempDir } from './git-helpers';

const tempDir = useTempDir();
const SESSION = { session: 'sess_perm' };

/** Every entry of the store (the user's README.md aside) whose mode gives anything to group or others. */
function openEntries(dir: string): string[] {
  const found: string[] = [];
  const walk = (full: string): void => {
    const stat = fs.lstatSync(full);
    if ((stat.mode & 0o077) !== 0) found.push(`${path.relative(dir, full) || '.'} ${(stat.mode & 0o777).toString(8)}`);
    if (stat.isDirectory()) for (const name of fs.readdirSync(full)) if (full !== dir || name !== 'README.md') walk(path.join(full, name));
  };
  walk(dir);
  return found;
}

async function useStore(dir: string): Promise<void> {
  const store = await MemoryStore.open(dir, QUIET);
  await store.execute(toolUse('toolu_1', { command: 'create', path: '/memories/deep/a.md', file_text: 'a\n' }), SESSION);
  await store.execute(toolUse('toolu_2', { command: 'rename', old_path: '/memories/deep/a.md', new_path: '/memories/other/b.md' }), SESSION);
  await store.gc({ full: true });
  await store.execute(toolUse('toolu_3', { command: 'create', path: '/memories/c.md', file_text: 'c\n' }), SESSION);
  // The side files of chat and redaction too: a compaction summary holds conversation text.
  await store.redact({ text: 'c', reason: 'test', operator: 'sam', dryRun: false });
  await store.recordEvent(SESSION.session, { kind: 'compaction', summary: 'what the conversation said so far' });
  await store.close();
}

test.each([0o000, 0o022])('a store created under umask %o is owner-only', async (umask) => {
  const dir = path.join(tempDir(), 'store');
  const previous = process.umask(umask);
  try {
    await useStore(dir);
  } finally {
    process.umask(previous);
  }
  expect(openEntries(dir)).toEqual([]);
  // Sanity: the walk sees the store's innards (hooks dir, objects, pack, history, working tree).
  for (const rel of ['.git/config', '.git/HEAD', '.git/objects/pack', '.git/memgit/history-v2.jsonl', '.git/memgit/timeline-v1.jsonl', '.git/memgit/redaction-key', '.git/index', 'memories/c.md']) {
    expect(fs.existsSync(path.join(dir, rel))).toBe(true);
  }
});

test('open tightens a store that is open to other users, and says so', async () => {
  const dir = path.join(tempDir(), 'store');
  await useStore(dir);
  const loosen = (full: string): void => {
    const stat = fs.lstatSync(full);
    fs.chmodSync(full, stat.isDirectory() ? 0o777 : 0o666);
    if (stat.isDirectory()) for (const name of fs.readdirSync(full)) loosen(path.join(full, name));
  };
  loosen(dir);
  fs.writeFileSync(path.join(dir, 'README.md'), 'the user\'s file\n', { mode: 0o644 });
  fs.chmodSync(path.join(dir, 'README.md'), 0o644);
  expect(openEntries(dir).length).toBeGreaterThan(10);

  const messages: string[] = [];
  const store = await MemoryStore.open(dir, { log: (message) => messages.push(message) });
  await store.close();
  expect(openEntries(dir)).toEqual([]);
  expect(messages.some((m) => /tightened the permissions of \d+ file\(s\) and folder\(s\)/.test(m))).toBe(true);
  expect(fs.statSync(path.join(dir, 'README.md')).mode & 0o777).toBe(0o644);
});
