import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { isProcessAlive } from './process-alive';

/**
 * The file system handed to isomorphic-git and used for the working tree.
 *
 * isomorphic-git writes objects, refs and the index in place, with no lock file and no fsync: a crash in
 * the middle of a write leaves a truncated object or an empty ref. Here every writeFile goes to a
 * temporary file that is fsynced and then renamed over the target, so a reader only ever sees the old or
 * the new bytes. The directories that received a rename are remembered so that `flush()` can fsync them
 * (in parallel) before the ref that makes the new objects reachable moves.
 *
 * Three things make a call cheaper without weakening that, all decided here rather than in git code:
 * - Loose objects isomorphic-git writes are staged in memory (and served from there to its reads) and
 *   written together by the next `flush()`: temp files written and fsynced in parallel, then renamed.
 *   Nothing refers to a new object before the ref moves, and the ref moves only after that flush.
 * - `writeFileAfterFlush(file, data)` (the ref): its temp file is written and fsynced with the objects,
 *   but renamed into place only once their flush has succeeded, and never if it failed.
 * - `deferringSync(write)`: files written meanwhile (the working tree's index) are renamed into place
 *   without an fsync; the caller fsyncs them all in one round (`syncDeferred`) while its transaction
 *   marker still says that the projection must be rebuilt after a crash.
 */

export const TEMP_MARKER = '.memgit-tmp-';

/** A loose object's path: .../objects/xx/<38 hex digits>. */
const NO_PATH = new TypeError('readFile needs a path');

const LOOSE_OBJECT = /[\\/]objects[\\/][0-9a-f]{2}[\\/][0-9a-f]{38}$/;

/**
 * The answer to a read of a loose object that is not there. isomorphic-git looks for every object loose
 * before it looks in the packs, and its FileSystem.read catches any error and returns null, so nothing
 * ever looks at this error beyond its code. One object, built once without a stack: constructing an Error
 * (capturing a stack) per miss cost more than the miss itself when a packed history is read.
 */
const NO_LOOSE_OBJECT: NodeJS.ErrnoException = (() => {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return Object.freeze(Object.assign(new Error('ENOENT: no such loose object'), { code: 'ENOENT', errno: -2, syscall: 'open' }));
  } finally {
    Error.stackTraceLimit = limit;
  }
})();

let tempCounter = 0;

export interface DurableFsOptions {
  /** fsync files and directories (default true). Off only for throwaway stores, e.g. benchmark setup. */
  fsync?: boolean;
}

type WriteData = string | Uint8Array;
type WriteOptions = BufferEncoding | { encoding?: BufferEncoding | null; mode?: number } | undefined;

export class DurableFs {
  readonly fsync: boolean;
  private readonly touchedDirs = new Set<string>();
  /** Files staged by `stage()`, written (all at once) by the next `flush()`. */
  private readonly staged = new Map<string, { data: Uint8Array; mode: number }>();

  /** Set by `deferringSync`: isomorphic-git's writes are renamed unsynced and listed in `deferred`. */
  private deferSync = false;
  private readonly deferred = new Set<string>();

  /** The object isomorphic-git expects: an `fs` with an enumerable `promises` property. */
  readonly gitFs: { promises: typeof nodeFs.promises };

  constructor(options: DurableFsOptions = {}) {
    this.fsync = options.fsync ?? true;
    const promises: typeof nodeFs.promises = Object.create(nodeFs.promises);
    promises.writeFile = ((file: string, data: WriteData, options?: WriteOptions) =>
      this.gitWrite(file, data, options)) as typeof nodeFs.promises.writeFile;
    promises.readFile = ((file: string, options?: BufferEncoding | { encoding?: BufferEncoding | null }) =>
      this.gitRead(file, options)) as typeof nodeFs.promises.readFile;
    // isomorphic-git stats the gitdir and lists objects/pack on every object it reads: metadata in the page
    // cache, answered synchronously in microseconds rather than by a round trip through libuv's thread pool.
    promises.stat = (async (file: string, options?: nodeFs.StatOptions) => nodeFs.statSync(file, options)) as typeof nodeFs.promises.stat;
    promises.lstat = (async (file: string, options?: nodeFs.StatOptions) => nodeFs.lstatSync(file, options)) as typeof nodeFs.promises.lstat;
    promises.mkdir = ((dir: string, options?: nodeFs.MakeDirectoryOptions) =>
      nodeFs.promises.mkdir(dir, { ...options, mode: DIR_MODE })) as typeof nodeFs.promises.mkdir;
    promises.readdir = (async (file: string, options?: BufferEncoding) => nodeFs.readdirSync(file, options)) as typeof nodeFs.promises.readdir;
    this.gitFs = { promises };
  }

  /** Every write isomorphic-git makes comes here. */
  private async gitWrite(file: string, data: WriteData, options?: WriteOptions): Promise<void> {
    if (LOOSE_OBJECT.test(file)) {
      // Objects are named by their content: staging one twice (isomorphic-git only checks the disk) is harmless.
      this.stage(file, typeof data === 'string' ? Buffer.from(data) : data, OBJECT_MODE);
    } else if (this.deferSync) {
      await this.replace(file, data, options, false, Promise.resolve());
      this.deferred.add(file);
    } else {
      await this.replace(file, data, options, this.fsync, Promise.resolve());
    }
  }

  /**
   * isomorphic-git reads an object it has just written (staged, not yet on disk) from memory. Loose
   * objects are read synchronously: isomorphic-git looks for every object loose before it looks in the
   * packs, and a miss through the thread pool (with an error built for it) costs more than the lookup
   * itself — reading a packed history would otherwise wait on one round trip per object.
   */
  private async gitRead(file: string, options?: BufferEncoding | { encoding?: BufferEncoding | null }): Promise<string | Buffer> {
    // isomorphic-git probes every fs it wraps (once per API call) with readFile(): answer without node's path checks.
    if (typeof file !== 'string') throw NO_PATH;
    const encoding = typeof options === 'string' ? options : options?.encoding;
    const staged = this.staged.get(file);
    if (staged) {
      const bytes = Buffer.from(staged.data);
      return encoding ? bytes.toString(encoding) : bytes;
    }
    if (!LOOSE_OBJECT.test(file)) return nodeFs.promises.readFile(file, options);
    if (!nodeFs.existsSync(file)) throw NO_LOOSE_OBJECT;
    const bytes = nodeFs.readFileSync(file);
    return encoding ? bytes.toString(encoding) : bytes;
  }

  /**
   * Atomically replace `file` (a ref) once the staged objects it names are flushed: its temp file is
   * created before the flush starts, so that its fsync joins the objects' round (see writeStaged), and
   * removed unrenamed if either fails. The rename is done here, by the caller's own await, so nothing can
   * move the file after the caller has seen a failure.
   */
  async writeFileAfterFlush(file: string, data: WriteData): Promise<void> {
    const temp = this.tempFor(file);
    // Created before flush() starts fsyncing; if this throws, the staged objects are the caller's to discard.
    const fd = createTemp(temp, toBytes(data, undefined), FILE_MODE);
    const [tempResult, flushResult] = await Promise.allSettled([finishTemp(fd, this.fsync), this.flush()]);
    for (const result of [tempResult, flushResult]) {
      if (result.status === 'rejected') {
        nodeFs.rmSync(temp, { force: true });
        throw result.reason;
      }
    }
    this.renameInto(temp, file);
  }

  /**
   * Forget objects staged by a call that failed before they were flushed (nothing refers to them) and
   * the directories it would have fsynced: the next call starts from what is on disk.
   */
  discardStaged(): void {
    this.staged.clear();
    this.touchedDirs.clear();
  }

  /** Run `write` with isomorphic-git's writes renamed unsynced; `syncDeferred()` makes them durable. */
  async deferringSync<T>(write: () => Promise<T>): Promise<T> {
    this.deferSync = true;
    try {
      return await write();
    } finally {
      this.deferSync = false;
    }
  }

  /** fsync the files written under `deferringSync` (plus `extra` files) and their directories, in one round. */
  async syncDeferred(extra: string[] = []): Promise<void> {
    const files = [...this.deferred, ...extra];
    this.deferred.clear();
    const dirs = new Set(files.map((file) => path.dirname(file)));
    for (const dir of dirs) this.touchedDirs.delete(dir); // fsynced here: the next flush need not again
    if (!this.fsync) return;
    await Promise.all([...files, ...dirs].map((target) => syncDir(target)));
  }

  /** Atomically replace `file` with `data`: temp file, fsync, rename. */
  async writeFile(file: string, data: WriteData, options?: WriteOptions): Promise<void> {
    await this.replace(file, data, options, this.fsync, Promise.resolve());
  }

  /**
   * Replace `file` by rename without fsyncing its data: for working-tree files, which the caller fsyncs
   * (syncDir works on files too) together with the index, all before the transaction marker goes.
   */
  async writeFileUnsynced(file: string, data: WriteData): Promise<void> {
    await this.replace(file, data, undefined, false, Promise.resolve());
  }

  private async replace(file: string, data: WriteData, options: WriteOptions, sync: boolean, before: Promise<unknown>): Promise<void> {
    // Owner-only whatever the umask (which can only take bits away): another local user must not be able
    // to read the memory, plant a hook or move a ref.
    const mode = typeof options === 'object' && options?.mode ? options.mode & FILE_MODE : FILE_MODE;
    const temp = this.tempFor(file);
    const written = writeTemp(temp, toBytes(data, options), mode, sync);
    const [tempResult, beforeResult] = await Promise.allSettled([written, before]);
    for (const result of [tempResult, beforeResult]) {
      if (result.status === 'rejected') {
        nodeFs.rmSync(temp, { force: true });
        throw result.reason;
      }
    }
    this.renameInto(temp, file);
  }

  private tempFor(file: string): string {
    return path.join(path.dirname(file), `${TEMP_MARKER}${process.pid}-${++tempCounter}`);
  }

  private renameInto(temp: string, file: string): void {
    try {
      nodeFs.renameSync(temp, file);
    } catch (error) {
      nodeFs.rmSync(temp, { force: true });
      throw error;
    }
    this.touchedDirs.add(path.dirname(file));
  }

  /**
   * Queue an atomic write of a file that nobody reads until the next `flush()` (git objects of one call:
   * nothing refers to them before the ref moves). Staged files are written together — temp files written
   * and fsynced in parallel, then renamed — which costs about one fsync's latency instead of one per file.
   */
  stage(file: string, data: Uint8Array, mode = FILE_MODE): void {
    this.staged.set(file, { data, mode });
  }

  /** Have the next flush() fsync `dir` too, making a file created there by a plain write durable. */
  syncDirOnFlush(dir: string): void {
    this.touchedDirs.add(dir);
  }

  isStaged(file: string): boolean {
    return this.staged.has(file);
  }

  /** Write the staged files, then make every rename done since the last flush durable. */
  async flush(): Promise<void> {
    if (this.staged.size > 0) await this.writeStaged();
    const dirs = [...this.touchedDirs];
    this.touchedDirs.clear();
    if (!this.fsync) return;
    await Promise.all(dirs.map((dir) => syncDir(dir)));
  }

  /**
   * Temp files first, renames only once all of them are durable, so a crash leaves every target either
   * absent or whole: a torn loose object that a later call would find "already there" and reuse can never
   * appear. Every temp file is created and filled before any of them is fsynced: creating a file waits
   * for a journal commit in flight (ext4), so creates interleaved with fsyncs would take one commit each,
   * where this takes one for the whole batch.
   */
  private async writeStaged(): Promise<void> {
    const batch = [...this.staged];
    this.staged.clear();
    const temps: Array<{ temp: string; file: string; fd: number | null }> = [];
    try {
      // In chunks, so that a rewrite staging thousands of objects (a redaction) holds a bounded number of
      // descriptors; a call's handful of objects is one chunk.
      for (let i = 0; i < batch.length; i += STAGED_WRITE_CONCURRENCY) {
        const chunk: typeof temps = [];
        for (const [file, { data, mode }] of batch.slice(i, i + STAGED_WRITE_CONCURRENCY)) {
          const slot: { temp: string; file: string; fd: number | null } = { temp: this.tempFor(file), file, fd: null };
          temps.push(slot);
          chunk.push(slot);
          slot.fd = this.createInDir(slot.temp, data, mode);
        }
        await Promise.all(
          chunk.map(async (slot) => {
            const fd = slot.fd!;
            slot.fd = null;
            await finishTemp(fd, this.fsync);
          }),
        );
      }
      for (const { temp, file } of temps) nodeFs.renameSync(temp, file);
    } catch (error) {
      for (const { temp, fd } of temps) {
        if (fd !== null) closeQuietly(fd);
        nodeFs.rmSync(temp, { force: true });
      }
      throw error;
    }
    for (const { file } of temps) this.touchedDirs.add(path.dirname(file));
  }

  /** Create a temp file in a folder that may not exist yet (a new objects/xx): made on the first ENOENT. */
  private createInDir(temp: string, data: Uint8Array, mode: number): number {
    try {
      return createTemp(temp, data, mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.ensureDir(path.dirname(temp));
      return createTemp(temp, data, mode);
    }
  }

  /** mkdir -p; a directory created here is a new entry in its parent, which must be fsynced too. */
  private ensureDir(dir: string): void {
    const created = nodeFs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    if (!created) return;
    for (let d = dir; ; d = path.dirname(d)) {
      this.touchedDirs.add(path.dirname(d));
      if (d === created || d === path.dirname(d)) break;
    }
  }
}

const STAGED_WRITE_CONCURRENCY = 32;

/** Modes of everything memgit creates in a store (before the umask, which can only narrow them). */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
const OBJECT_MODE = 0o400;

// Looked up at each call rather than bound once, so that an fs patched later (fault-injection tests) is seen.
const fsyncFd = (fd: number) => promisify(nodeFs.fsync)(fd);

/**
 * Create `temp` with `bytes`, fsynced if `sync`. The open and the write are synchronous: they only reach
 * the page cache, in microseconds, and a round trip through libuv's thread pool costs more than that.
 * The fsync, which waits for the disk, runs on the pool so that a call's fsyncs overlap.
 */
async function writeTemp(temp: string, bytes: Uint8Array, mode: number, sync: boolean): Promise<void> {
  await finishTemp(createTemp(temp, bytes, mode), sync);
}

/** Create `temp` and write `bytes` into it; returns the open descriptor (closed if the write fails). */
function createTemp(temp: string, bytes: Uint8Array, mode: number): number {
  const fd = nodeFs.openSync(temp, 'wx', mode);
  try {
    for (let offset = 0; offset < bytes.byteLength; ) offset += nodeFs.writeSync(fd, bytes, offset);
  } catch (error) {
    closeQuietly(fd);
    throw error;
  }
  return fd;
}

/** fsync (if `sync`) and close a descriptor from createTemp; it is closed whatever happens. */
async function finishTemp(fd: number, sync: boolean): Promise<void> {
  try {
    if (sync) await fsyncFd(fd);
  } finally {
    nodeFs.closeSync(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    nodeFs.closeSync(fd);
  } catch {
    // already failing: the first error is the one reported
  }
}

function toBytes(data: WriteData, options: WriteOptions): Uint8Array {
  const encoding = typeof options === 'string' ? options : (options?.encoding ?? 'utf8');
  return typeof data === 'string' ? Buffer.from(data, encoding) : data;
}

export async function syncDir(dir: string): Promise<void> {
  try {
    await syncFile(dir);
  } catch (error) {
    // A directory removed meanwhile has nothing left to make durable.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** fsync what is already at `file` (a file written by someone else, or a directory), by its path. */
export async function syncFile(file: string): Promise<void> {
  const handle = await nodeFs.promises.open(file, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Remove temp files a killed writer left behind, below `dir` (not following symlinks). A live process's
 * temp files (the pid is in the name) are in flight and left alone, so this is safe at any time.
 */
export async function removeStaleTempFiles(dir: string): Promise<string[]> {
  const removed: string[] = [];
  async function walk(current: string): Promise<void> {
    let entries: nodeFs.Dirent[];
    try {
      entries = await nodeFs.promises.readdir(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.name.startsWith(TEMP_MARKER)) {
        const pid = Number(/^(\d+)-/.exec(entry.name.slice(TEMP_MARKER.length))?.[1]);
        if (pid && pid !== process.pid && isProcessAlive(pid)) continue;
        await nodeFs.promises.rm(full, { force: true, recursive: true });
        removed.push(full);
      } else if (entry.isDirectory()) {
        await walk(full);
      }
    }
  }
  await walk(dir);
  return removed;
}
