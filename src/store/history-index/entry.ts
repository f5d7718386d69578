import type { CommitMeta } from '../commit-message';
import type { FileChange } from '../objects';

/**
 * One commit as the history index keeps it: the commit message's trailers, the commit and its parent,
 * its time, and the files it changed. In a file of its own so that the modules that only read entries
 * (diffs, facts, blame, the read model in src/history/) do not import the index itself.
 */

export interface HistoryEntry extends CommitMeta {
  commit: string;
  parent: string | null;
  /** The commit's root tree (absent in entries migrated from format 1). */
  tree?: string;
  /** Commit time, seconds since the epoch. */
  time: number;
  /** The tool_use id for agent calls (the title of a commit that carries a Memory-Command trailer). */
  toolUseId?: string;
  /** Files changed, as repository paths with blob oids. */
  changes: FileChange[];
  /** Per memory-file facts (history/facts.ts); absent until computed. */
  facts?: number[];
}

export function makeEntry(
  commit: string,
  parent: string | null,
  time: number,
  meta: CommitMeta,
  changes: FileChange[],
  tree?: string,
): HistoryEntry {
  const entry: HistoryEntry = { ...meta, commit, parent, time, changes };
  if (tree) entry.tree = tree;
  if (meta.command && !meta.actor) entry.toolUseId = meta.title;
  return entry;
}
