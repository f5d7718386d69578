/**
 * Packing (MemoryStore.gc through isomorphic-git's packObjects/indexPack) and the objects and index the
 * write path has isomorphic-git write, checked with the real git CLI. No timings here: performance lives in bench/.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { MemoryStore } from '../../src/store/memory-store';
import { DurableFs } from '../../src/store/durable-fs';
import { ObjectStore, TreeEntry } from '../../src/store/objects';
import { gitReport, headFiles, makeTempDir, removeDir, workingTreeFiles } from './git-helpers';

function sh(dir: string, script: string): string {
  const run = spawnSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`${script} failed (${run.status}): ${run.stderr}`);
  return run.stdout;
}

function call(id: string, input: Record<string, unknown>) {
  return { type: 'tool_use', id, name: 'memory', input };
}

/** A small history with every mutating command, nested directories and files that change a little. */
async function workload(store: MemoryStore, calls: number, prefix: string): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const file = `/memories/topic-${i % 3}/note-${i % 7}.md`;
    const id = `toolu_${prefix}_${i}`;
    const lines = Array.from({ length: 30 }, (_, k) => `line ${k} of ${file}: a fact worth keeping`).join('\n');
    const step = i % 10;
    const input =
      step === 7
        ? { command: 'rename', old_path: file, new_path: `/memories/moved/${prefix}-${i}.md` }
        : step === 9
          ? { command: 'delete', path: `/memories/moved/${prefix}-${i - 2}.md` }
          : step % 3 === 0
            ? { command: 'create', path: file, file_text: `${lines}\n` }
            : { command: 'insert', path: file, insert_line: 1, insert_text: `call ${i} remembered this` };
    const result = await store.execute(call(id, input), { session: `sess_${Math.floor(i / 20)}` });
    if (result.is_error) await store.execute(call(`${id}_c`, { command: 'create', path: file, file_text: `${lines}\n` }), { session: 's' });
  }
}

describe('the write path has isomorphic-git write objects and the index as git does', () => {
  it('writes trees in git order (directories sort as name/) through the staging fs, durable at flush', async () => {
    const oid = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
    const entries: TreeEntry[] = [
      { mode: '100644', path: 'a.md', oid, type: 'blob' },
      { mode: '040000', path: 'a', oid: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', type: 'tree' },
      { mode: '100644', path: 'a-b', oid, type: 'blob' },
      { mode: '100644', path: 'é.md', oid, type: 'blob' },
      { mode: '100644', path: '😀.md', oid, type: 'blob' },
      { mode: '100644', path: '\uffff.md', oid, type: 'blob' },
      { mode: '100644', path: '.keep', oid, type: 'blob' },
    ];
    const dir = makeTempDir();
    try {
      await git.init({ fs, dir });
      const durable = new DurableFs();
      const objects = new ObjectStore(durable, path.join(dir, '.git'));
      const written = await objects.writeTree(entries);
      expect(await objects.writeBlob(new Uint8Array(0))).toBe(oid);
      // Staged, not yet on disk, but readable through the same fs; on disk after the flush.
      const loose = path.join(dir, '.git/objects', written.slice(0, 2), written.slice(2));
      expect(fs.existsSync(loose)).toBe(false);
      expect((await git.readTree({ fs: durable.gitFs, dir, oid: written })).tree.map((e) => e.path)).toContain('a-b');
      await durable.flush();
      expect(fs.existsSync(loose)).toBe(true);
      // git lists a tree's entries in their stored order (and fsck below rejects a mis-sorted tree).
      expect(sh(dir, `git ls-tree --name-only -z ${written}`).split('\0').filter(Boolean)).toEqual(['.keep', 'a-b', 'a.md', 'a', 'é.md', '\uffff.md', '😀.md']);
      expect(sh(dir, `git cat-file -t ${written}`).trim()).toBe('tree');
      expect(sh(dir, 'git fsck --full --strict --no-dangling 2>&1')).not.toMatch(/error|warning|sorted|bad/i);
      // The tree kept in memory is what isomorphic-git reads back.
      const fresh = new ObjectStore(new DurableFs(), path.join(dir, '.git'));
      expect(await objects.readTree(written)).toEqual(await fresh.readTree(written));
    } finally {
      removeDir(dir);
    }
  });

  it('refuses tree entry names that are unsafe for a checkout', async () => {
    const oid = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';
    const dir = makeTempDir();
    try {
      await git.init({ fs, dir });
      const objects = new ObjectStore(new DurableFs(), path.join(dir, '.git'));
      for (const name of ['', '.', '..', '.git', '.GIT', 'git~1', 'a/b', 'a\\b', '.git.', 'x\0y']) {
        await expect(objects.writeTree([{ mode: '100644', path: name, oid, type: 'blob' }])).rejects.toThrow(/unsafe/);
      }
    } finally {
      removeDir(dir);
    }
  });

  it('keeps the index equal to HEAD with real stats: git sees a clean tree without re-hashing', async () => {
    const dir = makeTempDir();
    try {
      const store = await MemoryStore.open(dir);
      await workload(store, 40, 'ix');
      await store.close();
      const report = gitReport(dir);
      expect(report.fsckOutput).toBe('');
      expect(report.status).toBe('');
      // No entry is stat-dirty: diff-files compares stats only and lists any entry whose stats differ.
      expect(sh(dir, 'git diff-files --name-only')).toBe('');
      const indexed = sh(dir, 'git ls-files -s').trim().split('\n').map((l) => l.split(/\s+/).slice(1, 2).concat(l.split('\t')[1]).join(' '));
      const tree = sh(dir, 'git ls-tree -r HEAD').trim().split('\n').map((l) => `${l.split(/\s+/)[2]} ${l.split('\t')[1]}`);
      expect(indexed).toEqual(tree);
    } finally {
      removeDir(dir);
    }
  });
});

describe('gc packs the store with isomorphic-git and keeps it correct for git and memgit', () => {
  it('packs a store: fsck clean, history readable by git, store keeps working, loose objects gone', async () => {
    const dir = makeTempDir();
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      await workload(store, 120, 'a');
      const logBefore = sh(dir, 'git log --format=%H%x09%T%x09%B --stat');
      const filesBefore = headFiles(dir);
      const looseBefore = Number(/count: (\d+)/.exec(sh(dir, 'git count-objects -v'))![1]);
      expect(looseBefore).toBeGreaterThan(400);

      const report = await store.gc({ full: true });
      expect(report.packedObjects).toBeGreaterThan(400);
      const counts = sh(dir, 'git count-objects -v');
      expect(counts).toMatch(/^count: 0$/m);
      expect(counts).toMatch(/^packs: 1$/m);
      sh(dir, 'git verify-pack .git/objects/pack/*.idx');
      expect(sh(dir, 'git fsck --full --strict 2>&1')).toBe('');
      expect(sh(dir, 'git log --format=%H%x09%T%x09%B --stat')).toBe(logBefore);
      expect(headFiles(dir)).toEqual(filesBefore);
      expect(sh(dir, 'git status --porcelain')).toBe('');

      // memgit reads the packed history (isomorphic-git) and keeps writing on top of it.
      await workload(store, 30, 'b');
      const reopened = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      expect(reopened.history.size).toBe(store.history.size);
      for (const entry of reopened.history.all().slice(0, 50)) {
        const described = await reopened.history.describe(entry.commit);
        expect(described.changes).toEqual(entry.changes);
        // The store's reads (its tree cache over isomorphic-git and the shared cache) agree with a fresh isomorphic-git.
        const theirs = await git.readCommit({ fs, dir, oid: entry.commit });
        expect(await reopened.objects.readCommit(entry.commit)).toEqual(theirs);
        const { tree } = await git.readTree({ fs, dir, oid: theirs.commit.tree, filepath: 'memories' });
        expect(await reopened.objects.readTree((await reopened.objects.entryAt(theirs.commit.tree, 'memories'))!.oid)).toEqual(tree);
        for (const change of entry.changes.filter((c) => c.newOid)) {
          expect(Buffer.from(await reopened.objects.readBlob(change.newOid!))).toEqual(Buffer.from((await git.readBlob({ fs, dir, oid: change.newOid! })).blob));
        }
      }
      // An incremental gc packs only the new objects; a second full one merges both packs into one.
      const incremental = await reopened.gc();
      expect(incremental.full).toBe(false);
      expect(sh(dir, 'git count-objects -v')).toMatch(/^packs: 2$/m);
      await reopened.gc({ full: true });
      expect(sh(dir, 'git count-objects -v')).toMatch(/^packs: 1$/m);
      const final = gitReport(dir);
      expect(final.fsckOutput).toBe('');
      expect(final.fsckCode).toBe(0);
      expect(final.status).toBe('');
      expect(final.commits.length).toBe(reopened.history.size);
      expect(workingTreeFiles(dir)).toEqual(new Map([...headFiles(dir)].filter(([p]) => p.startsWith('memories/'))));
      await store.close();
      await reopened.close();
    } finally {
      removeDir(dir);
    }
  });

  it('runs automatically in the background once loose objects pile up', async () => {
    const dir = makeTempDir();
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 256, fsync: false });
      await workload(store, 300, 'auto');
      await store.close(); // waits for a gc under way
      expect(fs.readdirSync(path.join(dir, '.git/objects/pack')).some((n) => n.endsWith('.idx'))).toBe(true);
      expect(sh(dir, 'git fsck --full 2>&1')).toBe('');
    } finally {
      removeDir(dir);
    }
  });
});
