/**
 * The history index's snapshot (src/store/history-index/snapshot.ts) is a cache of the JSON-lines file: an
 * index loaded through it answers every query exactly as one loaded from the JSON lines — on randomised
 * histories with renames and deletes, with lines appended after it, with facts filled in later — and a
 * snapshot that is stale, damaged or foreign is never used: the lines are parsed and it is written anew.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DurableFs } from '../../../src/store/durable-fs';
import { HistoryIndex, HistoryIndexOptions } from '../../../src/store/history-index';
import { MemoryStore } from '../../../src/store/memory-store';
import { ObjectStore } from '../../../src/store/objects';
import { makeTempDir, QUIET, removeDir, toolUse, useTempDir } from '../git-helpers';
import { mulberry32 as random } from '../../support/random';

const tempDir = useTempDir();
const extraDirs: string[] = [];
afterAll(() => extraDirs.forEach(removeDir));

function copyOf(dir: string): string {
  const copy = makeTempDir();
  extraDirs.push(copy);
  fs.cpSync(dir, copy, { recursive: true });
  return copy;
}


const DIRS = ['', 'a', 'a/b', 'é ü', 'c'];

/** Creates, overwrites, inserts, deletes and renames of files and directories, over a few sessions. */
async function randomHistory(store: MemoryStore, seed: number, calls: number): Promise<void> {
  const rand = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
  for (let i = 0; i < calls; i++) {
    const files = store.history.liveFiles().map((f) => `/${f.path}`);
    const roll = rand();
    let input: Record<string, unknown>;
    if (files.length === 0 || roll < 0.35) {
      const dir = pick(DIRS);
      input = { command: 'create', path: `/memories/${dir ? `${dir}/` : ''}${pick(['f', 'ñ', 'g'])}${Math.floor(rand() * 5)}.md`, file_text: `v${i}\nline ${seed}\n` };
    } else if (roll < 0.55) {
      input = { command: 'insert', path: pick(files), insert_line: 0, insert_text: `inserted ${i}` };
    } else if (roll < 0.7) {
      input = { command: 'delete', path: rand() < 0.2 ? '/memories/a' : pick(files) };
    } else {
      const from = rand() < 0.25 ? '/memories/a' : pick(files);
      input = { command: 'rename', old_path: from, new_path: `/memories/${pick(['c', 'd', 'a/b'])}/r${i}${from.endsWith('.md') ? '.md' : ''}` };
    }
    await store.execute(toolUse(`toolu_${seed}_${i}`, input), { session: `sess_${seed}_${Math.floor(rand() * 4)}` });
  }
}

/** A store with a random history (or more of it, in a store that has one); its HEAD. */
async function storeWithHistory(dir: string, seed: number, calls: number): Promise<string> {
  const store = await MemoryStore.open(dir, { ...QUIET, flags: false, replicate: false });
  try {
    await randomHistory(store, seed, calls);
    return store.history.head!.commit;
  } finally {
    await store.close();
  }
}

/**
 * A history index of the store in `dir` on its own (no store opened: nothing else reads or repairs the
 * file first), opened at `head`. Without options it never writes a snapshot.
 */
async function indexOf(dir: string, head: string, options: HistoryIndexOptions = { snapshotMinEntries: Infinity }): Promise<HistoryIndex> {
  const gitdir = path.join(dir, '.git');
  const index = new HistoryIndex(new ObjectStore(new DurableFs({ fsync: false }), gitdir), gitdir, options);
  await index.open(head);
  return index;
}

const SNAPSHOT = { snapshotMinEntries: 0 };

/**
 * Every query of the index, in an order that asks for single entries before all() (so that an index
 * loaded through a snapshot answers them while its entries are still unparsed).
 */
function queries(index: HistoryIndex, extraIds: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const n = index.size;
  out.size = n;
  out.head = index.head ?? null;
  const commits: string[] = [];
  const ids: string[] = [...extraIds, 'toolu_none', '', '__proto__'];
  for (let i = n - 1; i >= 0; i -= 3) commits.push(index.at(i)!.commit);
  out.position = [...commits, 'f'.repeat(40), 'nope', '__proto__'].map((c) => index.position(c) ?? null);
  for (let i = 0; i < n; i++) {
    const id = index.at(i)!.toolUseId;
    if (id) ids.push(id);
  }
  out.byToolUseId = ids.map((id) => index.byToolUseId(id) ?? null);
  out.get = [...commits, 'nope'].map((c) => index.get(c) ?? null);
  out.at = [-1, 0.5, n, n + 1, Number.NaN].map((i) => index.at(i) ?? null);
  const sessions = index.sessions();
  out.sessions = sessions;
  out.bySession = [...sessions, 'nope', '__proto__'].map((s) => index.bySession(s));
  const paths = index.paths();
  out.paths = paths;
  out.byPath = [...paths, 'memories/none.md'].map((p) => index.byPath(p));
  const cuts = [-1, 0, Math.floor(n / 3), Math.floor(n / 2), n - 2, n - 1, n];
  out.byPathAfter = paths.map((p) => cuts.map((k) => index.byPathAfter(p, k)));
  out.lastChange = paths.map((p) => cuts.map((k) => index.lastChange(p, k) ?? null));
  out.liveFiles = index.liveFiles();
  out.missingFacts = index.missingFacts();
  out.revertsFrom = cuts.filter((k) => k >= 0).map((k) => index.revertsFrom(k));
  out.all = [...index.all()];
  out.every = Array.from({ length: n }, (_, i) => index.at(i));
  return out;
}

test.each([1, 2, 3])('randomised history %i: loaded through its snapshot, the index answers exactly as from the JSON lines', async (seed) => {
  const dir = tempDir();
  const head = await storeWithHistory(dir, seed, 70);
  const reference = await indexOf(dir, head);
  const snapshotFile = reference.snapshotFile;
  expect(fs.existsSync(snapshotFile)).toBe(false); // below the default size: none written by the store

  const writer = await indexOf(dir, head, SNAPSHOT);
  expect(writer.snapshotEntries).toBe(0); // parsed the lines, then wrote the snapshot
  expect(fs.existsSync(snapshotFile)).toBe(true);
  expect(queries(writer)).toEqual(queries(reference));

  const fast = await indexOf(dir, head, SNAPSHOT);
  expect(fast.snapshotEntries).toBe(reference.size);
  // One object per entry whichever way it is reached (facts are set on it later).
  const some = fast.at(5)!;
  expect(fast.get(some.commit)).toBe(some);
  expect(fast.byToolUseId(some.toolUseId!)).toBe(some);
  expect(queries(fast)).toEqual(queries(reference));
  expect(fast.all()[5]).toBe(some);

  // Lines appended after the snapshot are parsed on top of it.
  const head2 = await storeWithHistory(dir, seed + 100, 25);
  const reference2 = await indexOf(dir, head2);
  const tail = await indexOf(dir, head2, SNAPSHOT);
  expect(tail.snapshotEntries).toBe(reference.size);
  expect(queries(tail)).toEqual(queries(reference2));
  // Once enough lines follow it, it is written again over the whole file.
  const rewriter = await indexOf(dir, head2, { snapshotMinEntries: 0, snapshotStaleLines: 10 });
  expect(rewriter.snapshotEntries).toBe(reference.size);
  const again = await indexOf(dir, head2, SNAPSHOT);
  expect(again.snapshotEntries).toBe(reference2.size);
  expect(queries(again)).toEqual(queries(reference2));
});

test('entries are read by position from the file as it was loaded: not kept in memory, a file renamed over it or a closed index changes no answer', async () => {
  const dir = tempDir();
  const head = await storeWithHistory(dir, 7, 60);
  const reference = await indexOf(dir, head);
  await indexOf(dir, head, SNAPSHOT); // writes the snapshot
  const expected = queries(reference);

  // Loaded through the snapshot, nothing parsed yet; then the file is replaced by a rewrite (a new file
  // renamed into place, as memgit rewrites it) holding other bytes at every position.
  const fast = await indexOf(dir, head, SNAPSHOT);
  expect(fast.snapshotEntries).toBe(reference.size);
  expect(openDescriptorsOf(fast.file)).toBe(1); // the lines are read from the file, held open
  const original = fs.readFileSync(fast.file);
  const replacement = `${fast.file}.other`;
  fs.writeFileSync(replacement, Buffer.from(original.toString('utf8').replace(/"commit":"[0-9a-f]{40}"/g, `"commit":"${'0'.repeat(40)}"`), 'utf8'));
  fs.renameSync(replacement, fast.file);
  // Single entries read at their positions from the descriptor opened at load, then all() in one read.
  expect(queries(fast)).toEqual(expected);
  expect(openDescriptorsOf(fast.file)).toBe(0); // all() parsed every line: the file is let go

  // After close() (the store closed), an entry not parsed yet is read from the file at its path, checked
  // against the snapshot as ever.
  fs.writeFileSync(fast.file, original);
  const closed = await indexOf(dir, head, SNAPSHOT);
  closed.close();
  expect(closed.at(3)).toEqual(reference.at(3));
  expect(queries(closed)).toEqual(expected);
  reference.close();
});

/** How many of this process's descriptors are open on `file` (or on a file that was at its path, since replaced). */
function openDescriptorsOf(file: string): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let target: string;
    try {
      target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target === file || target === `${file} (deleted)`) n++;
  }
  return n;
}

test('facts: an index without them (cold open) has the same missing facts and backfill through a snapshot; the rewrite makes it stale', async () => {
  const dir = tempDir();
  await storeWithHistory(dir, 7, 40);
  fs.rmSync(path.join(dir, '.git', 'memgit'), { recursive: true, force: true }); // cold: entries indexed from git
  const head = await storeWithHistory(dir, 8, 5);
  const dirB = copyOf(dir);
  const reference = await indexOf(dir, head);
  expect(reference.missingFacts()).toBeGreaterThan(0);
  await indexOf(dirB, head, SNAPSHOT); // writes the snapshot
  const fast = await indexOf(dirB, head, SNAPSHOT);
  expect(fast.snapshotEntries).toBe(reference.size);
  expect(fast.missingFacts()).toBe(reference.missingFacts());
  await reference.backfillFacts();
  await fast.backfillFacts();
  expect(fast.missingFacts()).toBe(0);
  expect(queries(fast)).toEqual(queries(reference));
  // The backfill rewrote the file with the facts folded in: the old snapshot describes other bytes.
  const reloaded = await indexOf(dirB, head, SNAPSHOT);
  expect(reloaded.snapshotEntries).toBe(0);
  expect(reloaded.missingFacts()).toBe(0);
  const fresh = await indexOf(dirB, head, SNAPSHOT);
  expect(fresh.snapshotEntries).toBe(reference.size);
  expect(queries(fresh)).toEqual(queries(await indexOf(dir, head)));
});

describe('a snapshot that does not describe the file is not used, and is written anew', () => {
  const damages: Array<[string, (snapshot: string, file: string) => void]> = [
    ['a flipped byte in its tables', (s) => flip(s, Math.floor(fs.statSync(s).size / 2))],
    ['a flipped byte in its header', (s) => flip(s, 40)],
    ['cut short', (s) => fs.truncateSync(s, fs.statSync(s).size - 7)],
    ['empty', (s) => fs.writeFileSync(s, '')],
    ['not a snapshot', (s) => fs.writeFileSync(s, '{"n":1}\n')],
    ['a line of the file changed, same length', (_, f) => fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('"title":"toolu_', '"title":"toolX_'))],
    ['the file rewritten shorter (torn tail re-derived)', (_, f) => fs.truncateSync(f, fs.statSync(f).size - 30)],
    ['a torn line appended to the file', (_, f) => fs.appendFileSync(f, '{"title":"torn')],
  ];
  // The same history for every damage, made once: each test damages copies of it.
  let seeded: { dir: string; head: string };
  beforeAll(async () => {
    const dir = makeTempDir();
    extraDirs.push(dir);
    seeded = { dir, head: await storeWithHistory(dir, 11, 40) };
  });
  test.each(damages)('%s', async (_, damage) => {
    const dir = copyOf(seeded.dir);
    const head = seeded.head;
    const dirB = copyOf(dir);
    await indexOf(dirB, head, SNAPSHOT); // a good snapshot in the copy
    const snapshot = path.join(dirB, '.git', 'memgit', 'history-v2.snapshot');
    expect(fs.existsSync(snapshot)).toBe(true);
    // The same damage to the file in both copies; the reference never had a snapshot.
    const file = (d: string) => path.join(d, '.git', 'memgit', 'history-v2.jsonl');
    const before = fs.readFileSync(file(dirB));
    damage(snapshot, file(dirB));
    const fileDamaged = !fs.readFileSync(file(dirB)).equals(before);
    if (fileDamaged) fs.copyFileSync(file(dirB), file(dir));
    const reference = await indexOf(dir, head);
    const loaded = await indexOf(dirB, head, SNAPSHOT);
    // Not used (or, after a torn line, dropped when the file is rewritten from git, as the reference does).
    expect(loaded.snapshotEntries).toBe(0);
    expect(queries(loaded)).toEqual(queries(reference));
    expect(fs.readFileSync(file(dirB))).toEqual(fs.readFileSync(file(dir)));
    await indexOf(dirB, head, SNAPSHOT); // writes one for the file as it is now, if the last load could not
    const next = await indexOf(dirB, head, SNAPSHOT);
    expect(next.snapshotEntries).toBe(reference.size);
    expect(queries(next)).toEqual(queries(reference));
  });

  test('one that does not fit is removed even when no new one is written (a small history)', async () => {
    const dir = tempDir();
    const head = await storeWithHistory(dir, 14, 20);
    await indexOf(dir, head, SNAPSHOT);
    const snapshot = path.join(dir, '.git', 'memgit', 'history-v2.snapshot');
    flip(snapshot, 100);
    const reference = await indexOf(copyOf(dir), head);
    const loaded = await indexOf(dir, head, { snapshotMinEntries: 1000 });
    expect(loaded.snapshotEntries).toBe(0);
    expect(fs.existsSync(snapshot)).toBe(false);
    expect(queries(loaded)).toEqual(queries(reference));
  });

  test('reset() (a redaction rewrote history) removes it with the file', async () => {
    const dir = tempDir();
    const head = await storeWithHistory(dir, 15, 10);
    const index = await indexOf(dir, head, SNAPSHOT);
    await indexOf(dir, head, SNAPSHOT);
    expect(fs.existsSync(index.snapshotFile)).toBe(true);
    await index.reset();
    expect(fs.existsSync(index.snapshotFile)).toBe(false);
    expect(fs.existsSync(index.file)).toBe(false);
  });

  test("another store's snapshot", async () => {
    const dir = tempDir();
    const head = await storeWithHistory(dir, 12, 30);
    const other = makeTempDir();
    extraDirs.push(other);
    const otherHead = await storeWithHistory(other, 13, 30);
    await indexOf(other, otherHead, SNAPSHOT);
    fs.copyFileSync(path.join(other, '.git', 'memgit', 'history-v2.snapshot'), path.join(dir, '.git', 'memgit', 'history-v2.snapshot'));
    const reference = await indexOf(copyOf(dir), head);
    const loaded = await indexOf(dir, head, SNAPSHOT);
    expect(loaded.snapshotEntries).toBe(0);
    expect(queries(loaded)).toEqual(queries(reference));
  });
});

function flip(file: string, offset: number): void {
  const bytes = fs.readFileSync(file);
  bytes[offset] ^= 0x20;
  fs.writeFileSync(file, bytes);
}

describe('hostile lines: the snapshot answers as the lines do, or is not written', () => {
  const oid = (i: number) => i.toString(16).padStart(40, 'a');
  function lines(entries: Array<Record<string, unknown>>): string {
    return entries.map((e, i) => JSON.stringify({ commit: oid(i + 1), parent: i ? oid(i) : null, time: 1750000000 + i, changes: [], ...e }) + '\n').join('');
  }
  const describable = [
    { title: 'a', toolUseId: 'dup', session: '__proto__', changes: [{ path: 'memories/__proto__', oldOid: null, newOid: oid(90) }] },
    { title: 'b', toolUseId: '\ufffd', session: 'sé\u2028ss\u0000', changes: [{ path: 'memories/é/x.md', oldOid: null, newOid: oid(91) }], facts: [1, 0, -1, 2] },
    { title: 'c', toolUseId: '', session: '', changes: [{ path: 'memories/__proto__', oldOid: oid(90), newOid: null }] },
    { title: 'd', toolUseId: 'dup', session: 0, changes: [{ path: 'memories/é/x.md', oldOid: oid(91), newOid: oid(92) }, { path: 'memories/é/x.md', oldOid: null, newOid: null }] },
    { title: 'e', toolUseId: 'constructor', session: 'constructor', facts: 'yes', changes: [{ path: 'memories/.keep', oldOid: null, newOid: oid(93) }] },
    { title: 'f', toolUseId: 'toolu_' + 'x'.repeat(300), session: '__proto__' },
  ];
  const extraIds = ['dup', '\ufffd', '\ud800', 'constructor', 'toString', 'toolu_' + 'x'.repeat(300)];

  async function load(gitdir: string, options: HistoryIndexOptions, count: number): Promise<HistoryIndex> {
    const index = new HistoryIndex(new ObjectStore(new DurableFs({ fsync: false }), gitdir), gitdir, options);
    await index.open(oid(count));
    return index;
  }

  function write(entries: Array<Record<string, unknown>>): string {
    const gitdir = makeTempDir();
    extraDirs.push(gitdir);
    fs.mkdirSync(path.join(gitdir, 'memgit'));
    fs.writeFileSync(path.join(gitdir, 'memgit', 'history-v2.jsonl'), lines(entries));
    return gitdir;
  }

  test('odd ids, sessions and paths (duplicates, empty, unicode, __proto__) are described exactly', async () => {
    const gitdir = write(describable);
    const reference = await load(gitdir, { snapshotMinEntries: Infinity }, describable.length);
    await load(gitdir, SNAPSHOT, describable.length);
    const fast = await load(gitdir, SNAPSHOT, describable.length);
    expect(fast.snapshotEntries).toBe(describable.length);
    expect(fast.byToolUseId('dup')!.title).toBe('d'); // the newest with an id, as before
    expect(fast.byToolUseId('\ud800')).toBeUndefined();
    expect(queries(fast, extraIds)).toEqual(queries(reference, extraIds));
  });

  test.each([
    ['a tool_use id with a lone surrogate', { title: 'g', toolUseId: '\ud800' }],
    ['a session that is not a string', { title: 'g', session: { a: 1 } }],
    ['a tool_use id that is not a string', { title: 'g', toolUseId: 12 }],
  ])('%s: no snapshot, the lines are parsed each time', async (_, odd) => {
    const entries = [...describable, odd];
    const gitdir = write(entries);
    const reference = await load(gitdir, { snapshotMinEntries: Infinity }, entries.length);
    await load(gitdir, SNAPSHOT, entries.length);
    expect(fs.existsSync(path.join(gitdir, 'memgit', 'history-v2.snapshot'))).toBe(false);
    const again = await load(gitdir, SNAPSHOT, entries.length);
    expect(again.snapshotEntries).toBe(0);
    expect(queries(again, extraIds)).toEqual(queries(reference, extraIds));
  });
});

test('the calls commits undid are read from the snapshot without keeping every entry, and as from the JSON lines', async () => {
  const dir = tempDir();
  await storeWithHistory(dir, 7, 20);
  const store = await MemoryStore.open(dir, { ...QUIET, flags: false, replicate: false });
  for (const name of ['x', 'y', 'z']) {
    await store.execute(toolUse(`toolu_make_${name}`, { command: 'create', path: `/memories/undo/${name}.md`, file_text: `${name}\n` }), { session: 'sess_undo' });
  }
  const operator = { operator: 'dana', reason: 'test' };
  const first = await store.revert('toolu_make_x', operator);
  expect(first.status).toBe('committed');
  expect((await store.revert('toolu_make_y', operator)).status).toBe('committed');
  expect((await store.revert(first.commit!, operator)).status).toBe('committed'); // a revert of a revert
  await randomHistory(store, 8, 10);
  const head = store.history.head!.commit;
  await store.close();

  const reference = await indexOf(dir, head);
  const expected = reference.all().filter((e) => e.reverts?.length).map((e) => ({ commit: e.commit, reverts: e.reverts }));
  expect(expected).toHaveLength(3);
  await indexOf(dir, head, SNAPSHOT); // writes the snapshot
  const fast = await indexOf(dir, head, SNAPSHOT);
  expect(fast.snapshotEntries).toBe(reference.size);
  expect(fast.revertsFrom(0)).toEqual(expected);
  expect(fast.revertsFrom(reference.position(first.commit!)! + 1)).toEqual(expected.slice(1));
  // Only the three reverting entries were parsed to answer.
  const parsed = (fast as unknown as { entries: unknown[] }).entries.filter((e) => e !== undefined).length;
  expect(parsed).toBe(3);
  expect(queries(fast)).toEqual(queries(reference));
});
