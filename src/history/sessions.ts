import { isMemoryFile } from '../store/commit-diff';
import type { HistoryIndex } from '../store/history-index';
import { revertedBy } from './reverts';

/** The sessions of a store (`memgit sessions`): when each was active, how many calls and writes, how many undone. */

export interface SessionStats {
  id: string;
  /** Seconds since the epoch of its first and last recorded call. */
  first: number;
  last: number;
  /** Recorded calls of the session (today: its commits; reads and failures once the call log records them). */
  calls: number;
  /** Calls that changed a memory file. */
  writes: number;
  /** Calls later undone by an operator (revert, restore, rollback-session, reset). */
  reverted: number;
}

/** Every session, most recently active first. */
export function sessionStats(history: HistoryIndex): SessionStats[] {
  const list = history.sessions().map((id) => {
    const entries = history.bySession(id);
    return {
      id,
      lastPosition: history.position(entries[entries.length - 1].commit) ?? 0,
      first: entries[0].time,
      last: entries[entries.length - 1].time,
      calls: entries.length,
      writes: entries.filter((e) => e.changes.some((c) => isMemoryFile(c.path))).length,
      reverted: entries.filter((e) => revertedBy(history, e.commit).length > 0).length,
    };
  });
  // Commit times have one-second resolution: within a second, the later commit in history is the newer.
  return list.sort((a, b) => b.last - a.last || b.lastPosition - a.lastPosition).map(({ lastPosition: _, ...stats }) => stats);
}
