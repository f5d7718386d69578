/**
 * A store's creation killed after `.git/memgit/` was made but before the marker landed in it: the folder
 * is still a new store to claim (not "a git repository memgit did not create"), and only memgit's folder
 * makes it so — a `.git` git made is still refused.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir, toolUse } from './git-helpers';

test('a claim killed before its marker is finished by the next open; a git-made .git is still refused', async () => {
  const dir = makeTempDir('memgit-claim-');
  try {
    const store = path.join(dir, 'store');
    fs.mkdirSync(path.join(store, '.git', 'memgit'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(store, '.git', 'memgit', 'MEMGIT_STORE.memgit-tmp-1-1'), 'half'); // the marker's temp file, not renamed
    const opened = await MemoryStore.open(store, { log: () => undefined });
    expect((await opened.execute(toolUse('toolu_claim', { command: 'create', path: '/memories/a.md', file_text: 'a\n' }), { session: 's' })).is_error).toBeFalsy();
    await opened.close();
    expect(spawnSync('git', ['log', '--format=%s', '-1'], { cwd: store, encoding: 'utf8' }).stdout.trim()).toBe('toolu_claim');

    const foreign = path.join(dir, 'foreign');
    spawnSync('git', ['init', '-q', foreign]);
    await expect(MemoryStore.open(foreign, { log: () => undefined })).rejects.toThrow(/did not create/);
  } finally {
    removeDir(dir);
  }
});
