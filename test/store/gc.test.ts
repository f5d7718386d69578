/**
 * Packing (MemoryStore.gc: git pack-objects with deltas when git is installed, isomorphic-git's
 * packObjects/indexPack otherwise) and the objects and index the write path has isomorphic-git write,
 * checked with the real git CLI. No timings here: performance lives in bench/.
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

describe.each(['isomorphic-git', 'git'] as const)('gc packs the store (engine %s) and keeps it correct for git and memgit', (engine) => {
  it('packs a store: fsck clean, history readable by git, store keeps working, loose objects gone', async () => {
    const dir = makeTempDir();
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      await workload(store, 120, 'a');
      const logBefore = sh(dir, 'git log --format=%H%x09%T%x09%B --stat');
      const filesBefore = headFiles(dir);
      const looseBefore = Number(/count: (\d+)/.exec(sh(dir, 'git count-objects -v'))![1]);
      expect(looseBefore).toBeGreaterThan(400);

      const report = await store.gc({ full: true, engine });
      expect(report.engine).toBe(engine);
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
      expect((await reopened.gc({ full: true, engine })).engine).toBe(engine);
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

  if (engine === 'isomorphic-git') it('runs automatically in the background once loose objects pile up', async () => {
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

describe('the git engine: deltas from the git binary, memgit deciding what stays', () => {
  /** The objects a pack holds, by `git show-index`. */
  const packedOids = (dir: string) => new Set(sh(dir, 'for i in .git/objects/pack/*.idx; do git show-index < "$i"; done').trim().split('\n').map((l) => l.split(' ')[1]));

  it('holds exactly the objects isomorphic-git packs, in a smaller pack; a second gc has nothing to do', async () => {
    const dir = makeTempDir();
    const twin = makeTempDir();
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      await workload(store, 150, 'g');
      await store.close();
      fs.cpSync(dir, twin, { recursive: true });
      const mine = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      const viaGit = await mine.gc({ full: true });
      expect(viaGit.engine).toBe('git'); // the tests run where git is installed
      const theirs = await MemoryStore.open(twin, { autoGcLooseObjects: 0 });
      const viaIso = await theirs.gc({ full: true, engine: 'isomorphic-git' });
      await theirs.close();
      expect([...packedOids(dir)].sort()).toEqual([...packedOids(twin)].sort());
      expect(viaGit.packedObjects).toBe(viaIso.packedObjects);
      // The same notes edited call after call: deltas keep one copy and the edits.
      expect(viaGit.packBytes * 1.3).toBeLessThan(viaIso.packBytes);
      expect(sh(dir, 'git verify-pack -v .git/objects/pack/*.idx')).toMatch(/chain length = [1-9]/);
      expect(sh(dir, 'git fsck --full --strict 2>&1')).toBe('');
      expect(JSON.parse(fs.readFileSync(path.join(dir, '.git/memgit/gc-v1.json'), 'utf8'))).toEqual({ pack: path.basename(sh(dir, 'ls .git/objects/pack/*.pack').trim(), '.pack') });

      const again = await mine.gc({ full: true });
      expect(again).toMatchObject({ upToDate: true, engine: 'git', packedObjects: 0 });
      // A store isomorphic-git packed is compressed by git on the next full gc, though it is one pack already.
      const twinStore = await MemoryStore.open(twin, { autoGcLooseObjects: 0 });
      const recompressed = await twinStore.gc({ full: true });
      expect(recompressed).toMatchObject({ upToDate: false, engine: 'git', packsRemoved: 1, packedObjects: viaIso.packedObjects });
      await twinStore.close();
      expect(sh(twin, 'git fsck --full --strict 2>&1')).toBe('');
      // memgit reads git's deltified pack after a reopen.
      await mine.close();
      const reopened = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      const view = await reopened.execute(call('toolu_g_view', { command: 'view', path: '/memories/topic-1/note-1.md' }), { session: 's' });
      expect(view.is_error).toBeFalsy();
      expect(view.content).toContain(fs.readFileSync(path.join(dir, 'memories/topic-1/note-1.md'), 'utf8').split('\n')[0]);
      await reopened.close();
    } finally {
      removeDir(dir);
      removeDir(twin);
    }
  });

  it('keeps what only a memgit ref reaches, never what only the git index names, and never touches refs', async () => {
    const dir = makeTempDir();
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      await workload(store, 20, 'r');
      // A commit reachable only from a ref under refs/memgit (as the redaction audit log is).
      const kept = sh(dir, 'git commit-tree -m kept $(git rev-parse HEAD^{tree})').trim();
      sh(dir, `git update-ref refs/memgit/test-kept ${kept}`);
      // A blob only the git index names (a stray \`git add\`).
      const stray = sh(dir, 'echo "a secret only the index names" | git hash-object -w --stdin').trim();
      sh(dir, `git update-index --add --cacheinfo 100644,${stray},stray.txt`);
      const refsBefore = sh(dir, 'git for-each-ref --format="%(refname) %(objectname)"');
      const report = await store.gc({ full: true, pruneUnreachable: true });
      expect(report.engine).toBe('git');
      const packed = packedOids(dir);
      expect(packed.has(kept)).toBe(true);
      expect(packed.has(stray)).toBe(false);
      expect(fs.existsSync(path.join(dir, '.git/objects', stray.slice(0, 2), stray.slice(2)))).toBe(false);
      expect(sh(dir, 'git for-each-ref --format="%(refname) %(objectname)"')).toBe(refsBefore);
      expect(fs.existsSync(path.join(dir, '.git/packed-refs'))).toBe(false);
      await store.close();
    } finally {
      removeDir(dir);
    }
  });

  it('without git on PATH: auto packs with isomorphic-git and says why; engine git is refused and changes nothing', async () => {
    const dir = makeTempDir();
    const pathBefore = process.env.PATH;
    try {
      const store = await MemoryStore.open(dir, { autoGcLooseObjects: 0 });
      await workload(store, 20, 'n');
      const looseBefore = sh(dir, 'git count-objects -v');
      process.env.PATH = path.join(dir, 'no-such-bin');
      await expect(store.gc({ full: true, engine: 'git' })).rejects.toThrow(/git binary is not installed/);
      process.env.PATH = pathBefore;
      expect(sh(dir, 'git count-objects -v')).toBe(looseBefore);
      process.env.PATH = path.join(dir, 'no-such-bin');
      const report = await store.gc({ full: true });
      process.env.PATH = pathBefore;
      expect(report).toMatchObject({ engine: 'isomorphic-git', upToDate: false });
      expect(report.engineNote).toMatch(/git is not installed/);
      expect(sh(dir, 'git fsck --full --strict 2>&1')).toBe('');
      await store.close();
    } finally {
      process.env.PATH = pathBefore;
      removeDir(dir);
    }
  });
});
