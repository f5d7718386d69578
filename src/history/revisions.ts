import { fileDiffs } from '../store/history-index/file-diffs';
import type { HistoryIndex } from '../store/history-index';
import type { HistoryEntry } from '../store/history-index/entry';
import { currentPathOf } from '../store';
import type { HistoryContext } from './context';

/** One file through time: its revisions up to a commit, following renames back (index lookups only). */

export interface Revision {
  entry: HistoryEntry;
  position: number;
  /** Repository path of the file in this revision. */
  repoPath: string;
  /** The file's blob after this commit (null: the commit deleted it). */
  oid: string | null;
  kind: 'created' | 'modified' | 'renamed' | 'deleted';
  /** For a rename: the repository path it came from. */
  from?: string;
}

/** Revisions of the file at `repoPath` up to `position` (inclusive), oldest first, following renames back. */
export function revisionsOf(history: HistoryIndex, repoPath: string, position: number): Revision[] {
  const newestFirst: Revision[] = [];
  let path: string | null = repoPath;
  let limit = position;
  while (path !== null) {
    const list = history.byPath(path);
    let i = upperBoundBy(list, limit, (e) => history.position(e.commit)!) - 1;
    const current: string = path;
    path = null;
    for (; i >= 0; i--) {
      const entry = list[i];
      const entryPosition = history.position(entry.commit)!;
      const change = entry.changes.find((c) => c.path === current)!;
      if (change.oldOid) {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: change.newOid ? 'modified' : 'deleted' });
        continue;
      }
      // The file came into being here: by a rename (follow it back) or by a create (its first revision).
      const renamed = fileDiffs(entry).find((d) => d.status === 'renamed' && d.newPath === `/${current}`);
      if (renamed) {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: 'renamed', from: renamed.oldPath!.slice(1) });
        path = renamed.oldPath!.slice(1);
        limit = entryPosition - 1;
      } else {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: 'created' });
      }
      break;
    }
  }
  // Walking back stops at the newest creation, so an earlier life of a reused path is not mixed in.
  return newestFirst.reverse();
}

function upperBoundBy<T>(sorted: T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The revisions of the file at a virtual path up to a point (inclusive), oldest first, following renames back. */
export function fileRevisions(ctx: HistoryContext, virtualPath: string, at: HistoryEntry): Revision[] {
  const history = ctx.store.history;
  return revisionsOf(history, virtualPath.slice(1), history.position(at.commit) ?? -1);
}

/** Whether any commit ever wrote (or removed) the file at this virtual path. */
export function everWritten(ctx: HistoryContext, virtualPath: string): boolean {
  return ctx.store.history.byPath(virtualPath.slice(1)).length > 0;
}

/** The newest commit at or before `at` that changed the file at this virtual path. */
export function lastChangeOf(ctx: HistoryContext, virtualPath: string, at: HistoryEntry): HistoryEntry | undefined {
  const history = ctx.store.history;
  return history.lastChange(virtualPath.slice(1), history.position(at.commit) ?? -1);
}

/**
 * Where the file at a virtual path as of a point lives now: its path followed forward through later
 * renames (where a restore of any of its revisions puts it, as `memgit restore` does).
 */
export function currentPath(ctx: HistoryContext, virtualPath: string, at: HistoryEntry): string {
  const history = ctx.store.history;
  return `/${currentPathOf(history, virtualPath.slice(1), history.position(at.commit) ?? -1)}`;
}
