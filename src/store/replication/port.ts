/**
 * What replication needs from a store, and all it may touch: handed out by `MemoryStore.replication()`
 * so that this folder never imports the store itself.
 */
export interface ReplicationPort {
  readonly dir: string;
  readonly gitdir: string;
  /** A clone made for auditing: it never pushes and takes no writes. */
  readonly readOnly: boolean;
  /** The current HEAD commit (other processes' writes included). */
  head(): Promise<string>;
  /**
   * The commits after `commit` up to HEAD, oldest first (all of them for null), or null when `commit`
   * is not in this store's history.
   */
  commitsAfter(commit: string | null): Array<{ commit: string; time: number }> | null;
  /** Move the branch forward to `commit` (objects already fetched and durable) and project it, under the write lock. */
  fastForward(commit: string): Promise<void>;
  /** Called after every commit this process writes; returns an unsubscribe function. */
  onCommitted(listener: () => void): () => void;
  log(message: string): void;
}
