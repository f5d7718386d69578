import type { CommitMeta } from '../commit-message';
import type { HistoryEntry, HistoryIndex } from '../history-index';
import type { ObjectStore } from '../objects';

/**
 * What rollback needs from a store, handed out by the store (memory-store.ts) so that this folder never
 * imports the store itself: the objects and the history to plan with, HEAD and the points in history, and
 * one commit written through the store's write path, under its lock.
 */
export interface RollbackPort {
  readonly objects: ObjectStore;
  readonly history: HistoryIndex;
  /** The root tree of a commit. */
  commitTree(commit: string): Promise<string>;
  /** The current HEAD commit (other processes' writes included). */
  refreshHead(): Promise<string>;
  /** Any point in history (store/points.ts), a commit id from before a redaction included. */
  resolvePoint(ref: string): Promise<HistoryEntry>;
  /**
   * Write one commit on top of HEAD under the write lock: `build` gets that HEAD and returns the new tree of
   * `memories/` and the message, or null to write nothing.
   */
  writeCommit<T>(
    build: (head: string) => Promise<{ memoryTree: string | null; meta: CommitMeta; value: T } | null>,
  ): Promise<{ commit: string | null; value: T | null }>;
}
