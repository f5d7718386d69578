/**
 * What the read model answers with: a commit of the store as the history index keeps it (its trailers,
 * parent, time and changed files). Edges name the type from here, never from the index itself
 * (src/store/history-index/), which only src/history/ reads.
 */
export type { HistoryEntry } from '../store/history-index/entry';
export type { FileChange } from '../store';
