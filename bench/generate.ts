/**
 * Benchmark stores, generated fast with `git fast-import` (the real git CLI, setup only) and then opened
 * with MemoryStore, which checks the repository out, configures it and builds the history index.
 *
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
import { MemoryStore } from '../src/store/memory-store';
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

/** Build (once; cached by directory) a store of `commits` agent calls over `files` files. */
export async function ensureStore(dir: string, commits: number, files: number, log: (m: string) => void): Promise<void> {
  const done = `${dir}.complete`; // beside the store: inside it, git would see an untracked file
  if (fs.existsSync(done)) return;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const began = Date.now();
  if (commits === 0) {
    const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
    await store.close();
    fs.writeFileSync(done, '');
    return;
  }
  const run = spawnSync('git', ['init', '-q', '-b', 'main', dir]);
  if (run.status !== 0) throw new Error(`git init: ${run.stderr}`);
  // Mark it as a memgit store (the fast-import below writes memgit's commit format), so that
  // MemoryStore.open adopts it and brings its config up to date instead of refusing a foreign repository.
  spawnSync('git', ['-C', dir, 'config', 'memgit.configversion', '0']);
  const streamFile = path.join(dir, '..', `${path.basename(dir)}.fast-import`);
  writeStream(streamFile, commits, files, log);
  log(`  fast-import of ${commits} commits…`);
  const imported = spawnSync('sh', ['-c', `git fast-import --quiet --date-format=raw --depth=50 < "${streamFile}"`], {
    cwd: dir,
    maxBuffer: 64 * 1024 * 1024,
  });
  fs.rmSync(streamFile, { force: true });
  if (imported.status !== 0) throw new Error(`git fast-import: ${imported.stderr}`);
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
  fs.writeFileSync(done, '');
  log(`  built in ${((Date.now() - began) / 1000).toFixed(0)} s`);
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
  data('memgit: initialise store\n');
  emit('M 100644 inline .gitattributes\n');
  data(GITATTRIBUTES);
  emit('M 100644 inline memories/.keep\n');
  data('');
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
    emit(`commit refs/heads/main\nauthor ${person(time)}\ncommitter ${person(time)}\n`);
    data(message);
    if (call === 0) emit('D memories/.keep\n');
    emit(`M 100644 inline ${target}\n`);
    data(content);
    if ((call + 1) % 20_000 === 0) log(`  generated ${call + 1}/${commits} commits`);
  }
  flush();
  fs.closeSync(fd);
}
