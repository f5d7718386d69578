/**
 * Read-only MCP resources: every memory file at HEAD as `memory:///memories/<path>` (each segment
 * percent-encoded), so a client can attach a memory file to a conversation. A URI is turned back into a
 * path by the contract's own path rules, so nothing a resource request names can reach past /memories.
 * The files and their contents are the read model's (src/history/memory-at.ts), as `memgit ls` and
 * `memgit cat` read them.
 */
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { MEMORY_ROOT, resolvePath, toVirtual } from '../contract/paths';
import type { RelPath } from '../contract/types';
import { historyContext, sizeOf } from '../history/context';
import { memoryFilesAt, readFileAt } from '../history/memory-at';
import { currentHead } from '../history/points';
import { type MemoryStore, PathNotFoundError } from '../store';
import { codedError, INVALID_PARAMS, RESOURCE_NOT_FOUND } from './protocol-error';

export const RESOURCE_SCHEME = 'memory://';
/** One page of resources/list. */
export const RESOURCES_PAGE_SIZE = 500;

export function resourceUri(rel: RelPath): string {
  return RESOURCE_SCHEME + toVirtual(rel).split('/').map(encodeURIComponent).join('/');
}

/** `memory:///memories/a%20b.md` → the RelPath `a b.md`, or null when it is not a valid memory path. */
export function relPathOfUri(uri: string): RelPath | null {
  if (!uri.startsWith(RESOURCE_SCHEME)) return null;
  let virtual: string;
  try {
    virtual = uri.slice(RESOURCE_SCHEME.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    return null; // malformed percent-encoding
  }
  const resolved = resolvePath(virtual);
  return resolved.ok ? resolved.rel : null;
}

function mimeTypeOf(rel: RelPath): string {
  return /\.(md|markdown)$/i.test(rel) ? 'text/markdown' : 'text/plain';
}

/** Path segments compared one by one: a folder's files come right after its name (`a/b` before `a.md`). */
function bySegments(a: string[], b: string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return a.length - b.length;
}

/** Every memory file at HEAD, folder by folder, skipping hidden names (`.…`) the memory tool never lists. */
async function listFiles(store: MemoryStore): Promise<Array<{ rel: RelPath; size: number }>> {
  const ctx = historyContext(store);
  const files = (await memoryFilesAt(ctx, await currentHead(ctx)))
    .map((file) => ({ ...file, segments: file.path.slice(MEMORY_ROOT.length + 1).split('/') }))
    .filter((file) => !file.segments.some((name) => name.startsWith('.')))
    .sort((a, b) => bySegments(a.segments, b.segments));
  const listed: Array<{ rel: RelPath; size: number }> = [];
  for (const file of files) listed.push({ rel: file.segments.join('/'), size: await sizeOf(ctx, file.oid) });
  return listed;
}

/** One page of the memory files; `cursor` is the offset where the page starts (as given by the last page). */
export async function listMemoryResources(store: MemoryStore, cursor?: string): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0) throw codedError(INVALID_PARAMS, 'Invalid cursor', 'invalid_cursor');
  const files = await listFiles(store);
  const page = files.slice(start, start + RESOURCES_PAGE_SIZE);
  const resources = page.map(({ rel, size }) => ({
    uri: resourceUri(rel),
    name: toVirtual(rel),
    mimeType: mimeTypeOf(rel),
    size,
  }));
  const next = start + page.length;
  return next < files.length ? { resources, nextCursor: String(next) } : { resources };
}

export async function readMemoryResource(store: MemoryStore, uri: string): Promise<ReadResourceResult> {
  const rel = relPathOfUri(uri);
  if (rel === null || rel === '') throw codedError(RESOURCE_NOT_FOUND, 'Resource not found', 'resource_not_found', { uri });
  const ctx = historyContext(store);
  try {
    const file = await readFileAt(ctx, toVirtual(rel), await currentHead(ctx), { plainOnly: true });
    return { contents: [{ uri, mimeType: mimeTypeOf(rel), text: file.text }] };
  } catch (error) {
    if (error instanceof PathNotFoundError) throw codedError(RESOURCE_NOT_FOUND, 'Resource not found', 'resource_not_found', { uri });
    throw error;
  }
}
