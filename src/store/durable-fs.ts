import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import { isProcessAlive } from './process-alive';

/**
 * The file system handed to isomorphic-git and used for the working tree.
 *
 * isomorphic-git writes objects, refs and the index in place, with no lock file and no fsync: a crash in
 * the middle of a write leaves a truncated object or an empty ref. Here every writeFile goes to a
 * temporary file that is fsynced and then renamed over the target, so a reader only ever sees the old or
 * the new bytes. The directories that received a rename are remembered so that `flush()` can fsync them
 * (in parallel) before the ref that makes the new objects reachable moves.
 */

export const TEMP_MARKER = '.memgit-tmp-';

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

  /** The object isomorphic-git expects: an `fs` with an enumerable `promises` property. */
  readonly gitFs: { promises: typeof nodeFs.promises };

  constructor(options: DurableFsOptions = {}) {
    this.fsync = options.fsync ?? true;
    const promises: typeof nodeFs.promises = Object.create(nodeFs.promises);
    promises.writeFile = ((file: string, data: WriteData, options?: WriteOptions) =>
      this.writeFile(file, data, options)) as typeof nodeFs.promises.writeFile;
    this.gitFs = { promises };
  }

  /** Atomically replace `file` with `data`: temp file, fsync, rename. */
  async writeFile(file: string, data: WriteData, options?: WriteOptions): Promise<void> {
    const mode = typeof options === 'object' && options?.mode ? options.mode & 0o777 : 0o644;
    const encoding = typeof options === 'string' ? options : (options?.encoding ?? 'utf8');
    const bytes = typeof data === 'string' ? Buffer.from(data, encoding) : data;
    const dir = path.dirname(file);
    const temp = path.join(dir, `${TEMP_MARKER}${process.pid}-${++tempCounter}`);
    const handle = await nodeFs.promises.open(temp, 'wx', mode);
    try {
      await handle.writeFile(bytes);
      if (this.fsync) await handle.sync();
    } catch (error) {
      await handle.close();
      await nodeFs.promises.rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    try {
      await nodeFs.promises.rename(temp, file);
    } catch (error) {
      await nodeFs.promises.rm(temp, { force: true });
      throw error;
    }
    this.touchedDirs.add(dir);
  }

  /** Make every rename done since the last flush durable. */
  async flush(): Promise<void> {
    const dirs = [...this.touchedDirs];
    this.touchedDirs.clear();
    if (!this.fsync) return;
    await Promise.all(dirs.map((dir) => syncDir(dir)));
  }
}

export async function syncDir(dir: string): Promise<void> {
  let handle: nodeFs.promises.FileHandle | undefined;
  try {
    handle = await nodeFs.promises.open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // A directory removed meanwhile has nothing left to make durable.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  } finally {
    await handle?.close();
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
