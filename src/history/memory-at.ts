import { blobText, isMemoryFile } from '../store/commit-diff';
import { PathNotFoundError } from '../store/errors';
import type { HistoryEntry } from '../store/history-index';
import type { MemoryStore } from '../store/memory-store';
import { listFiles } from '../store/objects';
import { KEEP_FILE } from '../store/tree-draft';

/**
 * The memory as it was at a point: one file's content (`memgit cat`) or the files below a path
 * (`memgit ls`), read from that commit's tree. Paths are validated virtual paths (`/memories/...`).
 */

export interface MemoryListing {
  /** Virtual path; directories end without a slash. */
  path: string;
  type: 'file' | 'directory';
  /** Bytes, for files. */
  size: number | null;
  /** Blob or tree id. */
  oid: string;
}

export async function readFileAt(store: MemoryStore, virtualPath: string, at: HistoryEntry): Promise<{ text: string; oid: string; size: number }> {
  const entry = await store.objects.entryAt(await store.commitTree(at.commit), virtualPath.slice(1));
  const where = `at ${describePoint(at)}`;
  if (!entry) throw new PathNotFoundError(`memgit: ${virtualPath} does not exist ${where}`);
  if (entry.type !== 'blob' || virtualPath === '/memories') throw new PathNotFoundError(`memgit: ${virtualPath} is a directory ${where} (memgit ls lists it)`);
  const text = await blobText(store.objects, entry.oid);
  return { text, oid: entry.oid, size: Buffer.byteLength(text, 'utf8') };
}

/** Every file below `virtualPath` (or that file itself), and every empty directory, sorted by path. */
export async function listAt(store: MemoryStore, virtualPath: string, at: HistoryEntry): Promise<MemoryListing[]> {
  const repoPath = virtualPath.slice(1);
  const entry = await store.objects.entryAt(await store.commitTree(at.commit), repoPath);
  if (!entry) throw new PathNotFoundError(`memgit: ${virtualPath} does not exist at ${describePoint(at)}`);
  if (entry.type === 'blob') return [{ path: virtualPath, type: 'file', size: (await store.objects.readBlob(entry.oid)).byteLength, oid: entry.oid }];
  const listing: MemoryListing[] = [];
  for (const [p, file] of await listFiles(store.objects, entry.oid, repoPath)) {
    if (isMemoryFile(p)) {
      listing.push({ path: `/${p}`, type: 'file', size: (await store.objects.readBlob(file.oid)).byteLength, oid: file.oid });
    } else if (p.endsWith(`/${KEEP_FILE}`) && p !== `${repoPath}/${KEEP_FILE}`) {
      // The placeholder of an empty directory: the directory is what the memory tool sees.
      listing.push({ path: `/${p.slice(0, -KEEP_FILE.length - 1)}`, type: 'directory', size: null, oid: file.oid });
    }
  }
  return listing.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** How a point is named in messages: the call's tool_use id, else the commit's title and id. */
export function describePoint(entry: HistoryEntry): string {
  return entry.toolUseId ? `${entry.toolUseId} (commit ${entry.commit.slice(0, 12)})` : `commit ${entry.commit.slice(0, 12)}`;
}
