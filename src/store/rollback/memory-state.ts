import { MEMORY_REPO_ROOT } from '../../contract/paths';
import { DIR_MODE, FILE_MODE, listFiles, ObjectStore, TreeEntry } from '../objects';
import { KEEP_FILE } from '../tree-draft';

/**
 * The memory as a flat map of repository paths (`memories/a/b.md`, `.keep` placeholders included) to
 * blobs. Rollback plans edit this map; only when a plan is committed are blobs and trees written, and
 * directories whose entries did not change keep their old tree oids.
 */

export interface FileValue {
  oid: string;
  mode: string;
  /** Content not yet in the object store (a merge result); written when the plan is committed. */
  text?: string;
}

export type MemoryFiles = Map<string, FileValue>;

export async function readMemoryFiles(objects: ObjectStore, rootTree: string): Promise<MemoryFiles> {
  const files: MemoryFiles = new Map();
  const memories = await objects.entryAt(rootTree, MEMORY_REPO_ROOT);
  if (!memories || memories.type !== 'tree') return files;
  for (const [p, entry] of await listFiles(objects, memories.oid, MEMORY_REPO_ROOT)) files.set(p, { oid: entry.oid, mode: entry.mode });
  return files;
}

export function isKeep(repoPath: string): boolean {
  return repoPath === KEEP_FILE || repoPath.endsWith(`/${KEEP_FILE}`);
}

function parentDir(repoPath: string): string {
  const slash = repoPath.lastIndexOf('/');
  return slash < 0 ? '' : repoPath.slice(0, slash);
}

/**
 * The `.keep` rule of the store: an empty directory holds only `.keep`, a non-empty one none. A
 * directory left with nothing at all (not even `.keep`) simply disappears; the memory root is never
 * empty.
 */
export function normaliseKeeps(files: MemoryFiles, keepOid: string): void {
  const nonEmpty = new Set<string>();
  for (const p of files.keys()) {
    // A placeholder makes the directories above its own non-empty; a file, its own directory too.
    let dir = isKeep(p) ? parentDir(parentDir(p)) : parentDir(p);
    for (; dir !== ''; dir = parentDir(dir)) nonEmpty.add(dir);
  }
  for (const p of [...files.keys()]) if (isKeep(p) && nonEmpty.has(parentDir(p))) files.delete(p);
  if (files.size === 0) files.set(`${MEMORY_REPO_ROOT}/${KEEP_FILE}`, { oid: keepOid, mode: FILE_MODE });
}

interface DirBuild {
  files: Map<string, FileValue>;
  dirs: Map<string, DirBuild>;
}

/**
 * Write the `memories/` tree for `files`, reusing `previousTree`'s subtrees where nothing changed.
 * Returns the new tree oid.
 */
export async function writeMemoryTree(objects: ObjectStore, files: MemoryFiles, previousTree: string | null): Promise<string> {
  const root: DirBuild = { files: new Map(), dirs: new Map() };
  const prefix = `${MEMORY_REPO_ROOT}/`;
  for (const [p, value] of files) {
    if (!p.startsWith(prefix)) throw new Error(`rollback: ${p} is outside ${MEMORY_REPO_ROOT}/`);
    const names = p.slice(prefix.length).split('/');
    let node = root;
    for (const name of names.slice(0, -1)) {
      let child = node.dirs.get(name);
      if (!child) node.dirs.set(name, (child = { files: new Map(), dirs: new Map() }));
      node = child;
    }
    node.files.set(names[names.length - 1], value);
  }
  return writeDir(objects, root, previousTree);
}

async function writeDir(objects: ObjectStore, node: DirBuild, previous: string | null): Promise<string> {
  const previousEntries = previous ? await objects.readTree(previous) : [];
  const entries: TreeEntry[] = [];
  for (const [name, child] of node.dirs) {
    const old = previousEntries.find((e) => e.path === name && e.type === 'tree');
    entries.push({ mode: DIR_MODE, path: name, oid: await writeDir(objects, child, old?.oid ?? null), type: 'tree' });
  }
  for (const [name, value] of node.files) {
    const oid = value.text !== undefined ? await objects.writeBlob(Buffer.from(value.text, 'utf8')) : value.oid;
    entries.push({ mode: value.mode, path: name, oid, type: 'blob' });
  }
  if (previous && sameEntries(entries, previousEntries)) return previous;
  return objects.writeTree(entries);
}

function sameEntries(x: TreeEntry[], y: TreeEntry[]): boolean {
  if (x.length !== y.length) return false;
  const byName = new Map(y.map((e) => [e.path, e]));
  return x.every((e) => {
    const other = byName.get(e.path);
    return other !== undefined && other.oid === e.oid && other.mode === e.mode && other.type === e.type;
  });
}
