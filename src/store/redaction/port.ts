import type { DurableFs } from '../durable-fs';
import type { HistoryEntry } from '../history-index';
import type { ObjectStore } from '../objects';

/**
 * What redaction needs from a store, handed out by `MemoryStore.redaction()` so that this folder never
 * imports the store itself.
 */
export interface RedactionPort {
  readonly dir: string;
  readonly gitdir: string;
  readonly objects: ObjectStore;
  readonly durableFs: DurableFs;
  /** The store's history, oldest first (the index is up to date inside `exclusive`). */
  entries(): readonly HistoryEntry[];
  head(): Promise<string>;
  /** Run `task` under the store's write lock (agent calls wait; they are applied on top afterwards). */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
  /** The branch now holds rewritten history: drop caches, rebuild the history index, project the new HEAD. */
  afterRewrite(oldHead: string, newHead: string): Promise<void>;
  /** Tell replication and flagging that history changed (once old objects are pruned). */
  announce(): void;
  log(message: string): void;
}
