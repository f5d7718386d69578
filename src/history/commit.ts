import { fileDiffs, FileDiff, unifiedDiff } from '../store/history-index/file-diffs';
import type { HistoryEntry } from '../store/history-index/entry';
import { commitLineCounts, FileFact } from '../store/history-index/facts';
import type { HistoryContext } from './context';
import { revertedBy } from './reverts';

/**
 * One commit: its message, the memory files it changed, their patches and line counts, and the id it had
 * before a redaction rewrote it (`memgit show`, the UI's commit page, `memgit log --stat` / `-p`).
 *
 * Line counts are the ones the history index records when a commit is written (history-index/facts.ts),
 * for the UI's commit list and `log --stat` alike: bounded, so that a pair of versions too different to
 * diff within DIFF_MAX_EDIT_LENGTH changed lines counts 0/0 (`tooLarge`) rather than costing minutes.
 */

export interface FileStat {
  path: string;
  status: FileDiff['status'];
  oldPath: string | null;
  added: number;
  removed: number;
  /** The two versions differ by more lines than are counted: `added` and `removed` are 0, not the truth. */
  tooLarge: boolean;
}

/** The memory files a commit changed (renames paired), in path order. */
export function commitFiles(entry: HistoryEntry): FileDiff[] {
  return fileDiffs(entry);
}

/** Lines added and removed over all of a commit's memory files (the UI's commit list). */
export async function lineCountsOf(ctx: HistoryContext, entry: HistoryEntry): Promise<{ added: number; removed: number }> {
  return commitLineCounts(await ctx.store.history.factsOf(entry));
}

/** Lines added and removed per memory file a commit changed (`log --stat`). */
export async function commitStat(ctx: HistoryContext, entry: HistoryEntry): Promise<FileStat[]> {
  return (await ctx.store.history.factsOf(entry)).map((f) => ({
    path: (f.newPath ?? f.oldPath)!,
    status: f.status,
    oldPath: f.status === 'renamed' ? f.oldPath : null,
    added: f.added,
    removed: f.removed,
    tooLarge: beyondCount(f),
  }));
}

/** Counted 0/0 although the two sides differ: the pair was beyond the bound of the line counts. */
function beyondCount(f: FileFact): boolean {
  return f.added === 0 && f.removed === 0 && f.oldOid !== f.newOid && (f.oldSize ?? 0) + (f.newSize ?? 0) > 0;
}

/** The unified diffs of a commit's memory files (`-p`, `show`). */
export function commitPatches(ctx: HistoryContext, entry: HistoryEntry): Promise<string[]> {
  return Promise.all(fileDiffs(entry).map((d) => unifiedDiff(ctx.store.objects, d)));
}

/** The commit's whole message, trailers included. */
export async function commitMessage(ctx: HistoryContext, entry: HistoryEntry): Promise<string> {
  return (await ctx.store.objects.readCommit(entry.commit)).commit.message;
}

/** When `ref` named this commit by its id from before a redaction: that id and the redaction; else null. */
export function rewrittenFrom(ctx: HistoryContext, ref: string, commit: string): Promise<{ old: string; redaction: string } | null> {
  return ctx.store.redactionLog().rewrittenFrom(ref, commit);
}

/** The commits that undid this one (revert, restore, rollback-session, reset), oldest first. */
export function revertedByOf(ctx: HistoryContext, commit: string): HistoryEntry[] {
  return revertedBy(ctx.store.history, commit);
}
