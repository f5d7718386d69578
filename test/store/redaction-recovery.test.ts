/**
 * A redaction killed while it pruned the old history (after the branch moved): the next open finishes it.
 * The prune may have removed the old head's tree but not yet its commit; finishing must not need the old
 * history then: the working tree is rebuilt from the new HEAD (a file only the old history had goes).
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MemoryStore } from '../../src/store/memory-store';
import { makeTempDir, removeDir, toolUse } from './git-helpers';

const SECRET = 'sk-ant-api03-Recovery9wR4tY8uI1oP5aS3dF6gH0jKq';
const QUIET = { log: () => undefined };

function git(cwd: string, ...args: string[]): string {
  const run = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

test('finishing a redaction whose prune was cut short: old commit there, its tree gone', async () => {
  const dir = makeTempDir('memgit-redaction-recovery-');
  try {
    let store = await MemoryStore.open(dir, QUIET);
    const calls: Array<[string, Record<string, unknown>]> = [
      ['toolu_k01', { command: 'create', path: '/memories/profile.md', file_text: '# Acme\nplan: pro\n' }],
      ['toolu_k02', { command: 'create', path: '/memories/setup.md', file_text: `api key: ${SECRET}\nregion: eu\n` }],
      ['toolu_k03', { command: 'str_replace', path: '/memories/profile.md', old_str: 'plan: pro', new_str: 'plan: enterprise' }],
    ];
    for (const [id, input] of calls) expect((await store.execute(toolUse(id, input), { session: 'sess_k' })).is_error).toBeFalsy();
    const oldHead = await store.refreshHead();
    const oldCommitFile = path.join(dir, '.git', 'objects', oldHead.slice(0, 2), oldHead.slice(2));
    const oldCommitBytes = fs.readFileSync(oldCommitFile);
    const outcome = await store.redact({ text: SECRET, reason: 'leaked key', operator: 'dana' });
    const record = outcome.record!;
    await store.close();
    expect(spawnSync('git', ['cat-file', '-e', oldHead], { cwd: dir }).status).not.toBe(0);

    // The moment of the kill: the journal still there, the old head's commit not yet pruned, its tree gone.
    fs.mkdirSync(path.dirname(oldCommitFile), { recursive: true });
    fs.writeFileSync(oldCommitFile, oldCommitBytes, { mode: 0o400 });
    const oldTree = git(dir, 'cat-file', '-p', oldHead).split('\n')[0].split(' ')[1];
    expect(spawnSync('git', ['cat-file', '-e', oldTree], { cwd: dir }).status).not.toBe(0);
    const journal = { id: record.id, oldHead, newHead: record.newHead, auditCommit: git(dir, 'rev-parse', 'refs/memgit/audit').trim(), firstRewritten: record.firstRewritten, sideRefs: [] };
    fs.writeFileSync(path.join(dir, '.git', 'memgit', 'redaction-pending.json'), JSON.stringify(journal) + '\n');
    // And a file the old history's working tree had that the new HEAD does not.
    fs.writeFileSync(path.join(dir, 'memories', 'stale.md'), `left over: ${SECRET}\n`);

    store = await MemoryStore.open(dir, QUIET); // finishes the redaction
    expect(fs.existsSync(path.join(dir, '.git', 'memgit', 'redaction-pending.json'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'memories', 'stale.md'))).toBe(false);
    expect(git(dir, 'status', '--porcelain')).toBe('');
    expect(spawnSync('git', ['cat-file', '-e', oldHead], { cwd: dir }).status).not.toBe(0);
    expect(git(dir, 'fsck', '--full', '--strict', '--no-dangling')).toBe('');
    expect(git(dir, 'log', '-p', '--all')).not.toContain(SECRET);
    expect((await store.execute(toolUse('toolu_k04', { command: 'view', path: '/memories/profile.md' }), { session: 'sess_k' })).content).toContain('plan: enterprise');
    await store.close();
  } finally {
    removeDir(dir);
  }
});
