/**
 * Stores that attack the audit UI's resources, built through the memory tool (and, for ids older
 * stores may hold, one commit written with isomorphic-git as an older memgit would have): a 1 MiB file
 * of half a million lines changed one line per revision, files of zero-width spaces in one session, and
 * a call whose tool_use id spells another call's commit id.
 */
import * as fs from 'node:fs';
import * as git from 'isomorphic-git';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';

export const BIG_FILE = '/memories/big.md';
/** 524,287 lines: 'a' lines with one marker line in the middle, just under the 1 MiB file limit. */
export const BIG_LINES = 524_287;
export const ZERO_WIDTH_SESSION = 'sess_zero_width';
export const BIG_SESSION = 'sess_big_file';

async function run(store: MemoryStore, id: string, session: string, input: Record<string, unknown>): Promise<void> {
  const result = await store.execute({ type: 'tool_use', id, name: 'memory', input }, { session });
  if (result.is_error) throw new Error(`${id}: ${result.content}`);
}

/** A file of BIG_LINES lines, then `revisions - 1` calls that each change its marker line. */
export async function addBigFile(store: MemoryStore, revisions: number): Promise<void> {
  const half = 'a\n'.repeat((BIG_LINES - 1) / 2);
  await run(store, 'toolu_big_000', BIG_SESSION, { command: 'create', path: BIG_FILE, file_text: `${half}m0\n${half}` });
  for (let k = 1; k < revisions; k++) {
    await run(store, `toolu_big_${String(k).padStart(3, '0')}`, BIG_SESSION, { command: 'str_replace', path: BIG_FILE, old_str: `m${k - 1}`, new_str: `m${k}` });
  }
}

/** `files` files of `chars` zero-width spaces each (3 bytes apiece in UTF-8), all in one session. */
export async function addZeroWidthFiles(store: MemoryStore, files: number, chars = 349_000): Promise<void> {
  for (let k = 0; k < files; k++) {
    await run(store, `toolu_zw_${String(k).padStart(3, '0')}`, ZERO_WIDTH_SESSION, {
      command: 'create',
      path: `/memories/zw/f${String(k).padStart(3, '0')}.md`,
      file_text: '\u200B'.repeat(chars),
    });
  }
}

/**
 * A commit as an older memgit wrote it for a call whose tool_use id is `toolUseId` and whose session is
 * `session` (the store now refuses such ids): memories/<file> created (written with isomorphic-git while
 * the store is closed, so nothing of memgit checks the ids).
 */
export async function forgeCall(dir: string, toolUseId: string, session: string, file = 'impostor.md'): Promise<void> {
  fs.writeFileSync(path.join(dir, 'memories', file), `planted by ${toolUseId} in ${session}\n`);
  await git.add({ fs, dir, filepath: `memories/${file}` });
  await git.commit({
    fs,
    dir,
    message: `${toolUseId}\n\nMemory-Command: create\nMemory-Path: /memories/${file}\nMemory-Session: ${session}\n`,
    author: { name: 'memgit', email: 'memgit@localhost', timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 },
  });
}
