/**
 * Benchmark stores, made as memgit itself leaves them: every object written loose by memgit's own object
 * writer (src/store/loose-object.ts, the bytes the store's write path writes; without fsync, setup only),
 * then packed by memgit's full gc (src/store/gc.ts) — with git pack-objects, and in a copy with the
 * isomorphic-git fallback — and opened with MemoryStore, which checks the repository out, configures it and
 * builds the history index. A third variant holds the same history imported with `git fast-import` and
 * packed by git with deltas, as a clone from a git host arrives (see `Packing`). *
 * The history is what memgit itself writes: the "memgit: initialise store" commit (.gitattributes and
 * memories/.keep), then one commit per call, titled by its tool_use id, with the Memory-* trailers, the
 * `.keep` placeholder dropped with the first file, and trees under memories/. Files sit in ten topic
 * directories; the first `files` calls create them, every later call is a str_replace of one line (so
 * files keep a realistic, stable size). One file (HOT_FILE) gets every k-th call, so that it has 500
 * revisions for blame; sessions are 50 calls long.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatCommitMessage } from '../src/store/commit-message';
import { DurableFs } from '../src/store/durable-fs';
import { repack } from '../src/store/gc';
import { commitContent, encodeLoose, LooseType, TreeItem, treeContent } from '../src/store/loose-object';
import { MemoryStore } from '../src/store/memory-store';
import { ObjectStore } from '../src/store/objects';
import { DEFAULT_AUTHOR } from '../src/store/options';
import { GITATTRIBUTES } from '../src/store/repo-config';

export const TOPICS = 10;
export const SESSION_CALLS = 50;
export const HOT_REVISIONS = 500;
export const BASE_TIME = 1_750_000_000;
const LINES_PER_FILE = 24;

export function filePath(i: number): string {
  return `memories/topic-${String(i % TOPICS).padStart(2, '0')}/note-${String(i).padStart(4, '0')}.md`;
}

export const HOT_FILE = filePath(0);

export function sessionOf(call: number): string {
  return `sess_bench_${String(Math.floor(call / SESSION_CALLS)).padStart(5, '0')}`;
}

export function toolUseId(call: number): string {
  return `toolu_bench_${String(call).padStart(7, '0')}`;
}

/** The unique line call `call` wrote (for "which call introduced this text"). */
export function factOf(call: number): string {
  return `fact ${call}: the user prefers option ${(call * 7919) % 1000} for task ${call % 97}`;
}

interface Plan {
  file: number;
  line: number;
}

/** Which file and line the edit of `call` changes (calls >= files are edits). */
function planEdit(call: number, commits: number, files: number): Plan {
  const edits = commits - files;
  const hotEvery = Math.max(1, Math.floor(edits / HOT_REVISIONS));
  const k = call - files;
  if (k % hotEvery === 0) return { file: 0, line: (k / hotEvery) % LINES_PER_FILE };
  // A multiplicative walk spreads edits over all files without a random generator.
  return { file: 1 + ((k * 2654435761) >>> 0) % Math.max(1, files - 1), line: (k * 31) % LINES_PER_FILE };
}

function initialText(i: number): string {
  const lines = [`# Notes ${i}`];
  for (let k = 1; k < LINES_PER_FILE; k++) lines.push(`- item ${k} of note ${i}: something worth remembering about it`);
  return `${lines.join('\n')}\n`;
}

/**
 * How a benchmark store's objects are stored. `memgit-git` (the default, what every section measures unless
 * it says otherwise) and `memgit-isomorphic-git`: every object written loose by memgit's own object writer
 * (src/store/loose-object.ts, the bytes a call writes), then packed by memgit's full gc (src/store/gc.ts) with
 * git pack-objects (deltas; when git is installed) or with isomorphic-git (whole objects; the fallback).
 * `git-packed`: the same history through `git fast-import` into a pack with deltas, as a clone from a git
 * host would arrive. The three hold the same commits (the generator checks their HEADs are equal).
 */
export type Packing = 'memgit-git' | 'memgit-isomorphic-git' | 'git-packed';
export const PACKINGS: readonly Packing[] = ['memgit-git', 'memgit-isomorphic-git', 'git-packed'];

/** The directory of a store's variant: the default (`memgit-git`) is `dir` itself. */
export function variantDir(dir: string, packing: Packing): string {
  return packing === 'memgit-git' ? dir : `${dir}.${packing}`;
}

/** What generation measured, kept in `<dir>.complete` (JSON). */
export interface GeneratedFacts {
  commits: number;
  files: number;
  head: string;
  /** `du` of .git/objects with every object loose (before any gc). */
  looseBytes: number;
  /** Per packing: `du` of .git/objects after gc (or fast-import) and how long packing took. */
  packed: Partial<Record<Packing, { bytes: number; packMs: number; objects: number }>>;
}

export function generatedFacts(dir: string): GeneratedFacts | null {
  try {
    const text = fs.readFileSync(`${dir}.complete`, 'utf8');
    return text ? (JSON.parse(text) as GeneratedFacts) : null;
  } catch {
    return null;
  }
}

/**
 * Build (once; cached by directory) a store of `commits` agent calls over `files` files, as memgit leaves it:
 * loose objects from memgit's object writer, packed by `memgit gc` with git. Its two other variants
 * (variantDir) are built with it.
 */
export async function ensureStore(dir: string, commits: number, files: number, log: (m: string) => void): Promise<void> {
  dir = path.resolve(dir);
  const done = `${dir}.complete`; // beside the store: inside it, git would see an untracked file
  if (fs.existsSync(done)) return;
  for (const packing of PACKINGS) {
    fs.rmSync(variantDir(dir, packing), { recursive: true, force: true });
    fs.rmSync(`${variantDir(dir, packing)}.complete`, { force: true });
  }
  fs.mkdirSync(dir, { recursive: true });
  const began = Date.now();
  if (commits === 0) {
    const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    await store.close();
    fs.writeFileSync(done, '');
    return;
  }
  // The two stores memgit's gc packs get the same loose objects, each written by the object writer (writing
  // twice is quicker than copying hundreds of thousands of small files).
  const engines = [['memgit-git', 'git'], ['memgit-isomorphic-git', 'isomorphic-git']] as const;
  for (const [packing] of engines) {
    fs.rmSync(variantDir(dir, packing), { recursive: true, force: true });
    initRepo(variantDir(dir, packing));
  }
  log(`  writing ${commits} commits as loose objects with memgit's object writer…`);
  const head = writeLooseHistory(engines.map(([packing]) => variantDir(dir, packing)), commits, files, log);
  const facts: GeneratedFacts = { commits, files, head, looseBytes: duBytes(path.join(dir, '.git', 'objects')), packed: {} };

  for (const [packing, engine] of engines) {
    const target = variantDir(dir, packing);
    log(`  memgit gc (full, engine ${engine}) of ${commits} commits…`);
    const t0 = Date.now();
    const durableFs = new DurableFs({ fsync: false });
    const gitdir = path.join(target, '.git');
    fs.mkdirSync(path.join(gitdir, 'memgit'), { recursive: true }); // where gc notes the pack git wrote
    const report = await repack(new ObjectStore(durableFs, gitdir), durableFs, target, gitdir, { full: true, engine });
    if (report.engine !== engine) throw new Error(`gc packed with ${report.engine}, not ${engine}: ${report.engineNote ?? ''}`);
    facts.packed[packing] = { bytes: duBytes(path.join(gitdir, 'objects')), packMs: Date.now() - t0, objects: report.packedObjects };
    log(`    ${report.packedObjects} objects in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }

  {
    const target = variantDir(dir, 'git-packed');
    initRepo(target);
    const streamFile = `${target}.fast-import`;
    writeStream(streamFile, commits, files, log);
    log(`  fast-import of ${commits} commits (the git-packed variant)…`);
    const t0 = Date.now();
    const imported = spawnSync('sh', ['-c', `git fast-import --quiet --date-format=raw --depth=50 < "${streamFile}"`], {
      cwd: target,
      maxBuffer: 64 * 1024 * 1024,
    });
    fs.rmSync(streamFile, { force: true });
    if (imported.status !== 0) throw new Error(`git fast-import: ${imported.stderr}`);
    const fastHead = spawnSync('git', ['-C', target, 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).stdout.trim();
    if (fastHead !== head) throw new Error(`fast-import's HEAD ${fastHead} is not memgit's ${head}: the generators disagree`);
    facts.packed['git-packed'] = { bytes: duBytes(path.join(target, '.git', 'objects')), packMs: Date.now() - t0, objects: 0 };
  }

  log(`  opening with MemoryStore (checkout, history index of ${commits} commits)…`);
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined, autoGcLooseObjects: 0 });
  if (store.history.size !== commits + 1) throw new Error(`expected ${commits + 1} commits, indexed ${store.history.size}`);
  // As a store memgit wrote itself: every commit's line counts and sizes in the index (what `memgit serve`
  // computes in the background after a cold open).
  log(`  computing the history index's facts for ${commits} commits…`);
  await store.history.backfillFacts();
  // And its flags scanned through HEAD, as in a store memgit wrote (each call is scanned after it is
  // acknowledged): otherwise the scan of all history runs in the background of every timing after it.
  log(`  scanning ${commits} commits for likely secrets (flags)…`);
  await store.flags.catchUp(store.history);
  await store.close();

  // The variants get the same working tree, config and .git/memgit (the history index is the same: the
  // commits are); only .git/objects differs.
  for (const packing of ['memgit-isomorphic-git', 'git-packed'] as const) {
    const target = variantDir(dir, packing);
    const objects = path.join(target, '.git', 'objects');
    const kept = `${target}.objects`;
    fs.renameSync(objects, kept);
    fs.rmSync(target, { recursive: true, force: true });
    const copy = spawnSync('sh', ['-c', 'cp -a "$1" "$2" && rm -rf "$2/.git/objects" && mv "$3" "$2/.git/objects"', 'sh', dir, target, kept]);
    if (copy.status !== 0) throw new Error(`copying ${dir} to ${target}: ${copy.stderr}`);
    const check = await MemoryStore.open(target, { fsync: false, log: () => undefined, autoGcLooseObjects: 0 });
    const size = check.history.size;
    await check.close();
    if (size !== commits + 1) throw new Error(`${packing}: expected ${commits + 1} commits, indexed ${size}`);
    fs.writeFileSync(`${target}.complete`, JSON.stringify(facts));
  }
  fs.writeFileSync(done, JSON.stringify(facts));
  log(`  built in ${((Date.now() - began) / 1000).toFixed(0)} s`);
}

/** An empty repository marked as a memgit store, so that MemoryStore.open adopts it (setup only). */
function initRepo(dir: string): void {
  const run = spawnSync('git', ['init', '-q', '-b', 'main', dir]);
  if (run.status !== 0) throw new Error(`git init: ${run.stderr}`);
  spawnSync('git', ['-C', dir, 'config', 'memgit.configversion', '0']);
}

export function duBytes(dir: string): number {
  const out = spawnSync('du', ['-s', '-B1', dir], { encoding: 'utf8' });
  return Number(out.stdout.split('\t')[0]);
}

/** One generated call: its time, commit message, and the file it leaves (path, full text). */
interface GeneratedCall {
  time: number;
  message: string;
  target: string;
  content: string;
}

/** The calls of the history, in order (shared by both writers, so that they write the same commits). */
function* calls(commits: number, files: number): Generator<GeneratedCall> {
  const texts: string[][] = [];
  for (let call = 0; call < commits; call++) {
    const time = BASE_TIME + 10 * (call + 1);
    let command: string;
    let target: string;
    let content: string;
    if (call < files) {
      texts[call] = initialText(call).split('\n');
      command = 'create';
      target = filePath(call);
      content = texts[call].join('\n');
    } else {
      const { file, line } = planEdit(call, commits, files);
      texts[file][line + 1 > LINES_PER_FILE - 1 ? 1 : line + 1] = `- ${factOf(call)}`;
      command = 'str_replace';
      target = filePath(file);
      content = texts[file].join('\n');
    }
    const message = formatCommitMessage({ title: toolUseId(call), command, path: `/${target}`, session: sessionOf(call) });
    yield { time, message, target, content };
  }
}

const INIT_MESSAGE = 'memgit: initialise store\n';

/**
 * Every commit written as loose objects by memgit's object writer (encodeLoose, treeContent, commitContent:
 * the bytes ObjectStore writes for a call), without fsync; refs/heads/main moved to the last. Returns HEAD.
 */
function writeLooseHistory(dirs: string[], commits: number, files: number, log: (m: string) => void): string {
  const objectsDirs = dirs.map((dir) => path.join(dir, '.git', 'objects'));
  const written = new Set<string>();
  for (const objectsDir of objectsDirs) {
    for (let b = 0; b < 256; b++) fs.mkdirSync(path.join(objectsDir, b.toString(16).padStart(2, '0')), { recursive: true });
  }
  const write = (type: LooseType, content: Uint8Array): string => {
    const { oid, deflated } = encodeLoose(type, content);
    if (!written.has(oid)) {
      written.add(oid);
      for (const objectsDir of objectsDirs) fs.writeFileSync(path.join(objectsDir, oid.slice(0, 2), oid.slice(2)), deflated);
    }
    return oid;
  };
  const blob = (text: string) => write('blob', Buffer.from(text, 'utf8'));
  const tree = (entries: Map<string, TreeItem>) => write('tree', treeContent([...entries.values()]));
  const person = (timestamp: number) => ({ name: DEFAULT_AUTHOR.name, email: DEFAULT_AUTHOR.email, timestamp, timezoneOffset: 0 });
  const commit = (treeOid: string, parent: string[], time: number, message: string) =>
    write('commit', commitContent({ tree: treeOid, parent, author: person(time), committer: person(time), message }));

  // memories/<topic>/<file>: one tree per topic directory, rebuilt when one of its files changes.
  const topics = new Map<string, Map<string, TreeItem>>();
  const memories = new Map<string, TreeItem>();
  const attributes = blob(GITATTRIBUTES);
  const rootOf = (memoriesOid: string) =>
    tree(
      new Map<string, TreeItem>([
        ['.gitattributes', { mode: '100644', path: '.gitattributes', oid: attributes, type: 'blob' }],
        ['memories', { mode: '040000', path: 'memories', oid: memoriesOid, type: 'tree' }],
      ]),
    );
  memories.set('.keep', { mode: '100644', path: '.keep', oid: blob(''), type: 'blob' });
  let head = commit(rootOf(tree(memories)), [], BASE_TIME, INIT_MESSAGE);
  let n = 0;
  for (const call of calls(commits, files)) {
    if (n === 0) memories.delete('.keep');
    const [, topic, name] = call.target.split('/');
    let entries = topics.get(topic);
    if (!entries) topics.set(topic, (entries = new Map()));
    entries.set(name, { mode: '100644', path: name, oid: blob(call.content), type: 'blob' });
    memories.set(topic, { mode: '040000', path: topic, oid: tree(entries), type: 'tree' });
    head = commit(rootOf(tree(memories)), [head], call.time, call.message);
    if (++n % 20_000 === 0) log(`  wrote ${n}/${commits} commits`);
  }
  for (const dir of dirs) fs.writeFileSync(path.join(dir, '.git', 'refs', 'heads', 'main'), `${head}\n`);
  return head;
}

function writeStream(file: string, commits: number, files: number, log: (m: string) => void): void {
  const fd = fs.openSync(file, 'w');
  const chunks: Buffer[] = [];
  let pending = 0;
  const emit = (text: string | Buffer) => {
    const b = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    chunks.push(b);
    pending += b.length;
    if (pending > 8 * 1024 * 1024) flush();
  };
  const flush = () => {
    fs.writeSync(fd, Buffer.concat(chunks));
    chunks.length = 0;
    pending = 0;
  };
  const data = (text: string) => emit(`data ${Buffer.byteLength(text, 'utf8')}\n${text}\n`);
  const person = (t: number) => `memgit <memgit@localhost> ${t} +0000`;
  // The initialise commit, exactly as MemoryStore writes it.
  emit(`commit refs/heads/main\nauthor ${person(BASE_TIME)}\ncommitter ${person(BASE_TIME)}\n`);
  data(INIT_MESSAGE);
  emit('M 100644 inline .gitattributes\n');
  data(GITATTRIBUTES);
  emit('M 100644 inline memories/.keep\n');
  data('');
  let n = 0;
  for (const { time, message, target, content } of calls(commits, files)) {
    emit(`commit refs/heads/main\nauthor ${person(time)}\ncommitter ${person(time)}\n`);
    data(message);
    if (n === 0) emit('D memories/.keep\n');
    emit(`M 100644 inline ${target}\n`);
    data(content);
    if (++n % 20_000 === 0) log(`  generated ${n}/${commits} commits`);
  }
  flush();
  fs.closeSync(fd);
}
