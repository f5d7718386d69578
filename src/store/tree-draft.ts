import { MEMORY_REPO_ROOT } from '../contract/paths';
import { DIR_MODE, FILE_MODE, ObjectStore, TreeEntry } from './objects';

/**
 * A copy-on-write edit of one tree. Only the directories along edited paths are loaded and rewritten;
 * everything else keeps its oid. `write()` produces the new root tree bottom-up.
 *
 * Empty directories are kept alive with a `.keep` placeholder, and a directory that has other entries
 * carries none: the placeholder is normalised in every directory an edit touched.
 */

export const KEEP_FILE = '.keep';

interface DirNode {
  entries: Map<string, TreeEntry>;
  children: Map<string, DirNode>;
  dirty: boolean;
}

export class TreeDraft {
  private readonly root: Promise<DirNode>;
  private readonly touched = new Set<DirNode>();
  private keepBlobOid: string | null = null;

  constructor(
    private readonly objects: ObjectStore,
    rootTree: string,
  ) {
    this.root = this.load(rootTree);
  }

  private async load(oid: string): Promise<DirNode> {
    const entries = await this.objects.readTree(oid);
    return { entries: new Map(entries.map((e) => [e.path, e])), children: new Map(), dirty: false };
  }

  /** The directory node at `dirPath`, optionally creating missing directories; null if absent. */
  private async dir(dirPath: string, create: boolean): Promise<DirNode | null> {
    let node = await this.root;
    if (dirPath === '') return node;
    for (const name of dirPath.split('/')) {
      let child = node.children.get(name);
      if (!child) {
        let entry = node.entries.get(name);
        if (entry && entry.type !== 'tree') {
          if (!create) return null;
          // A symlink, gitlink or executable entry planted in history is invisible to the contract (see
          // git-reader.ts), so a path through it is a new directory that replaces it. A plain file is a bug.
          if (entry.mode === FILE_MODE) throw new Error(`tree draft: ${dirPath} crosses a file`);
          entry = undefined;
        }
        if (entry) {
          child = await this.load(entry.oid);
        } else {
          if (!create) return null;
          child = { entries: new Map(), children: new Map(), dirty: true };
          node.entries.set(name, { mode: DIR_MODE, path: name, oid: '', type: 'tree' });
          node.dirty = true;
          this.touched.add(node);
          this.touched.add(child);
        }
        node.children.set(name, child);
      }
      node = child;
    }
    return node;
  }

  async entry(repoPath: string): Promise<TreeEntry | null> {
    const { parent, name } = split(repoPath);
    const node = await this.dir(parent, false);
    return node?.entries.get(name) ?? null;
  }

  async writeFile(repoPath: string, bytes: Uint8Array): Promise<void> {
    const oid = await this.objects.writeBlob(bytes);
    const { parent, name } = split(repoPath);
    const node = (await this.dir(parent, true))!;
    node.entries.set(name, { mode: FILE_MODE, path: name, oid, type: 'blob' });
    node.children.delete(name);
    this.markDirty(node);
  }

  async remove(repoPath: string): Promise<void> {
    const { parent, name } = split(repoPath);
    const node = await this.dir(parent, false);
    if (!node || !node.entries.delete(name)) return;
    node.children.delete(name);
    this.markDirty(node);
  }

  async move(fromPath: string, toPath: string): Promise<void> {
    const from = split(fromPath);
    const fromNode = await this.dir(from.parent, false);
    const entry = fromNode?.entries.get(from.name);
    if (!fromNode || !entry) throw new Error(`tree draft: nothing at ${fromPath}`);
    const loadedChild = fromNode.children.get(from.name);
    fromNode.entries.delete(from.name);
    fromNode.children.delete(from.name);
    this.markDirty(fromNode);
    const to = split(toPath);
    const toNode = (await this.dir(to.parent, true))!;
    toNode.entries.set(to.name, { ...entry, path: to.name });
    if (loadedChild) toNode.children.set(to.name, loadedChild);
    this.markDirty(toNode);
  }

  /** Write every changed tree and return the new root tree oid. */
  async write(): Promise<string> {
    const root = await this.root;
    for (const node of this.touched) await this.normaliseKeep(node);
    return this.writeNode(root);
  }

  private markDirty(node: DirNode): void {
    node.dirty = true;
    this.touched.add(node);
  }

  private async normaliseKeep(node: DirNode): Promise<void> {
    if (node === (await this.root)) return; // the repository root holds .gitattributes; never a placeholder
    const others = [...node.entries.keys()].filter((name) => name !== KEEP_FILE);
    if (others.length === 0 && !node.entries.has(KEEP_FILE)) {
      this.keepBlobOid ??= await this.objects.writeBlob(new Uint8Array(0));
      node.entries.set(KEEP_FILE, { mode: FILE_MODE, path: KEEP_FILE, oid: this.keepBlobOid, type: 'blob' });
      node.dirty = true;
    } else if (others.length > 0 && node.entries.delete(KEEP_FILE)) {
      node.dirty = true;
    }
  }

  private async writeNode(node: DirNode): Promise<string> {
    for (const [name, child] of node.children) {
      if (!this.hasDirtyDescendant(child)) continue;
      const oid = await this.writeNode(child);
      node.entries.set(name, { mode: DIR_MODE, path: name, oid, type: 'tree' });
      node.dirty = true;
    }
    node.children.clear();
    node.dirty = false;
    return this.objects.writeTree([...node.entries.values()]);
  }

  private hasDirtyDescendant(node: DirNode): boolean {
    if (node.dirty) return true;
    for (const child of node.children.values()) if (this.hasDirtyDescendant(child)) return true;
    return false;
  }
}

function split(repoPath: string): { parent: string; name: string } {
  const slash = repoPath.lastIndexOf('/');
  return slash < 0 ? { parent: '', name: repoPath } : { parent: repoPath.slice(0, slash), name: repoPath.slice(slash + 1) };
}

/**
 * A root tree equal to `rootTree` with its `memories/` replaced by `memoryTree` (an empty or null one
 * becomes a folder holding only the placeholder): the commits of operators and imports, which build the
 * memory whole.
 */
export async function withMemoryTree(objects: ObjectStore, rootTree: string, memoryTree: string | null): Promise<string> {
  const rootEntries = (await objects.readTree(rootTree)).filter((e) => e.path !== MEMORY_REPO_ROOT);
  let tree = memoryTree;
  if (!tree || (await objects.readTree(tree)).length === 0) {
    const keep = await objects.writeBlob(new Uint8Array(0));
    tree = await objects.writeTree([{ mode: '100644', path: KEEP_FILE, oid: keep, type: 'blob' }]);
  }
  rootEntries.push({ mode: '040000', path: MEMORY_REPO_ROOT, oid: tree, type: 'tree' });
  return objects.writeTree(rootEntries);
}
