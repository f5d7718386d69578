import type { MemoryReader } from '../../contract/types';
import type { DurableFs } from '../durable-fs';
import type { HistoryIndex } from '../history-index';
import type { ObjectStore } from '../objects';
import type { ChainStep } from '../write-protocol';

/**
 * What review needs from a store, handed out by the store (ports.ts) so that this folder never imports
 * the store itself: the objects and main's history to plan with, readers of trees, and writes through
 * the one write protocol (a chain on main or on another ref, a ref removed), under the store's lock.
 */
export interface ReviewPort {
  readonly gitdir: string;
  readonly objects: ObjectStore;
  readonly history: HistoryIndex;
  readonly durableFs: DurableFs;
  commitTree(commit: string): Promise<string>;
  readerAt(tree: string): MemoryReader;
  /** The current HEAD (main), the history index brought up to date. */
  refreshHead(): Promise<string>;
  /** Run `task` under the write lock (after repairing an unfinished write). */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /**
   * Inside `exclusive`: write `build`'s chain on top of `base` and move `ref` to its last commit (main:
   * `refs/heads/main`, with the history index and working tree following; any other ref: only the ref).
   */
  commitOn<T>(ref: string, base: string, build: () => Promise<{ chain: ChainStep[]; value: T } | null>): Promise<{ commits: string[]; value: T | null }>;
  /** Inside `exclusive`: point a new ref other than main at a commit (a dream's branch). */
  createRef(ref: string, commit: string): Promise<void>;
  /** Inside `exclusive`: remove a ref other than main. */
  deleteRef(ref: string): Promise<void>;
  /** The secret scanner (secretlint in its worker). */
  scanSecrets(text: string): Promise<Array<{ rule: string; start: number; end: number }>>;
  now(): number;
  readonly readOnly: boolean;
  log(message: string): void;
}
