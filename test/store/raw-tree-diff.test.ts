/**
 * The history index's rebuild from git diffs raw tree bytes (src/store/raw-tree-diff.ts) instead of
 * parsed entries: it must give diffTrees's changes, in the same order, for every commit of random
 * histories memgit wrote and of histories the git CLI wrote (modes, gitlinks, a file becoming a folder,
 * names that sort differently in git's order and JavaScript's), and fall back on malformed trees. The
 * whole index a cold open rebuilds equals the index memgit wrote as it went.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import isoGit from 'isomorphic-git';
import { MemoryStore } from '../../src/store/memory-store';
import { diffTrees } from '../../src/store/objects';
import { diffTreesRaw } from '../../src/store/raw-tree-diff';
import { mulberry32 } from '../support/random';
import { makeTempDir, removeDir, toolUse } from './git-helpers';

function git(dir: string, args: string[], input?: string | Buffer): string {
  const run = spawnSync('git', args, { cwd: dir, input, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_DATE: '1750000000 +0000', GIT_COMMITTER_DATE: '1750000000 +0000' } });
  if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

/** Every commit on HEAD's first-parent line with its parent's tree (null for the root). */
function commitPairs(dir: string): Array<{ commit: string; parentTree: string | null; tree: string }> {
  return git(dir, ['log', '--first-parent', '--format=%H %T %P'])
    .trim()
    .split('\n')
    .map((line) => {
      const [commit, tree, parent] = line.split(' ');
      return { commit, tree, parentTree: parent ? git(dir, ['rev-parse', `${parent}^{tree}`]).trim() : null };
    });
}

async function expectSameDiffs(store: MemoryStore, dir: string): Promise<number> {
  let compared = 0;
  for (const { parentTree, tree } of commitPairs(dir)) {
    expect(await diffTreesRaw(store.objects, parentTree, tree)).toEqual(await diffTrees(store.objects, parentTree, tree));
    compared++;
  }
  return compared;
}

const NAMES = ['a', 'a-b', 'a.md', 'a0', 'A', 'b', 'é', 'ü.md', '😀', 'ab', 'a b', 'z'];

test('random histories memgit wrote: the raw diff equals diffTrees for every commit, and a cold open rebuilds the same index', async () => {
  const dir = makeTempDir('memgit-raw-diff-');
  try {
    const random = mulberry32(20261204);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
    // An equivalence test, not a durability one: fsync off (260 durable writes took a minute on a loaded box).
    const store = await MemoryStore.open(dir, { log: () => undefined, autoGcLooseObjects: 0, flags: false, fsync: false });
    const live = new Set<string>();
    for (let i = 0; i < 260; i++) {
      const depth = 1 + Math.floor(random() * 3);
      const file = '/memories/' + Array.from({ length: depth }, () => pick(NAMES)).join('/');
      const existing = [...live];
      const roll = random();
      let input: Record<string, unknown>;
      if (roll < 0.45 || existing.length === 0) input = { command: 'create', path: file, file_text: `call ${i}\n${pick(NAMES)}\n` };
      else if (roll < 0.65) input = { command: 'str_replace', path: pick(existing), old_str: 'call', new_str: `call ${i}` };
      else if (roll < 0.8) input = { command: 'delete', path: pick(existing) };
      else input = { command: 'rename', old_path: pick(existing), new_path: file };
      const result = await store.execute(toolUse(`toolu_raw_${i}`, input), { session: `sess_${i % 5}` });
      if (result.is_error) continue;
      if (input.command === 'create') live.add(file);
      if (input.command === 'delete') for (const f of [...live]) if (f === input.path || f.startsWith(`${input.path}/`)) live.delete(f);
      if (input.command === 'rename') {
        for (const f of [...live]) if (f === input.old_path || f.startsWith(`${input.old_path}/`)) {
          live.delete(f);
          live.add(`${file}${f.slice((input.old_path as string).length)}`);
        }
      }
    }
    const written = store.history.all().map((e) => ({ commit: e.commit, changes: e.changes, tree: e.tree }));
    expect(written.length).toBeGreaterThan(150);
    expect(await expectSameDiffs(store, dir)).toBe(written.length); // every commit, the store's first one included
    await store.close();
    // A cold open (no .git/memgit, as a fresh clone) rebuilds the index through the raw diff.
    fs.rmSync(path.join(dir, '.git', 'memgit'), { recursive: true, force: true });
    const cold = await MemoryStore.open(dir, { log: () => undefined, autoGcLooseObjects: 0, flags: false });
    expect(cold.history.all().map((e) => ({ commit: e.commit, changes: e.changes, tree: e.tree }))).toEqual(written);
    await cold.close();
  } finally {
    removeDir(dir);
  }
}, 180_000);

test('histories the git CLI wrote: modes, symlinks, gitlinks, a file that becomes a folder and back', async () => {
  const dir = makeTempDir('memgit-raw-diff-git-');
  try {
    git(dir, ['init', '-q', '-b', 'main']);
    git(dir, ['config', 'user.name', 't']);
    git(dir, ['config', 'user.email', 't@example.com']);
    const commit = (message: string) => git(dir, ['commit', '-q', '--allow-empty', '-m', message]);
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      fs.writeFileSync(path.join(dir, file), text);
      git(dir, ['add', '-A']);
    };
    write('memories/a', 'file a\n');
    write('memories/a-b', 'x\n');
    write('memories/a.md', 'y\n');
    write('memories/a0/z', 'z\n');
    commit('one');
    fs.rmSync(path.join(dir, 'memories/a'));
    write('memories/a/inside.md', 'now a folder\n'); // a file becomes a folder of the same name
    commit('two');
    fs.chmodSync(path.join(dir, 'memories/a-b'), 0o755); // a mode change alone: not a change of content
    git(dir, ['add', '-A']);
    commit('three');
    fs.symlinkSync('a.md', path.join(dir, 'memories/link'));
    git(dir, ['add', '-A']);
    git(dir, ['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},memories/sub`]); // a gitlink
    commit('four');
    fs.rmSync(path.join(dir, 'memories/a'), { recursive: true });
    write('memories/a', 'a file again\n');
    write('memories/é/ü.md', 'unicode\n');
    commit('five');
    git(dir, ['rm', '-q', '--cached', '--ignore-unmatch', 'memories/sub']);
    fs.rmSync(path.join(dir, 'memories'), { recursive: true });
    git(dir, ['add', '-A']);
    commit('six: everything gone');
    // A plain git repository is no memgit store: read its objects through a store made beside it.
    const readerDir = makeTempDir('memgit-raw-reader-');
    const reader = await MemoryStore.open(readerDir, { log: () => undefined, flags: false });
    const objectsDir = path.join(dir, '.git', 'objects');
    const readerObjects = path.join(reader.gitdir, 'objects');
    for (const fan of fs.readdirSync(objectsDir).filter((n) => /^[0-9a-f]{2}$/.test(n))) {
      fs.mkdirSync(path.join(readerObjects, fan), { recursive: true });
      for (const name of fs.readdirSync(path.join(objectsDir, fan))) fs.copyFileSync(path.join(objectsDir, fan, name), path.join(readerObjects, fan, name));
    }
    const pairs = commitPairs(dir);
    expect(pairs).toHaveLength(6);
    let nonEmpty = 0;
    for (const { parentTree, tree } of pairs) {
      const expected = await diffTrees(reader.objects, parentTree, tree);
      expect(await diffTreesRaw(reader.objects, parentTree, tree)).toEqual(expected);
      if (expected.length) nonEmpty++;
    }
    expect(nonEmpty).toBe(5); // "three" changed a mode only
    await reader.close();
    removeDir(readerDir);
  } finally {
    removeDir(dir);
  }
});

test('a tree out of git order is diffed by diffTrees instead, with the same answer', async () => {
  const dir = makeTempDir('memgit-raw-diff-bad-');
  try {
    const store = await MemoryStore.open(dir, { log: () => undefined, flags: false });
    const blob = git(dir, ['hash-object', '-w', '--stdin'], 'x\n').trim();
    const other = git(dir, ['hash-object', '-w', '--stdin'], 'y\n').trim();
    const entry = (name: string, oid: string) => Buffer.concat([Buffer.from(`100644 ${name}\0`), Buffer.from(oid, 'hex')]);
    const unsorted = Buffer.concat([entry('b', blob), entry('a', blob)]);
    const bad = spawnSync('git', ['hash-object', '-w', '-t', 'tree', '--literally', '--stdin'], { cwd: dir, input: unsorted, encoding: 'utf8' }).stdout.trim();
    const good = git(dir, ['mktree'], `100644 blob ${other}\ta\n100644 blob ${blob}\tb\n`).trim();
    const expected = await diffTrees(store.objects, bad, good);
    expect(expected).toEqual([{ path: 'a', oldOid: blob, newOid: other }]);
    expect(await diffTreesRaw(store.objects, bad, good)).toEqual(expected);
    expect(await diffTreesRaw(store.objects, good, bad)).toEqual(await diffTrees(store.objects, good, bad));
    await store.close();
  } finally {
    removeDir(dir);
  }
});

test('trees that share most of their bytes (the shared start and end are skipped): the same answer as diffTrees, out-of-order and duplicate entries in the shared part included', async () => {
  const dir = makeTempDir('memgit-raw-diff-shared-');
  try {
    const store = await MemoryStore.open(dir, { log: () => undefined, flags: false, fsync: false });
    const gitdir = path.join(dir, '.git');
    const random = mulberry32(31_2026);
    const write = (bytes: Buffer) => isoGit.writeObject({ fs, gitdir, type: 'tree', object: bytes, format: 'content' });
    const id = (k: number) => Buffer.from(k.toString(16).padStart(40, '0'), 'hex');
    const subtree = Buffer.from(await write(Buffer.concat([Buffer.from('100644 inner\0'), id(7)])), 'hex');
    const folder = await write(Buffer.concat([Buffer.from('100644 inner\0'), id(8)]));
    type Entry = { head: string; oid: Buffer };
    const encode = (entries: Entry[]) => Buffer.concat(entries.flatMap((e) => [Buffer.from(e.head), e.oid]));
    const names = Array.from({ length: 40 }, (_, k) => `note-${String(k).padStart(3, '0')}.md`);
    let fellBack = 0;
    let raw = 0;
    for (let round = 0; round < 150; round++) {
      const base: Entry[] = names.filter(() => random() < 0.6).map((name, k) => (random() < 0.1 ? { head: `40000 ${name}\0`, oid: subtree } : { head: `100644 ${name}\0`, oid: id(k + 1) }));
      const changed = base.map((e) => ({ ...e }));
      const at = () => Math.floor(random() * changed.length);
      for (let edits = 1 + Math.floor(random() * 2); edits > 0 && changed.length > 2; edits--) {
        const roll = random();
        if (roll < 0.4) {
          const k = at();
          changed[k].oid = changed[k].head.startsWith('40000') ? Buffer.from(folder, 'hex') : id(1000 + round * 10 + edits);
        }
        else if (roll < 0.55) changed.splice(at(), 1);
        else if (roll < 0.7) {
          const k = at();
          changed[k].head = changed[k].head.replace('.md\0', '.mdx\0'); // renamed, in the same place in git's order
        }
        else if (roll < 0.8) {
          const k = at();
          changed[k] = { head: changed[k].head.startsWith('40000') ? changed[k].head.replace('40000', '100644') : changed[k].head.replace('100644', '40000'), oid: subtree };
        } else changed.splice(at(), 0, { head: `100644 new-${round}\0`, oid: id(5000 + round) });
      }
      // Out of order or duplicated, in both trees (the shared part) or in one.
      const spoil = random();
      const swap = (list: Entry[], k: number) => k + 1 < list.length && ([list[k], list[k + 1]] = [list[k + 1], list[k]]);
      if (spoil < 0.1) { swap(base, 0); swap(changed, 0); }
      else if (spoil < 0.2) { swap(base, base.length - 2); swap(changed, changed.length - 2); }
      else if (spoil < 0.25) { base.splice(1, 0, { ...base[1] }); changed.splice(1, 0, { ...changed[1] }); }
      else if (spoil < 0.3) swap(changed, Math.floor(changed.length / 2));
      const [before, after] = [await write(encode(base)), await write(encode(changed))];
      const expected = await diffTrees(store.objects, before, after);
      expect({ round, changes: await diffTreesRaw(store.objects, before, after) }).toEqual({ round, changes: expected });
      expect({ round, changes: await diffTreesRaw(store.objects, after, before) }).toEqual({ round, changes: await diffTrees(store.objects, after, before) });
      if (spoil < 0.3) fellBack++;
      else raw++;
    }
    expect(fellBack).toBeGreaterThan(20);
    expect(raw).toBeGreaterThan(80);
    await store.close();
  } finally {
    removeDir(dir);
  }
});
