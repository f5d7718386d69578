/**
 * The history index's write-time facts and the incremental blame against a full recomputation from git,
 * on randomised histories (creates, overwrites, edits, inserts, deletes and renames of files and
 * directories, reverts and resets), including the index rebuilt by a cold open and one migrated from
 * the previous format. Every page that reads the index is compared with the same page computed from git.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileDiffs } from '../../../src/store/history-index/file-diffs';
import type { HistoryEntry } from '../../../src/store/history-index';
import { advance, blameFile, BlameState } from '../../../src/history/blame';
import { computeFacts, fileFacts, utf8 } from '../../../src/store/history-index/facts';
import { splitLines } from '../../../src/store/history-index/line-stats';
import { touchesPath } from '../../../src/history/touches-path';
import { MemoryStore } from '../../../src/store/memory-store';
import { createAuditContext } from '../../../src/web/services/context';
import { listCommits } from '../../../src/web/services/commits';
import { diffViewsOf, lineStats } from '../../../src/web/services/diff-view';
import { overview } from '../../../src/web/services/overview';
import { sessionPage } from '../../../src/web/services/sessions';
import { treePage } from '../../../src/web/services/tree';
import { makeTempDir, QUIET, removeDir, toolUse, useTempDir } from '../git-helpers';
import { mulberry32 as random } from '../../support/random';

const tempDir = useTempDir();
const extraDirs: string[] = [];
afterAll(() => extraDirs.forEach(removeDir));
/** Another directory in the same test (copies of the store). */
function anotherDir(): string {
  const dir = makeTempDir();
  extraDirs.push(dir);
  return dir;
}


const DIRS = ['', 'a', 'a/b', 'c'];
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'shared line', 'same', ''];

async function buildHistory(store: MemoryStore, seed: number, calls: number): Promise<void> {
  const rand = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  const text = () => Array.from({ length: 1 + Math.floor(rand() * 8) }, () => `${pick(WORDS)} ${Math.floor(rand() * 4)}`).join('\n') + (rand() < 0.8 ? '\n' : '');
  const files = async (): Promise<string[]> => store.history.liveFiles().map((f) => `/${f.path}`);
  let n = 0;
  for (let i = 0; i < calls; i++) {
    const session = `sess_${Math.floor(i / 7) % 4}`;
    const existing = await files();
    const roll = rand();
    const id = `toolu_${seed}_${n++}`;
    let input: Record<string, unknown>;
    if (existing.length === 0 || roll < 0.25) {
      const dir = pick(DIRS);
      const target = rand() < 0.3 && existing.length ? pick(existing) : `/memories/${dir ? `${dir}/` : ''}f${Math.floor(rand() * 6)}.md`;
      input = { command: 'create', path: target, file_text: text() };
    } else if (roll < 0.5) {
      const file = pick(existing);
      const current = utf8(await store.objects.readBlob(store.history.liveFiles().find((f) => `/${f.path}` === file)!.oid));
      const lines = splitLines(current).filter((l) => l !== '' && current.split(l).length === 2);
      if (!lines.length) continue;
      input = { command: 'str_replace', path: file, old_str: pick(lines), new_str: `${pick(WORDS)} replaced ${i}` };
    } else if (roll < 0.68) {
      const file = pick(existing);
      input = { command: 'insert', path: file, insert_line: 0, insert_text: `inserted ${i}\nand ${pick(WORDS)}` };
    } else if (roll < 0.76) {
      const target = rand() < 0.3 ? '/memories/a' : pick(existing);
      input = { command: 'delete', path: target };
    } else if (roll < 0.86) {
      const from = rand() < 0.25 ? '/memories/a' : pick(existing);
      input = { command: 'rename', old_path: from, new_path: `/memories/${pick(['c', 'd', 'a/b'])}/r${i}${from.endsWith('.md') ? '.md' : ''}` };
    } else if (roll < 0.94) {
      const calls = store.history.all().filter((e) => e.toolUseId);
      if (!calls.length) continue;
      await store.revert(pick(calls).toolUseId!, { operator: 'tester', reason: 'randomised revert' });
      continue;
    } else {
      const size = store.history.size;
      if (size < 3) continue;
      await store.reset({ to: store.history.at(Math.floor(rand() * size))!.commit, operator: 'tester', reason: 'randomised reset' });
      continue;
    }
    await store.execute(toolUse(id, input), { session });
    // Look at a blame now and then, so that some files have a persisted record that later writes extend.
    if (rand() < 0.3) {
      const live = store.history.liveFiles();
      if (live.length) {
        const f = pick(live);
        await blameFile(store.history, f.path, store.history.size - 1, { readText: async (oid) => utf8(await store.objects.readBlob(oid)) });
      }
    }
  }
}

/** Blame by definition: replay every commit (described afresh from git) forward, per file, from scratch. */
async function blameFromGit(store: MemoryStore): Promise<Array<Map<string, BlameState>>> {
  const snapshots: Array<Map<string, BlameState>> = [];
  let state = new Map<string, BlameState>();
  const lines = async (oid: string) => splitLines(utf8(await store.objects.readBlob(oid)));
  for (const indexed of store.history.all()) {
    const entry = await store.history.describe(indexed.commit);
    const next = new Map(state);
    for (const diff of fileDiffs(entry)) {
      const oldPath = diff.oldPath?.slice(1);
      const newPath = diff.newPath?.slice(1);
      if (oldPath) next.delete(oldPath);
      if (!newPath || !diff.newOid) continue;
      const previous = diff.status === 'added' ? { lines: [], origins: [] } : state.get(oldPath!)!;
      next.set(newPath, advance(previous, await lines(diff.newOid), entry.commit));
    }
    state = next;
    snapshots.push(state);
  }
  return snapshots;
}

function textReader(store: MemoryStore, counter?: { reads: number }) {
  return {
    readText: async (oid: string) => {
      if (counter) counter.reads++;
      return utf8(await store.objects.readBlob(oid));
    },
  };
}

async function expectIndexMatchesGit(store: MemoryStore): Promise<void> {
  const ctx = createAuditContext(store);
  for (const entry of store.history.all()) {
    const fresh = await store.history.describe(entry.commit);
    expect({ commit: entry.commit, changes: entry.changes }).toEqual({ commit: fresh.commit, changes: fresh.changes });
    // Facts: the recorded (or lazily computed) ones equal the ones computed from the blobs now.
    const facts = await store.history.factsOf(entry);
    const expected = await computeFacts(fresh, (oid) => store.objects.readBlob(oid));
    expect({ commit: entry.commit, facts: entry.facts }).toEqual({ commit: entry.commit, facts: expected });
    for (const f of facts) {
      expect(f.newSize).toBe(f.newOid ? (await store.objects.readBlob(f.newOid)).byteLength : null);
      expect(f.oldSize).toBe(f.oldOid ? (await store.objects.readBlob(f.oldOid)).byteLength : null);
    }
    // The commits list's line counts equal the UI's own diff of the two blobs.
    const views = await diffViewsOf(ctx, entry);
    expect(await lineStats(ctx, entry)).toEqual({
      added: views.reduce((n, v) => n + v.added, 0),
      removed: views.reduce((n, v) => n + v.removed, 0),
    });
  }
  // Commits page rows: index-backed counts, every filter-free page.
  let page = await listCommits(ctx, {}, {});
  for (;;) {
    for (const row of page.rows) {
      const views = await diffViewsOf(ctx, store.history.get(row.commit)!);
      expect([row.added, row.removed]).toEqual([views.reduce((n, v) => n + v.added, 0), views.reduce((n, v) => n + v.removed, 0)]);
    }
    if (!page.older) break;
    page = await listCommits(ctx, {}, { before: page.older });
  }
  // The path-prefix filter narrows through the index: the same commits as testing every entry.
  for (const prefix of ['/memories', '/memories/a', '/memories/a/b', '/memories/c', '/memories/d', '/memories/f1.md']) {
    const found: string[] = [];
    let filtered = await listCommits(ctx, { path: prefix }, {});
    for (;;) {
      found.push(...filtered.rows.map((r) => r.commit));
      if (!filtered.older) break;
      filtered = await listCommits(ctx, { path: prefix }, { before: filtered.older });
    }
    const expected = [...store.history.all()].reverse().filter((e) => touchesPath(e, prefix)).map((e) => e.commit);
    expect({ prefix, found }).toEqual({ prefix, found: expected });
  }
  // Sessions: the combined before/after diff from the index equals the one read from the two trees.
  for (const session of store.history.sessions()) {
    const entries = store.history.bySession(session);
    const combined = (await sessionPage(ctx, session)).combined.map((d) => [d.oldPath ?? d.newPath, d.oldOid, d.newOid]);
    const beforeTree = entries[0].parent ? await store.commitTree(entries[0].parent) : null;
    const afterTree = await store.commitTree(entries[entries.length - 1].commit);
    const touched = [...new Set(entries.flatMap((e) => fileDiffs(e).flatMap((d) => [d.oldPath, d.newPath]).filter((p): p is string => !!p)))].sort();
    const fromTrees: unknown[] = [];
    for (const p of touched) {
      const before = beforeTree ? await store.objects.entryAt(beforeTree, p.slice(1)) : null;
      const after = await store.objects.entryAt(afterTree, p.slice(1));
      const oldOid = before?.type === 'blob' ? before.oid : null;
      const newOid = after?.type === 'blob' ? after.oid : null;
      if (oldOid !== newOid) fromTrees.push([p, oldOid, newOid]);
    }
    expect(combined).toEqual(fromTrees);
  }
  // Overview and tree pages: sizes from the index equal the blobs' sizes.
  const front = await overview(ctx);
  const headTree = await store.commitTree(store.history.head!.commit);
  for (const file of front.files) {
    const blob = await store.objects.entryAt(headTree, `memories/${file.rel}`);
    expect(file.size).toBe((await store.objects.readBlob(blob!.oid)).byteLength);
  }
  for (const position of [1, Math.floor(store.history.size / 2), store.history.size - 1]) {
    const commit = store.history.at(position)!.commit;
    const tree = await treePage(ctx, commit, '');
    const root = await store.commitTree(commit);
    for (const row of tree.rows.filter((r) => r.kind === 'file')) {
      const blob = await store.objects.entryAt(root, `memories/${row.rel}`);
      expect(row.size).toBe((await store.objects.readBlob(blob!.oid)).byteLength);
    }
  }
}

async function expectBlameMatchesGit(store: MemoryStore, snapshots: Array<Map<string, BlameState>>): Promise<void> {
  const positions = new Set([store.history.size - 1, Math.floor(store.history.size / 3), Math.floor((2 * store.history.size) / 3)]);
  for (const position of positions) {
    const expected = snapshots[position];
    const paths = new Set([...expected.keys(), ...store.history.paths().filter((p) => p.startsWith('memories/') && !p.endsWith('/.keep'))]);
    for (const repoPath of paths) {
      const { state } = await blameFile(store.history, repoPath, position, textReader(store));
      const want = expected.get(repoPath) ?? { lines: [], origins: [] };
      expect({ repoPath, position, ...state }).toEqual({ repoPath, position, ...want });
    }
  }
}

test.each([7, 1234, 99])('seed %i: index facts, pages and incremental blame equal a recomputation from git (warm, cold, migrated)', async (seed) => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  await buildHistory(store, seed, 50);
  // At least one reset and one revert, with more random calls after them (so blame records are extended
  // across rollbacks too).
  const reset = await store.reset({ to: store.history.at(Math.floor(store.history.size / 3))!.commit, operator: 'tester', reason: 'reset' });
  expect(reset.status).toBe('committed');
  await buildHistory(store, seed + 1, 20);
  for (const call of store.history.all().filter((e) => e.toolUseId).reverse()) {
    if ((await store.revert(call.toolUseId!, { operator: 'tester', reason: 'revert' })).status === 'committed') break;
  }
  await buildHistory(store, seed + 2, 20);
  // The history holds every kind of change this test is about.
  const kinds = new Set(store.history.all().flatMap((e) => fileDiffs(e).map((d) => d.status)));
  expect([...kinds].sort()).toEqual(['added', 'deleted', 'modified', 'renamed']);
  expect(store.history.all().some((e) => e.actor && e.title.startsWith('revert '))).toBe(true);
  expect(store.history.all().some((e) => e.actor && e.title.startsWith('reset to '))).toBe(true);
  const snapshots = await blameFromGit(store);
  await expectIndexMatchesGit(store);
  await expectBlameMatchesGit(store, snapshots);
  await store.close();

  // A new process (fresh open of the same store): blame at HEAD of every file is one lookup — the record
  // extended at write time — plus the blob's text.
  const reopened = await MemoryStore.open(dir, QUIET);
  for (const live of reopened.history.liveFiles()) {
    const counter = { reads: 0 };
    const { state } = await blameFile(reopened.history, live.path, reopened.history.size - 1, textReader(reopened, counter));
    expect({ path: live.path, ...state }).toEqual({ path: live.path, ...snapshots[snapshots.length - 1].get(live.path)! });
    expect({ path: live.path, reads: counter.reads }).toEqual({ path: live.path, reads: 1 });
  }
  await reopened.close();

  // Cold open: a copy without .git/memgit/ (as a fresh clone has) rebuilds the index from git; facts
  // are computed lazily and blame is replayed.
  const cold = anotherDir();
  fs.cpSync(dir, cold, { recursive: true });
  fs.rmSync(path.join(cold, '.git', 'memgit'), { recursive: true, force: true });
  const coldStore = await MemoryStore.open(cold, QUIET);
  expect(coldStore.history.missingFacts()).toBe(coldStore.history.size);
  await expectIndexMatchesGit(coldStore);
  await expectBlameMatchesGit(coldStore, snapshots);
  await coldStore.close();
  // What was computed lazily was persisted: the next open has every fact.
  const coldAgain = await MemoryStore.open(cold, QUIET);
  expect(coldAgain.history.missingFacts()).toBe(0);
  await coldAgain.close();

  // An index of the previous format (no facts, no trees) is migrated: same entries, then facts lazily.
  const migrated = anotherDir();
  fs.cpSync(dir, migrated, { recursive: true });
  const memgitDir = path.join(migrated, '.git', 'memgit');
  const v2 = fs.readFileSync(path.join(memgitDir, 'history-v2.jsonl'), 'utf8').trim().split('\n');
  const v1 = v2.map((line) => {
    const { facts: _facts, tree: _tree, ...rest } = JSON.parse(line) as HistoryEntry;
    return JSON.stringify(rest);
  });
  for (const name of fs.readdirSync(memgitDir)) fs.rmSync(path.join(memgitDir, name), { force: true });
  fs.writeFileSync(path.join(memgitDir, 'history-v1.jsonl'), v1.join('\n') + '\n');
  const migratedStore = await MemoryStore.open(migrated, QUIET);
  expect(fs.existsSync(path.join(memgitDir, 'history-v1.jsonl'))).toBe(false);
  expect(fs.existsSync(path.join(memgitDir, 'history-v2.jsonl'))).toBe(true);
  expect(migratedStore.history.size).toBe(v1.length);
  await migratedStore.history.backfillFacts();
  expect(migratedStore.history.missingFacts()).toBe(0);
  await expectIndexMatchesGit(migratedStore);
  await migratedStore.close();

  const fsck = spawnSync('git', ['fsck', '--full', '--strict'], { cwd: dir, encoding: 'utf8' });
  expect({ status: fsck.status, out: fsck.stdout + fsck.stderr }).toEqual({ status: 0, out: '' });
}, 240_000);

test('a stale blame record or a torn line is never used: the file is replayed instead', async () => {
  const dir = tempDir();
  const store = await MemoryStore.open(dir, QUIET);
  await store.execute(toolUse('toolu_1', { command: 'create', path: '/memories/n.md', file_text: 'one\ntwo\n' }), { session: 's' });
  await store.execute(toolUse('toolu_2', { command: 'insert', path: '/memories/n.md', insert_line: 1, insert_text: 'between' }), { session: 's' });
  const commits = store.history.all().map((e) => e.commit);
  await store.close();
  // Another process (or a crash) left a record that claims the wrong origins for the current blob.
  const file = path.join(dir, '.git', 'memgit', 'blame-v1.jsonl');
  const lines = fs.readFileSync(file, 'utf8').trim().split('\n');
  const last = JSON.parse(lines[lines.length - 1]) as { p: string; r: string; o: string; c: string[]; l: number[] };
  fs.appendFileSync(file, JSON.stringify({ ...last, r: commits[1], c: [commits[1]], l: [0, 3] }) + '\n' + 'not json\n');
  const reopened = await MemoryStore.open(dir, QUIET);
  const { state } = await blameFile(reopened.history, 'memories/n.md', reopened.history.size - 1, textReader(reopened));
  expect(state).toEqual({ lines: ['one', 'between', 'two'], origins: [commits[1], commits[2], commits[1]] });
  await reopened.close();
});
