import { lineCountsOf } from '../../history/commit';
import { scanLog } from '../../history/log';
import { positionOf } from '../../history/points';
import { historySummary } from '../../history/summary';
import { LOG_COMMANDS, LogFilter, LogFilterInput, parseLogFilter } from '../../history/log-filter';
import { AuditContext, BadRequest, CommitSummary, summarise } from './context';
import { FlagBadge, flagsOf } from './flags';

/**
 * The commits list: newest first, 50 a page, with cursors that are commit ids (their history position
 * is the index's O(1) lookup), never offsets. The filter and the walk are the read model's (src/history/
 * log-filter.ts and log.ts: the same as `memgit log`'s); a page bounds the walk: it stops after SCAN_LIMIT
 * commits or, for the costly text filter, after TEXT_SCAN_MS, and offers a cursor to continue from where
 * it stopped.
 */

export const PAGE_SIZE = 50;
const SCAN_LIMIT = 20_000;
const TEXT_SCAN_MS = 400;
export const MAX_QUERY_CHARS = 200;
export const COMMANDS = LOG_COMMANDS;

/** The filters of the page: the read model's log filter (session, path, command, since/until, text with case and change, flagged, follow). */
export type CommitFilter = LogFilter;

export interface CommitRow extends CommitSummary {
  added: number;
  removed: number;
  /** Under a text filter: whether the call added or removed occurrences of the text. */
  pickaxe?: 'introduced' | 'removed';
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

const FILTER_PARAMS: Array<keyof LogFilterInput> = ['session', 'path', 'follow', 'command', 'since', 'until', 'text', 'case', 'change', 'flagged'];

/** Parse and validate filter query parameters (the read model's one parser); bad input is a 400, never a silent "no match". */
export function parseFilter(query: Record<string, unknown>): CommitFilter {
  const input: LogFilterInput = {};
  for (const name of FILTER_PARAMS) {
    const value = query[name];
    if (value === undefined || value === '') continue;
    if (typeof value !== 'string') throw new BadRequest(`${name} must be given once`);
    input[name] = value;
  }
  // A bad filter throws InvalidFilterError: 400 with its own code (invalid_filter) by the UI's table.
  return parseLogFilter(input, { paths: 'relative', maxChars: MAX_QUERY_CHARS });
}

export async function listCommits(
  ctx: AuditContext,
  filter: CommitFilter,
  cursor: { before?: string; after?: string } = {},
): Promise<CommitPage> {
  const newestFirst = cursor.after === undefined;
  const from = cursorPosition(ctx, newestFirst ? cursor.before : cursor.after);
  // One match beyond the page tells whether another page exists, without a second scan.
  const scan = await scanLog(ctx, filter, {
    direction: newestFirst ? 'older' : 'newer',
    from,
    limit: PAGE_SIZE + 1,
    maxScanned: SCAN_LIMIT,
    deadline: filter.text !== undefined ? Date.now() + TEXT_SCAN_MS : undefined,
  });
  const found = scan.rows;
  const more = found.length > PAGE_SIZE;
  if (more) found.pop();
  // Where the scan went on (the far side) there is a next page when a match was left over, or a cursor to
  // continue an interrupted scan from; on the side we came from (the cursor), the rows we came from.
  const farCursor = more ? found[found.length - 1]?.entry.commit ?? null : scan.stoppedEarly && scan.lastScanned !== null ? scan.lastScannedCommit! : null;
  if (!newestFirst) found.reverse();
  const rows = await Promise.all(
    found.map(async (row): Promise<CommitRow> => {
      const shown: CommitRow = { ...summarise(ctx, row.entry), ...(await lineCountsOf(ctx, row.entry)) };
      if (row.pickaxe) shown.pickaxe = row.pickaxe;
      return shown;
    }),
  );
  const cameFrom = cursor.before !== undefined || cursor.after !== undefined;
  const nearCursor = cameFrom && rows.length ? (newestFirst ? rows[0].commit : rows[rows.length - 1].commit) : null;
  return {
    filter,
    rows,
    older: newestFirst ? farCursor : nearCursor,
    newer: newestFirst ? nearCursor : farCursor,
    partial: scan.stoppedEarly,
    total: historySummary(ctx).commits,
    flags: flagsOf(ctx, rows.map((r) => r.commit)),
  };
}

function cursorPosition(ctx: AuditContext, commit: string | undefined): number | null {
  if (commit === undefined) return null;
  const position = positionOf(ctx, commit);
  if (position === undefined) throw new BadRequest('the page cursor names no commit of this store');
  return position;
}
