import { MEMORY_REPO_ROOT } from '../contract/paths';
import type { DirEntry, MemoryReader, NodeKind, RelPath } from '../contract/types';
import { FILE_MODE, ObjectStore, TreeEntry } from './objects';

/** The repository path of a memory path relative to `/memories` (`a.md` is `memories/a.md`). */
export function toRepoPath(rel: RelPath): string {
  return rel === '' ? MEMORY_REPO_ROOT : `${MEMORY_REPO_ROOT}/${rel}`;
}

/** Virtual `/memories/...` path of a repository path under the memory root. */
export function repoPathToVirtual(repoPath: string): string {
  return `/${repoPath}`;
}

/**
 * The contract's view of the memory in one git tree. Only plain files (mode 100644) and directories are
 * memory; an entry with a symlink, gitlink or executable mode — which memgit never writes — is treated
 * as absent, so nothing planted in history is ever followed.
 */
export class GitTreeReader implements MemoryReader {
  constructor(
    private readonly objects: ObjectStore,
    private readonly rootTree: string,
    private readonly blobSizes: Map<string, number>,
  ) {}

  private async entry(rel: RelPath): Promise<TreeEntry | null> {
    const entry = await this.objects.entryAt(this.rootTree, toRepoPath(rel));
    return entry && kindOf(entry) ? entry : null;
  }

  async kind(rel: RelPath): Promise<NodeKind | null> {
    const entry = await this.entry(rel);
    return entry ? kindOf(entry) : null;
  }

  async readText(rel: RelPath): Promise<string> {
    const entry = await this.entry(rel);
    if (!entry || entry.type !== 'blob') throw new Error(`not a file: ${rel}`);
    const bytes = await this.objects.readBlob(entry.oid);
    this.blobSizes.set(entry.oid, bytes.byteLength);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  async list(rel: RelPath): Promise<DirEntry[]> {
    const entry = await this.entry(rel);
    if (!entry || entry.type !== 'tree') return [];
    const result: DirEntry[] = [];
    for (const child of await this.objects.readTree(entry.oid)) {
      const kind = kindOf(child);
      if (!kind) continue;
      result.push({ name: child.path, kind, size: kind === 'file' ? await this.blobSize(child.oid) : 0 });
    }
    return result;
  }

  private async blobSize(oid: string): Promise<number> {
    let size = this.blobSizes.get(oid);
    if (size === undefined) {
      size = (await this.objects.readBlob(oid)).byteLength;
      this.blobSizes.set(oid, size);
    }
    return size;
  }
}

function kindOf(entry: TreeEntry): NodeKind | null {
  if (entry.type === 'tree') return 'dir';
  if (entry.type === 'blob' && entry.mode === FILE_MODE) return 'file';
  return null;
}
