/**
 * Stores that attack the audit UI's resources, built through the memory tool (and, for ids older
 * stores may hold, one commit written with isomorphic-git as an older memgit would have): a 1 MiB file
 * of half a million lines changed one line per revision, files of zero-width spaces in one session, and
 * a call whose tool_use id spells another call's commit id.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as git from 'isomorphic-git';
import * as path from 'node:path';
import { formatCommitMessage } from '../../src/store/commit-message';
import { MemoryStore } from '../../src/store/memory-store';
import { GITATTRIBUTES } from '../../src/store/repo-config';

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

/** One commit of `fastImportStore`: a call (title = tool_use id) and the files it writes (null deletes). */
export interface ForgedCall {
  toolUseId: string;
  session: string;
  command: string;
  path: string;
  files: Record<string, string | null>;
}

/**
 * A store of many calls, written at once with `git fast-import` (the real git CLI) in memgit's commit
 * format — the initialise commit, then one commit per call with its trailers — and opened with
 * MemoryStore, which adopts it and builds its history index. Thousands of calls in seconds, where the
 * memory tool would take minutes. `calls` is a generator so that large histories are never held whole.
 */
export async function fastImportStore(dir: string, calls: Iterable<ForgedCall>): Promise<MemoryStore> {
  fs.mkdirSync(dir, { recursive: true });
  const init = spawnSync('git', ['init', '-q', '-b', 'main', dir]);
  if (init.status !== 0) throw new Error(`git init: ${init.stderr}`);
  spawnSync('git', ['-C', dir, 'config', 'memgit.configversion', '0']); // a memgit store: open adopts it
  const stream = path.join(dir, '..', `${path.basename(dir)}.fast-import`);
  const fd = fs.openSync(stream, 'w');
  const emit = (text: string) => fs.writeSync(fd, text);
  const data = (text: string) => emit(`data ${Buffer.byteLength(text, 'utf8')}\n${text}\n`);
  const base = 1_750_000_000;
  let time = base;
  const person = () => `memgit <memgit@localhost> ${time} +0000`;
  emit(`commit refs/heads/main\nauthor ${person()}\ncommitter ${person()}\n`);
  data('memgit: initialise store\n');
  emit('M 100644 inline .gitattributes\n');
  data(GITATTRIBUTES);
  emit('M 100644 inline memories/.keep\n');
  data('');
  let first = true;
  for (const call of calls) {
    time += 1;
    emit(`commit refs/heads/main\nauthor ${person()}\ncommitter ${person()}\n`);
    data(formatCommitMessage({ title: call.toolUseId, command: call.command, path: call.path, session: call.session }));
    if (first) emit('D memories/.keep\n');
    first = false;
    for (const [file, content] of Object.entries(call.files)) {
      if (content === null) emit(`D ${file}\n`);
      else {
        emit(`M 100644 inline ${file}\n`);
        data(content);
      }
    }
  }
  fs.closeSync(fd);
  const imported = spawnSync('sh', ['-c', `git fast-import --quiet --date-format=raw --depth=50 < "${stream}"`], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
  fs.rmSync(stream, { force: true });
  if (imported.status !== 0) throw new Error(`git fast-import: ${imported.stderr}`);
  return MemoryStore.open(dir, { fsync: false, log: () => undefined, autoGcLooseObjects: 0, flags: false, replicate: false });
}

export const LONG_SESSION = 'sess_long';

/**
 * A session of `calls` calls interleaved with as many calls of another session on the same file of
 * `lines` lines (the long session edits the first half, the other the second half): rolling the long
 * session back is a three-way merge per call against a file that later calls changed.
 */
export function* longSessionCalls(calls: number, lines: number): Generator<ForgedCall> {
  const file = 'memories/shared.md';
  const text = Array.from({ length: lines }, (_, k) => `line ${k}: something to remember`);
  yield { toolUseId: 'toolu_long_init', session: 'sess_setup', command: 'create', path: `/${file}`, files: { [file]: `${text.join('\n')}\n` } };
  const half = Math.floor(lines / 2);
  for (let k = 0; k < calls; k++) {
    text[k % half] = `line ${k % half}: changed by the long session, call ${k}`;
    yield { toolUseId: `toolu_long_${k}`, session: LONG_SESSION, command: 'str_replace', path: `/${file}`, files: { [file]: `${text.join('\n')}\n` } };
    text[half + (k % (lines - half))] = `line ${half + (k % (lines - half))}: changed by the other session, call ${k}`;
    yield { toolUseId: `toolu_other_${k}`, session: 'sess_other', command: 'str_replace', path: `/${file}`, files: { [file]: `${text.join('\n')}\n` } };
  }
}

/**
 * `calls` calls over `files` files of about `bytes` bytes each (the first `files` create them, later ones
 * rewrite one line of one file), in sessions of 50 calls: a long history to reset across.
 */
export function* manyFileCalls(calls: number, files: number, bytes: number): Generator<ForgedCall> {
  const lineCount = Math.max(1, Math.floor(bytes / 40));
  const texts: string[][] = [];
  for (let k = 0; k < calls; k++) {
    const f = k < files ? k : (k * 7919) % files;
    if (k < files) texts[f] = Array.from({ length: lineCount }, (_, i) => `file ${f} line ${i}: a fact worth keeping`);
    else texts[f][k % lineCount] = `file ${f} line ${k % lineCount}: rewritten by call ${k}`;
    const file = `memories/many/f${String(f).padStart(5, '0')}.md`;
    yield { toolUseId: `toolu_many_${k}`, session: `sess_many_${Math.floor(k / 50)}`, command: k < files ? 'create' : 'str_replace', path: `/${file}`, files: { [file]: `${texts[f].join('\n')}\n` } };
  }
}
