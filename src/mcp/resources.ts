/**
 * Read-only MCP resources: every memory file at HEAD as `memory:///memories/<path>` (each segment
 * percent-encoded), so a client can attach a memory file to a conversation. A URI is turned back into a
 * path by the contract's own path rules, so nothing a resource request names can reach past /memories.
 */
import type { ReadResourceResult, Resource } from '@modelcontextprotocol/sdk/types.js';
import { resolvePath, toVirtual } from '../contract/paths';
import type { MemoryReader, RelPath } from '../contract/types';
import type { MemoryStore } from '../store/memory-store';
import { INVALID_PARAMS, protocolError, RESOURCE_NOT_FOUND } from './protocol-error';

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

/** Every file below `dir`, sorted, skipping the hidden names the memory tool never shows (`.keep`). */
async function listFiles(reader: MemoryReader, dir: RelPath, into: Array<{ rel: RelPath; size: number }>): Promise<void> {
  const entries = (await reader.list(dir)).filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.kind === 'dir') await listFiles(reader, rel, into);
    else into.push({ rel, size: entry.size });
  }
}

async function headReader(store: MemoryStore): Promise<MemoryReader> {
  return store.readerAt(await store.refreshHead());
}

/** One page of the memory files; `cursor` is the offset where the page starts (as given by the last page). */
export async function listMemoryResources(store: MemoryStore, cursor?: string): Promise<{ resources: Resource[]; nextCursor?: string }> {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isSafeInteger(start) || start < 0) throw protocolError(INVALID_PARAMS, 'Invalid cursor');
  const files: Array<{ rel: RelPath; size: number }> = [];
  await listFiles(await headReader(store), '', files);
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
  const reader = await headReader(store);
  if (rel === null || rel === '' || (await reader.kind(rel)) !== 'file') {
    throw protocolError(RESOURCE_NOT_FOUND, 'Resource not found', { uri });
  }
  return { contents: [{ uri, mimeType: mimeTypeOf(rel), text: await reader.readText(rel) }] };
}
