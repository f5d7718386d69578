import git from 'isomorphic-git';
import type { DurableFs } from './durable-fs';

/**
 * Object-level access to one repository through isomorphic-git: blobs, trees and commits by oid.
 * Git objects are immutable, so trees are cached by oid for the life of the store.
 */

export type EntryType = 'blob' | 'tree' | 'commit';

export interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: EntryType;
}

export const FILE_MODE = '100644';
export const DIR_MODE = '040000';
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const TREE_CACHE_LIMIT = 20_000;

export class ObjectStore {
  /** isomorphic-git's own cache object: shared between calls so packfiles are parsed once. */
  readonly gitCache: object = {};
  private readonly trees = new Map<string, TreeEntry[]>();

  constructor(
    readonly fs: DurableFs,
    readonly gitdir: string,
  ) {}

  private get args() {
    return { fs: this.fs.gitFs, gitdir: this.gitdir, cache: this.gitCache };
  }

  async readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.trees.get(oid);
    if (cached) return cached;
    const { tree } = await git.readTree({ ...this.args, oid });
    const entries = tree as TreeEntry[];
    if (this.trees.size >= TREE_CACHE_LIMIT) this.trees.clear();
    this.trees.set(oid, entries);
    return entries;
  }

  async readBlob(oid: string): Promise<Uint8Array> {
    const { blob } = await git.readBlob({ ...this.args, oid });
    return blob;
  }

  async writeBlob(bytes: Uint8Array): Promise<string> {
    return git.writeBlob({ ...this.args, blob: bytes });
  }

  async writeTree(entries: TreeEntry[]): Promise<string> {
    const oid = await git.writeTree({ ...this.args, tree: entries });
    this.trees.set(oid, entries);
    return oid;
  }

  async readCommit(oid: string) {
    return git.readCommit({ ...this.args, oid });
  }

  async writeCommit(commit: Parameters<typeof git.writeCommit>[0]['commit']): Promise<string> {
    return git.writeCommit({ ...this.args, commit });
  }

  async hashBlob(bytes: Uint8Array): Promise<string> {
    const { oid } = await git.hashBlob({ object: bytes });
    return oid;
  }

  /** The tree entry at a slash-separated repository path, or null. '' is the root itself. */
  async entryAt(rootTree: string, repoPath: string): Promise<TreeEntry | null> {
    let current: TreeEntry = { mode: DIR_MODE, path: '', oid: rootTree, type: 'tree' };
    if (repoPath === '') return current;
    for (const name of repoPath.split('/')) {
      if (current.type !== 'tree') return null;
      const found = (await this.readTree(current.oid)).find((entry) => entry.path === name);
      if (!found) return null;
      current = found;
    }
    return current;
  }
}

/** One file that differs between two trees (null = absent on that side). */
export interface FileChange {
  path: string;
  oldOid: string | null;
  newOid: string | null;
}

/**
 * Files that differ between two trees, descending only into subtrees whose oids differ — a call that
 * touched one file costs a handful of tree reads, whatever the size of the memory.
 */
export async function diffTrees(
  objects: ObjectStore,
  oldTree: string | null,
  newTree: string | null,
  prefix = '',
): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  const oldEntries = oldTree ? await objects.readTree(oldTree) : [];
  const newEntries = newTree ? await objects.readTree(newTree) : [];
  const names = new Set([...oldEntries.map((e) => e.path), ...newEntries.map((e) => e.path)]);
  const changes: FileChange[] = [];
  for (const name of [...names].sort()) {
    const before = oldEntries.find((e) => e.path === name) ?? null;
    const after = newEntries.find((e) => e.path === name) ?? null;
    if (before && after && before.oid === after.oid && before.type === after.type) continue;
    const full = prefix ? `${prefix}/${name}` : name;
    const beforeTree = before?.type === 'tree' ? before.oid : null;
    const afterTree = after?.type === 'tree' ? after.oid : null;
    if (beforeTree || afterTree) changes.push(...(await diffTrees(objects, beforeTree, afterTree, full)));
    const beforeBlob = before && before.type !== 'tree' ? before.oid : null;
    const afterBlob = after && after.type !== 'tree' ? after.oid : null;
    if (beforeBlob !== afterBlob) changes.push({ path: full, oldOid: beforeBlob, newOid: afterBlob });
  }
  return changes;
}

/** Every file below a tree, as repository paths with blob oids. */
export async function listFiles(objects: ObjectStore, tree: string, prefix = ''): Promise<Map<string, TreeEntry>> {
  const files = new Map<string, TreeEntry>();
  for (const entry of await objects.readTree(tree)) {
    const full = prefix ? `${prefix}/${entry.path}` : entry.path;
    if (entry.type === 'tree') {
      for (const [p, e] of await listFiles(objects, entry.oid, full)) files.set(p, e);
    } else {
      files.set(full, entry);
    }
  }
  return files;
}
