import { isMemoryFile } from '../store/history-index/file-diffs';
import type { HistoryEntry } from '../store/history-index/entry';
import { HistoryContext, textOf } from './context';
import type { LogFilter } from './log-filter';
import { Pacer } from './pace';
import { revertedBy } from './reverts';
import { revisionsOf } from './revisions';
import { touchesPath } from './touches-path';

/**
 * The log query: the commits a filter (log-filter.ts) keeps, walked through history in either direction
 * from a cursor, narrowed first through the index where one exists (session, path, a followed file,
 * flags), each row with the commits that reverted it and, under a text filter, which way the text went.
 * `memgit log` reads all of it (or its newest N); the UI's commit list and the read API read a page at a
 * time, within a bound on the history scanned, and continue from where a page stopped.
 */

export interface LogRow {
  entry: HistoryEntry;
  /** Position in history (0 = the store's first commit). */
  position: number;
  /** Under a text filter: whether the commit added or removed occurrences of the text. */
  pickaxe?: 'introduced' | 'removed';
  /** The commits that undid this one (revert, restore, rollback-session, reset), oldest first. */
  revertedBy: HistoryEntry[];
}

export interface LogScanOptions {
  /** `older`: newest first (the default); `newer`: oldest first. */
  direction?: 'older' | 'newer';
  /** Start strictly beyond this commit's position (a page cursor); from the newest (or oldest) otherwise. */
  from?: number | null;
  /** Stop once this many rows are found. */
  limit?: number;
  /** Stop after looking at this many candidate commits (a request's bound). */
  maxScanned?: number;
  /** Stop at this time (ms since the epoch; a request's bound). */
  deadline?: number;
}

export interface LogScan {
  rows: LogRow[];
  /** A bound (maxScanned, deadline) stopped the scan before it was done. */
  stoppedEarly: boolean;
  /** The position of the last commit looked at and not kept as a row beyond `limit`, or null: where a stopped scan continues. */
  lastScanned: number | null;
  lastScannedCommit: string | null;
}

/** Every row the filter keeps, newest first (at most `limit`): `memgit log`. */
export async function queryLog(ctx: HistoryContext, filter: LogFilter, limit?: number): Promise<LogRow[]> {
  return (await scanLog(ctx, filter, { limit })).rows;
}

/** Walk history from a cursor, keeping the rows the filter keeps, until done, `limit` rows, or a bound. */
export async function scanLog(ctx: HistoryContext, filter: LogFilter, options: LogScanOptions = {}): Promise<LogScan> {
  const history = ctx.store.history;
  const newestFirst = options.direction !== 'newer';
  const positions = walk(candidatePositions(ctx, filter), history.size, options.from ?? null, newestFirst);
  const keep = rowMatcher(ctx, filter);
  const rows: LogRow[] = [];
  let scanned = 0;
  let lastScanned: number | null = null;
  let stoppedEarly = false;
  const pacer = new Pacer();
  for (const position of positions) {
    await pacer.pace(); // the text filter reads and counts: other requests are answered between slices
    if ((options.maxScanned !== undefined && scanned >= options.maxScanned) || (options.deadline !== undefined && Date.now() > options.deadline)) {
      stoppedEarly = true;
      break;
    }
    scanned++;
    const entry = history.at(position)!;
    const row = await keep(entry, position);
    if (row) {
      rows.push(row);
      if (options.limit !== undefined && rows.length >= options.limit) break;
    }
    lastScanned = position;
  }
  return { rows, stoppedEarly, lastScanned, lastScannedCommit: lastScanned === null ? null : history.at(lastScanned)!.commit };
}

/** Ascending positions an index can narrow the filter to, or null when every commit is a candidate. */
function candidatePositions(ctx: HistoryContext, filter: LogFilter): number[] | null {
  const history = ctx.store.history;
  if (filter.follow && filter.path !== undefined) {
    return revisionsOf(history, filter.path.slice(1), history.size - 1).map((r) => r.position);
  }
  if (filter.session !== undefined) {
    return history.bySession(filter.session).map((e) => history.position(e.commit)!);
  }
  if (filter.path !== undefined) {
    // A commit touches a path prefix only by changing a file below it (the index has every changed path,
    // `.keep` placeholders included); touchesPath() then decides exactly.
    const prefix = filter.path.slice(1);
    const positions = new Set<number>();
    for (const repoPath of history.paths()) {
      if (repoPath === prefix || repoPath.startsWith(`${prefix}/`)) for (const e of history.byPath(repoPath)) positions.add(history.position(e.commit)!);
    }
    return [...positions].sort((a, b) => a - b);
  }
  if (filter.flagged) {
    const positions: number[] = [];
    for (const record of ctx.store.flags.all()) {
      const position = history.position(record.commit);
      if (position !== undefined) positions.push(position);
    }
    return positions.sort((a, b) => a - b);
  }
  return null;
}

/** Positions strictly beyond `from` (or from the end) in the given direction. */
function* walk(candidates: number[] | null, size: number, from: number | null, descending: boolean): Generator<number> {
  if (candidates === null) {
    if (descending) for (let p = (from ?? size) - 1; p >= 0; p--) yield p;
    else for (let p = (from ?? -1) + 1; p < size; p++) yield p;
    return;
  }
  if (descending) {
    let i = from === null ? candidates.length - 1 : lowerBound(candidates, from) - 1;
    for (; i >= 0; i--) yield candidates[i];
  } else {
    let i = from === null ? 0 : lowerBound(candidates, from + 1);
    for (; i < candidates.length; i++) yield candidates[i];
  }
}

/** Index of the first element >= value in an ascending array. */
function lowerBound(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function rowMatcher(ctx: HistoryContext, filter: LogFilter): (entry: HistoryEntry, position: number) => Promise<LogRow | null> {
  const history = ctx.store.history;
  const inScope = textScope(ctx, filter);
  return async (entry, position) => {
    if (filter.session !== undefined && entry.session !== filter.session) return null;
    if (filter.command === 'operator' ? !entry.actor : filter.command !== undefined && entry.command !== filter.command) return null;
    if (filter.since !== undefined && entry.time < filter.since) return null;
    if (filter.until !== undefined && entry.time > filter.until) return null;
    if (filter.path !== undefined && !filter.follow && !touchesPath(entry, filter.path)) return null;
    if (filter.flagged && !ctx.store.flags.forCommit(entry.commit)) return null;
    const row: LogRow = { entry, position, revertedBy: [] };
    if (filter.text !== undefined) {
      const change = await textChange(ctx, entry, filter.text, { inScope, caseSensitive: filter.case === 'sensitive', only: filter.change });
      if (!change) return null;
      row.pickaxe = change;
    }
    row.revertedBy = revertedBy(history, entry.commit);
    return row;
  };
}

/** The memory files (repository paths) a text filter counts in: those below the path, or the followed file's. */
function textScope(ctx: HistoryContext, filter: LogFilter): (repoPath: string) => boolean {
  if (filter.path === undefined) return isMemoryFile;
  if (filter.follow) {
    const history = ctx.store.history;
    const followed = new Set(revisionsOf(history, filter.path.slice(1), history.size - 1).flatMap((r) => [r.repoPath, ...(r.from ? [r.from] : [])]));
    return (p) => followed.has(p);
  }
  const prefix = filter.path.slice(1);
  return (p) => isMemoryFile(p) && (p === prefix || p.startsWith(`${prefix}/`));
}

/**
 * Did the commit change how often `text` occurs in the memory files in scope: `introduced` when it added
 * occurrences, `removed` when it took some away, null when the count stayed (a rename moves text without
 * adding any). With `only`, a change the other way is null too (and its other side may go unread).
 */
export async function textChange(
  ctx: HistoryContext,
  entry: HistoryEntry,
  text: string,
  options: { inScope?: (repoPath: string) => boolean; caseSensitive?: boolean; only?: 'introduced' | 'removed' } = {},
): Promise<'introduced' | 'removed' | null> {
  const inScope = options.inScope ?? isMemoryFile;
  const fold = options.caseSensitive ? (t: string) => t : (t: string) => t.toLowerCase();
  const needle = fold(text);
  const changes = entry.changes.filter((c) => isMemoryFile(c.path) && inScope(c.path));
  if (changes.length === 0 || needle === '') return null;
  const count = async (side: 'oldOid' | 'newOid') => {
    let n = 0;
    for (const change of changes) n += occurrences(fold(await textOf(ctx, change[side])), needle);
    return n;
  };
  // The side that must hold the text for the wanted direction is read first: without it, the other is not read.
  if (options.only === 'removed') {
    const before = await count('oldOid');
    return before > 0 && (await count('newOid')) < before ? 'removed' : null;
  }
  const after = await count('newOid');
  if (options.only === 'introduced' && after === 0) return null;
  const before = await count('oldOid');
  if (after > before) return 'introduced';
  return after < before && options.only !== 'introduced' ? 'removed' : null;
}

/** Occurrences of `needle` in `haystack`, not overlapping. */
export function occurrences(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}
