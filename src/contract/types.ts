/**
 * The seam between the pure memory contract (src/contract) and the storage that executes it
 * (src/store). Commands read the memory through a MemoryReader and answer with the result text and,
 * on success of a mutating command, the edits to apply. They never write anything themselves.
 */

export type NodeKind = 'file' | 'dir';

/** Repository-relative memory paths: '' is the root `/memories`, 'a/b.md' is `/memories/a/b.md`. */
export type RelPath = string;

export interface DirEntry {
  name: string;
  kind: NodeKind;
  /** UTF-8 byte length for files; ignored for directories (they always show as 4K). */
  size: number;
}

/** Read-only view of the memory at one point in history (memgit uses HEAD's tree). */
export interface MemoryReader {
  kind(path: RelPath): Promise<NodeKind | null>;
  /** The file's bytes decoded as UTF-8. Only called for paths whose kind is 'file'. */
  readText(path: RelPath): Promise<string>;
  /**
   * Every entry of a directory, unsorted, including hidden names (the contract filters and sorts).
   * The `.keep` placeholder may or may not be among them; the contract hides it like every dot-name.
   */
  list(path: RelPath): Promise<DirEntry[]>;
}

/**
 * One change to the memory tree. Paths are normalised RelPaths, never ''.
 * - write: set a file's content, creating missing parent directories.
 * - delete: remove a file, or a directory recursively.
 * - move: move a file or directory; missing parents of `to` are created.
 * - mkdir: make sure a directory exists (used when an emptied directory must persist).
 */
export type TreeEdit =
  | { op: 'write'; path: RelPath; content: string }
  | { op: 'delete'; path: RelPath }
  | { op: 'move'; from: RelPath; to: RelPath };

export type MemoryCommandName = 'view' | 'create' | 'str_replace' | 'insert' | 'delete' | 'rename';

export interface ContractOptions {
  createMode: 'overwrite' | 'error';
  maxFileBytes: number;
}

export interface CommandOutcome {
  /** The exact tool_result content. */
  text: string;
  isError: boolean;
  /** Set when the command name was recognised. */
  command?: MemoryCommandName;
  /** Normalised virtual paths (`/memories/...`) of the call, for commit trailers; set on success. */
  path?: string;
  newPath?: string;
  /** Present exactly on success of a mutating command (possibly an edit that changes nothing). */
  edits?: TreeEdit[];
}
