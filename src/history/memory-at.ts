import { MEMORY_ROOT } from '../contract/paths';
import { blobText, isMemoryFile } from '../store/history-index/file-diffs';
import { FILE_MODE, KEEP_FILE, listFiles, PathNotFoundError } from '../store';
import type { HistoryEntry } from '../store/history-index/entry';
import { HistoryContext, sizeOf } from './context';
import { describePoint } from './points';

/**
 * The memory as it was at a point: one file's content (`memgit cat`, the UI's raw files, MCP resources),
 * the files below a path (`memgit ls`), every memory file (the UI's overview and search, MCP's resource
 * list) and one directory (the UI's tree), read from that commit's tree. Paths are validated virtual
 * paths (`/memories/...`).
 */

export { describePoint } from './points';

export interface MemoryListing {
  /** Virtual path; directories end without a slash. */
  path: string;
  type: 'file' | 'directory';
  /** Bytes, for files. */
  size: number | null;
  /** Blob or tree id. */
  oid: string;
}

/** A memory file as the memory tool sees it: a plain file (mode 100644), not a `.keep` placeholder. */
export interface MemoryFile {
  /** Virtual path. */
  path: string;
  oid: string;
}

export interface DirectoryChild {
  name: string;
  kind: 'file' | 'dir';
  oid: string;
}

/**
 * One file's content at a point. With `plainOnly`, only a memory file as the memory tool sees it (mode
 * 100644): an entry memgit never writes (a symlink, a gitlink planted with git) does not exist.
 */
export async function readFileAt(ctx: HistoryContext, virtualPath: string, at: HistoryEntry, options: { plainOnly?: boolean } = {}): Promise<{ text: string; oid: string; size: number }> {
  const entry = await ctx.store.objects.entryAt(await ctx.store.commitTree(at.commit), virtualPath.slice(1));
  const where = `at ${describePoint(at)}`;
  if (!entry || (options.plainOnly && entry.type === 'blob' && entry.mode !== FILE_MODE)) throw new PathNotFoundError(`${virtualPath} does not exist ${where}`);
  if (entry.type !== 'blob' || virtualPath === MEMORY_ROOT) throw new PathNotFoundError(`${virtualPath} is a directory ${where} (memgit ls lists it)`);
  const text = await blobText(ctx.store.objects, entry.oid);
  return { text, oid: entry.oid, size: Buffer.byteLength(text, 'utf8') };
}

/** Every file below `virtualPath` (or that file itself), and every empty directory, sorted by path. */
export async function listAt(ctx: HistoryContext, virtualPath: string, at: HistoryEntry): Promise<MemoryListing[]> {
  const { objects } = ctx.store;
  const repoPath = virtualPath.slice(1);
  const entry = await objects.entryAt(await ctx.store.commitTree(at.commit), repoPath);
  if (!entry) throw new PathNotFoundError(`${virtualPath} does not exist at ${describePoint(at)}`);
  if (entry.type === 'blob') return [{ path: virtualPath, type: 'file', size: (await objects.readBlob(entry.oid)).byteLength, oid: entry.oid }];
  const listing: MemoryListing[] = [];
  for (const [p, file] of await listFiles(objects, entry.oid, repoPath)) {
    if (isMemoryFile(p)) {
      listing.push({ path: `/${p}`, type: 'file', size: (await objects.readBlob(file.oid)).byteLength, oid: file.oid });
    } else if (p.endsWith(`/${KEEP_FILE}`) && p !== `${repoPath}/${KEEP_FILE}`) {
      // The placeholder of an empty directory: the directory is what the memory tool sees.
      listing.push({ path: `/${p.slice(0, -KEEP_FILE.length - 1)}`, type: 'directory', size: null, oid: file.oid });
    }
  }
  return listing.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Every memory file at a point, in path order. */
export async function memoryFilesAt(ctx: HistoryContext, at: HistoryEntry): Promise<MemoryFile[]> {
  return [...(await listFiles(ctx.store.objects, await ctx.store.commitTree(at.commit)))]
    .filter(([repoPath, entry]) => isMemoryFile(repoPath) && entry.mode === FILE_MODE)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([repoPath, entry]) => ({ path: `/${repoPath}`, oid: entry.oid }));
}

/** The directory at a virtual path at a point: its subdirectories first, then its memory files, by name; null when it is not a directory then. */
export async function directoryAt(ctx: HistoryContext, virtualDir: string, at: HistoryEntry): Promise<DirectoryChild[] | null> {
  const { objects } = ctx.store;
  const node = await objects.entryAt(await ctx.store.commitTree(at.commit), virtualDir.slice(1));
  if (!node || node.type !== 'tree') return null;
  const children = (await objects.readTree(node.oid)).filter((e) => e.path !== KEEP_FILE && (e.type === 'tree' || e.mode === FILE_MODE));
  children.sort((a, b) => (a.type === b.type ? (a.path < b.path ? -1 : 1) : a.type === 'tree' ? -1 : 1));
  return children.map((e) => ({ name: e.path, kind: e.type === 'tree' ? 'dir' : 'file', oid: e.oid }));
}

/**
 * A file's size in bytes: from the history index when `lastChange` (the commit that last wrote it) wrote
 * this very blob (its facts recorded the size), else from the blob.
 */
export async function fileSize(ctx: HistoryContext, virtualPath: string, oid: string, lastChange: HistoryEntry | undefined): Promise<number> {
  const repoPath = virtualPath.slice(1);
  if (lastChange && lastChange.changes.some((c) => c.path === repoPath && c.newOid === oid)) {
    const size = await ctx.store.history.sizeWritten(lastChange, repoPath);
    if (size !== null) return size;
  }
  return sizeOf(ctx, oid);
}
