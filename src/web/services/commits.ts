import { isMemoryFile } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import { touchesPath } from '../../history/touches-path';
import { Pacer } from './budget';
import { AuditContext, BadRequest, CommitSummary, summarise, textOf } from './context';
import { lineStats } from './diff-view';
import { FlagBadge, flaggedPositions, flagsOf } from './flags';

/**
 * The commits list: newest first, 50 a page, with cursors that are commit ids (their history position
 * is the index's O(1) lookup), never offsets. Filters narrow through the index where one exists (session)
 * and otherwise by a bounded scan: a page stops after SCAN_LIMIT entries or, for the costly text filter,
 * after TEXT_SCAN_MS, and offers a cursor to continue from where it stopped.
 */

export const PAGE_SIZE = 50;
const SCAN_LIMIT = 20_000;
const TEXT_SCAN_MS = 400;
export const MAX_QUERY_CHARS = 200;
export const COMMANDS = ['create', 'str_replace', 'insert', 'delete', 'rename'] as const;

export interface CommitFilter {
  session?: string;
  /** A /memories path or directory prefix. */
  path?: string;
  command?: string;
  /** Seconds since the epoch, inclusive. */
  since?: number;
  until?: number;
  /** Only calls whose diff introduced this text. */
  text?: string;
  /** Only calls flagged for a likely secret or personal data. */
  flagged?: true;
}

export interface CommitRow extends CommitSummary {
  added: number;
  removed: number;
}

export interface CommitPage {
  filter: CommitFilter;
  rows: CommitRow[];
  /** Cursor for the next (older) page, or null at the oldest commit. */
  older: string | null;
  /** Cursor for the previous (newer) page, or null on the newest page. */
  newer: string | null;
  /** The scan stopped at its bound before filling the page; `older` continues it. */
  partial: boolean;
  total: number;
  /** The flags of the rows shown, by commit id (flagged rows only). */
  flags: Record<string, FlagBadge>;
}

/** Parse and validate filter query parameters; bad input is a 400, never a silent "no match". */
export function parseFilter(query: Record<string, unknown>): CommitFilter {
  const filter: CommitFilter = {};
  const text = (name: string): string | undefined => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw new BadRequest(`${name} must be given once`);
    if (value.length > MAX_QUERY_CHARS) throw new BadRequest(`${name} is longer than ${MAX_QUERY_CHARS} characters`);
    return value;
  };
  filter.session = text('session');
  const p = text('path');
  if (p !== undefined) filter.path = toVirtualPrefix(p);
  const command = text('command');
  if (command !== undefined) {
    if (!(COMMANDS as readonly string[]).includes(command) && command !== 'operator') {
      throw new BadRequest(`command must be one of ${[...COMMANDS, 'operator'].join(', ')}`);
    }
    filter.command = command;
  }
  filter.since = parseTime(text('since'), 'since', false);
  filter.until = parseTime(text('until'), 'until', true);
  filter.text = text('text');
  const flagged = text('flagged');
  if (flagged !== undefined) {
    if (!['1', 'true', 'on', '0', 'false', 'off'].includes(flagged)) throw new BadRequest('flagged must be 1 (flagged calls only) or 0');
    if (['1', 'true', 'on'].includes(flagged)) filter.flagged = true;
  }
  for (const key of Object.keys(filter) as (keyof CommitFilter)[]) if (filter[key] === undefined) delete filter[key];
  return filter;
}

/** `/memories/a`, `memories/a`, `a` and `/a` all mean the memory path /memories/a. */
export function toVirtualPrefix(p: string): string {
  const trimmed = p.trim().replace(/\/+$/, '');
  if (trimmed === '' || trimmed === '/memories' || trimmed === 'memories') return '/memories';
  if (trimmed.startsWith('/memories/')) return trimmed;
  if (trimmed.startsWith('memories/')) return `/${trimmed}`;
  return `/memories/${trimmed.replace(/^\/+/, '')}`;
}

/** An ISO date or date-time; without a zone it is UTC. A bare date as `until` means the end of that day. */
function parseTime(value: string | undefined, name: string, endOfDay: boolean): number | undefined {
  if (value === undefined) return undefined;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const hasZone = /(Z|[+-]\d{2}:?\d{2})$/i.test(value);
  const iso = dateOnly ? `${value}T${endOfDay ? '23:59:59' : '00:00:00'}Z` : hasZone ? value : `${value}Z`;
  const ms = Date.parse(iso);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) {
    throw new BadRequest(`${name} must be an ISO date or date-time such as 2026-12-02 or 2026-12-02T15:30`);
  }
  return Math.floor(ms / 1000) + (endOfDay && !dateOnly && /T\d{2}:\d{2}$/.test(value) ? 59 : 0);
}

export async function listCommits(
  ctx: AuditContext,
  filter: CommitFilter,
  cursor: { before?: string; after?: string } = {},
): Promise<CommitPage> {
  const history = ctx.store.history;
  const candidates = candidatePositions(ctx, filter);
  const newestFirst = cursor.after === undefined;
  const from = cursorPosition(ctx, newestFirst ? cursor.before : cursor.after);
  const positions = walk(candidates, history.size, from, newestFirst);
  const matches = entryMatcher(ctx, filter);
  const deadline = filter.text ? Date.now() + TEXT_SCAN_MS : Infinity;
  // One match beyond the page tells whether another page exists, without a second scan.
  const found: HistoryEntry[] = [];
  let scanned = 0;
  let lastScanned: number | null = null;
  let stoppedEarly = false;
  const pacer = new Pacer();
  for (const position of positions) {
    await pacer.pace(); // the text filter reads and counts: other requests are answered between slices
    if (scanned >= SCAN_LIMIT || Date.now() > deadline) {
      stoppedEarly = true;
      break;
    }
    scanned++;
    const entry = history.at(position)!;
    if (await matches(entry)) {
      found.push(entry);
      if (found.length > PAGE_SIZE) break;
    }
    lastScanned = position;
  }
  const more = found.length > PAGE_SIZE;
  if (more) found.pop();
  // Where the scan went on (the far side) there is a next page when a match was left over, or a cursor to
  // continue an interrupted scan from; on the side we came from (the cursor), the rows we came from.
  const farCursor = more ? found[found.length - 1]?.commit ?? null : stoppedEarly && lastScanned !== null ? history.at(lastScanned)!.commit : null;
  if (!newestFirst) found.reverse();
  const rows = await Promise.all(found.map(async (e) => ({ ...summarise(ctx, e), ...(await lineStats(ctx, e)) })));
  const cameFrom = cursor.before !== undefined || cursor.after !== undefined;
  const nearCursor = cameFrom && rows.length ? (newestFirst ? rows[0].commit : rows[rows.length - 1].commit) : null;
  return {
    filter,
    rows,
    older: newestFirst ? farCursor : nearCursor,
    newer: newestFirst ? nearCursor : farCursor,
    partial: stoppedEarly,
    total: history.size,
    flags: flagsOf(ctx, rows.map((r) => r.commit)),
  };
}

function cursorPosition(ctx: AuditContext, commit: string | undefined): number | null {
  if (commit === undefined) return null;
  const position = ctx.store.history.position(commit);
  if (position === undefined) throw new BadRequest('the page cursor names no commit of this store');
  return position;
}

/** Ascending positions an index can narrow the filter to, or null when every commit is a candidate. */
function candidatePositions(ctx: AuditContext, filter: CommitFilter): number[] | null {
  const history = ctx.store.history;
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
  if (filter.flagged) return flaggedPositions(ctx);
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

function entryMatcher(ctx: AuditContext, filter: CommitFilter): (entry: HistoryEntry) => Promise<boolean> | boolean {
  return (entry) => {
    if (filter.session !== undefined && entry.session !== filter.session) return false;
    if (filter.command === 'operator' ? !entry.actor : filter.command !== undefined && entry.command !== filter.command) return false;
    if (filter.since !== undefined && entry.time < filter.since) return false;
    if (filter.until !== undefined && entry.time > filter.until) return false;
    if (filter.path !== undefined && !touchesPath(entry, filter.path)) return false;
    if (filter.flagged && !ctx.store.flags.forCommit(entry.commit)) return false;
    if (filter.text !== undefined) return introduces(ctx, entry, filter.text);
    return true;
  };
}

/**
 * Did this commit add an occurrence of `text` (case-insensitive) to the memory? A rename moves text
 * without adding any, so occurrences are counted over all the files the commit changed.
 */
export async function introduces(ctx: AuditContext, entry: HistoryEntry, text: string): Promise<boolean> {
  const needle = text.toLowerCase();
  const changes = entry.changes.filter((c) => isMemoryFile(c.path));
  let after = 0;
  for (const change of changes) after += occurrences((await textOf(ctx, change.newOid)).toLowerCase(), needle);
  if (after === 0) return false;
  let before = 0;
  for (const change of changes) before += occurrences((await textOf(ctx, change.oldOid)).toLowerCase(), needle);
  return after > before;
}

export function occurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) count++;
  return count;
}
