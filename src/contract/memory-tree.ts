/**
 * An in-memory memory tree: a MemoryReader for tests, benchmarks and fuzzing, and `applyEdits` to play
 * the contract's edits onto it. Directories are explicit nodes, so an emptied directory persists the way
 * the git store keeps it with a `.keep` placeholder (spec §4).
 */
import { utf8ByteLength } from './paths';
import type { DirEntry, MemoryReader, NodeKind, RelPath, TreeEdit } from './types';

interface FileNode {
  kind: 'file';
  content: string;
}

interface DirNode {
  kind: 'dir';
  children: Map<string, TreeNode>;
}

type TreeNode = FileNode | DirNode;

export interface TreeItem {
  path: RelPath;
  kind: NodeKind;
  /** Present for files. */
  content?: string;
}

function emptyDir(): DirNode {
  return { kind: 'dir', children: new Map() };
}

function splitRel(rel: RelPath): string[] {
  return rel === '' ? [] : rel.split('/');
}

export class MemoryTree implements MemoryReader {
  private readonly root: DirNode = emptyDir();

  async kind(path: RelPath): Promise<NodeKind | null> {
    return this.find(path)?.kind ?? null;
  }

  async readText(path: RelPath): Promise<string> {
    const node = this.find(path);
    if (node?.kind !== 'file') throw new Error(`readText: ${JSON.stringify(path)} is not a file`);
    return node.content;
  }

  async list(path: RelPath): Promise<DirEntry[]> {
    const node = this.find(path);
    if (node?.kind !== 'dir') throw new Error(`list: ${JSON.stringify(path)} is not a directory`);
    return [...node.children].map(([name, child]) => ({
      name,
      kind: child.kind,
      size: child.kind === 'file' ? utf8ByteLength(child.content) : 0,
    }));
  }

  /** Every node below the root, depth-first in code-unit order, for asserting on the whole state. */
  items(): TreeItem[] {
    const items: TreeItem[] = [];
    const walk = (dir: DirNode, prefix: string): void => {
      for (const name of [...dir.children.keys()].sort()) {
        const node = dir.children.get(name) as TreeNode;
        const path = prefix === '' ? name : `${prefix}/${name}`;
        if (node.kind === 'file') {
          items.push({ path, kind: 'file', content: node.content });
        } else {
          items.push({ path, kind: 'dir' });
          walk(node, path);
        }
      }
    };
    walk(this.root, '');
    return items;
  }

  /** @internal Used by applyEdits. */
  find(path: RelPath): TreeNode | undefined {
    let node: TreeNode = this.root;
    for (const name of splitRel(path)) {
      if (node.kind !== 'dir') return undefined;
      const child = node.children.get(name);
      if (child === undefined) return undefined;
      node = child;
    }
    return node;
  }

  /** @internal The directory that holds `path`, created with its own parents when missing. */
  parentDirCreating(path: RelPath): { dir: DirNode; name: string } {
    const names = splitRel(path);
    const name = names.pop();
    if (name === undefined) throw new Error('the root has no parent');
    let dir = this.root;
    for (const dirName of names) {
      let child = dir.children.get(dirName);
      if (child === undefined) {
        child = emptyDir();
        dir.children.set(dirName, child);
      }
      if (child.kind !== 'dir') throw new Error(`${JSON.stringify(path)}: ancestor ${dirName} is a file`);
      dir = child;
    }
    return { dir, name };
  }
}

/**
 * Applies edits in order. An edit the tree cannot take (writing over a directory, deleting or moving
 * something missing, moving into an existing path) throws: the contract must never produce one, so a
 * throw here is a contract bug, which is what fuzzing wants to find.
 */
export function applyEdits(tree: MemoryTree, edits: readonly TreeEdit[]): void {
  for (const edit of edits) {
    switch (edit.op) {
      case 'write': {
        const { dir, name } = tree.parentDirCreating(edit.path);
        if (dir.children.get(name)?.kind === 'dir') {
          throw new Error(`write: ${JSON.stringify(edit.path)} is a directory`);
        }
        dir.children.set(name, { kind: 'file', content: edit.content });
        break;
      }
      case 'delete': {
        detach(tree, edit.path);
        break;
      }
      case 'move': {
        if (edit.to === edit.from || edit.to.startsWith(`${edit.from}/`)) {
          throw new Error(`move: ${JSON.stringify(edit.to)} is inside ${JSON.stringify(edit.from)}`);
        }
        if (tree.find(edit.to) !== undefined) throw new Error(`move: ${JSON.stringify(edit.to)} exists`);
        const node = tree.find(edit.from);
        if (node === undefined) throw new Error(`move: ${JSON.stringify(edit.from)} does not exist`);
        // Resolved before detaching: a file among the destination's ancestors throws with the source intact.
        const { dir, name } = tree.parentDirCreating(edit.to);
        detach(tree, edit.from);
        dir.children.set(name, node);
        break;
      }
    }
  }
}

function detach(tree: MemoryTree, path: RelPath): void {
  const names = splitRel(path);
  const name = names.pop();
  const parent = tree.find(names.join('/'));
  if (name === undefined || parent?.kind !== 'dir' || !parent.children.delete(name)) {
    throw new Error(`cannot remove ${JSON.stringify(path)}: it does not exist or is the root`);
  }
}
