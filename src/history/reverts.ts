import type { HistoryEntry, HistoryIndex } from '../store/history-index';

/**
 * Which commits reverted a commit: an index over the Memory-Reverts trailers (revert, restore,
 * rollback-session and reset all name the calls they undid), extended as commits land. Shared by
 * `memgit log`/`show` and the UI's "Reverted by".
 */

interface RevertIndex {
  size: number;
  head: string | null;
  byTarget: Map<string, string[]>;
}

const indexes = new WeakMap<HistoryIndex, RevertIndex>();

/** The commits that undid `commit`, oldest first (a call reverted, re-applied and reverted again has two). */
export function revertedBy(history: HistoryIndex, commit: string): HistoryEntry[] {
  let index = indexes.get(history);
  // History only grows; if it was rewritten under us (a different entry at the last indexed spot), start over.
  if (!index || index.size > history.size || (index.size > 0 && history.at(index.size - 1)?.commit !== index.head)) {
    index = { size: 0, head: null, byTarget: new Map() };
    indexes.set(history, index);
  }
  for (const entry of history.revertsFrom(index.size)) {
    for (const target of entry.reverts) {
      const list = index.byTarget.get(target);
      if (list) list.push(entry.commit);
      else index.byTarget.set(target, [entry.commit]);
    }
  }
  index.size = history.size;
  index.head = history.size ? history.at(history.size - 1)!.commit : null;
  return (index.byTarget.get(commit) ?? []).map((c) => history.get(c)!).filter(Boolean);
}
