import { diffLines } from 'diff';
import { blobText, fileDiffs, FileDiff, isMemoryFile, unifiedDiff } from '../store/commit-diff';
import type { HistoryEntry, HistoryIndex } from '../store/history-index';
import type { ObjectStore } from '../store/objects';
import { touchesPath } from './touches-path';
import { revertedBy } from './reverts';
import { revisionsOf as fileRevisions } from './revisions';

/**
 * `memgit log`'s query over the history index: filters by session, command, time, path (optionally
 * following a file's renames back) and text (`-S`, git's pickaxe: the calls that changed how often a text
 * occurs), newest first, each row with the commits that reverted it. Below the edges so the CLI, the
 * HTTP API and the UI can give the same answers.
 */

export const AGENT_COMMANDS = ['create', 'str_replace', 'insert', 'delete', 'rename'] as const;

export interface LogFilter {
  session?: string;
  /** A validated virtual path (`/memories/...`): the commits that touched it or anything below it. */
  path?: string;
  /** With `path` naming a file: follow it back through renames instead of matching the path literally. */
  follow?: boolean;
  /** An agent command, or `operator` for rollbacks. */
  command?: string;
  /** Seconds since the epoch, inclusive. */
  since?: number;
  until?: number;
  /** Only commits that changed the number of occurrences of this text (in the files within `path`). */
  pickaxe?: string;
  ignoreCase?: boolean;
  /** At most this many rows (the newest). */
  limit?: number;
}

export interface LogRow {
  entry: HistoryEntry;
  /** With a pickaxe: whether the commit added or removed occurrences of the text. */
  pickaxe?: 'introduced' | 'removed';
  /** The commits that undid this one (revert, restore, rollback-session, reset), oldest first. */
  revertedBy: HistoryEntry[];
}

export interface LogSource {
  history: HistoryIndex;
  objects: ObjectStore;
}

export async function queryLog(source: LogSource, filter: LogFilter): Promise<LogRow[]> {
  const { history } = source;
  let candidates: readonly HistoryEntry[];
  let inScope: (repoPath: string) => boolean = isMemoryFile;
  if (filter.path !== undefined && filter.follow) {
    const revisions = fileRevisions(history, filter.path.slice(1), history.size - 1);
    candidates = revisions.map((r) => r.entry);
    const followed = new Set(revisions.flatMap((r) => [r.repoPath, ...(r.from ? [r.from] : [])]));
    inScope = (p) => followed.has(p);
  } else {
    candidates = filter.session !== undefined ? history.bySession(filter.session) : history.all();
    if (filter.path !== undefined) {
      // Virtual paths are repository paths with a leading slash: /memories/a is memories/a.
      const prefix = filter.path.slice(1);
      const under = (p: string | undefined) => p !== undefined && (p === prefix || p.startsWith(`${prefix}/`));
      inScope = (p) => isMemoryFile(p) && under(p);
      const path = filter.path;
      candidates = candidates.filter((e) => touchesPath(e, path));
    }
  }
  const rows: LogRow[] = [];
  for (let i = candidates.length - 1; i >= 0; i--) {
    if (filter.limit !== undefined && rows.length >= filter.limit) break;
    const entry = candidates[i];
    if (filter.session !== undefined && entry.session !== filter.session) continue;
    if (filter.command === 'operator' ? !entry.actor : filter.command !== undefined && entry.command !== filter.command) continue;
    if (filter.since !== undefined && entry.time < filter.since) continue;
    if (filter.until !== undefined && entry.time > filter.until) continue;
    const row: LogRow = { entry, revertedBy: revertedBy(history, entry.commit) };
    if (filter.pickaxe !== undefined) {
      const change = await occurrenceChange(source.objects, entry, filter.pickaxe, inScope, filter.ignoreCase ?? false);
      if (!change) continue;
      row.pickaxe = change;
    }
    rows.push(row);
  }
  return rows;
}

/** Did the commit change how often `text` occurs in the files in scope (added or removed occurrences)? */
export async function occurrenceChange(
  objects: ObjectStore,
  entry: HistoryEntry,
  text: string,
  inScope: (repoPath: string) => boolean,
  ignoreCase: boolean,
): Promise<'introduced' | 'removed' | null> {
  const needle = ignoreCase ? text.toLowerCase() : text;
  let before = 0;
  let after = 0;
  for (const change of entry.changes) {
    if (!isMemoryFile(change.path) || !inScope(change.path)) continue;
    const read = async (oid: string | null) => (oid ? (ignoreCase ? (await blobText(objects, oid)).toLowerCase() : await blobText(objects, oid)) : '');
    before += occurrences(await read(change.oldOid), needle);
    after += occurrences(await read(change.newOid), needle);
  }
  return after > before ? 'introduced' : after < before ? 'removed' : null;
}

export function occurrences(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}

export interface FileStat {
  path: string;
  status: FileDiff['status'];
  oldPath: string | null;
  added: number;
  removed: number;
}

/** Lines added and removed per memory file a commit changed (`--stat`). */
export async function commitStat(objects: ObjectStore, entry: HistoryEntry): Promise<FileStat[]> {
  const stats: FileStat[] = [];
  for (const d of fileDiffs(entry)) {
    const [before, after] = await Promise.all([blobText(objects, d.oldOid), blobText(objects, d.newOid)]);
    let added = 0;
    let removed = 0;
    for (const part of diffLines(before, after)) {
      if (part.added) added += part.count ?? 0;
      else if (part.removed) removed += part.count ?? 0;
    }
    stats.push({ path: (d.newPath ?? d.oldPath)!, status: d.status, oldPath: d.status === 'renamed' ? d.oldPath : null, added, removed });
  }
  return stats;
}

/** The unified diffs of a commit's memory files (`-p`, `show`). */
export function commitPatches(objects: ObjectStore, entry: HistoryEntry): Promise<string[]> {
  return Promise.all(fileDiffs(entry).map((d) => unifiedDiff(objects, d)));
}
