import { MEMORY_ROOT } from '../../contract/paths';
import { memoryFilesAt } from '../../history/memory-at';
import { historySummary } from '../../history/summary';
import { WorkBudget, yieldToLoop } from './budget';
import { AuditContext, BadRequest, textOf } from './context';
import { CommitPage, listCommits, MAX_QUERY_CHARS } from './commits';

/**
 * Search the memory at HEAD (paths and lines, case-insensitive) and its history (the calls that
 * introduced or removed the text: the read model's text filter, as `/commits?text=` and `memgit log -S`). Results come a page of files at a time (`from` = the index of the first file,
 * in path order), and every page is bounded: matches shown, characters shown (long lines are cut to a
 * window around the match), bytes of file content read, and wall time. When a bound stops a page early,
 * the page says which, and `next` continues where it stopped.
 */

export const SEARCH_BUDGETS = {
  /** Files with a match (in the path or a line) per page. */
  filesPerPage: 50,
  /** Matching lines per page, and per file. */
  linesPerPage: 200,
  linesPerFile: 20,
  /** Characters of a matching line shown: a window around the first match. */
  lineChars: 400,
  /** Characters of matching lines shown per page in total. */
  pageChars: 256 * 1024,
  /** Bytes of file content one page reads at most (a store of many large files stays bounded). */
  readBytes: 64 * 1024 * 1024,
  /** Wall time one page may spend reading and matching, in milliseconds. */
  millis: 2000,
} as const;

export interface LineMatch {
  no: number;
  text: string;
  /** Text was left out before / after the window shown. */
  cutBefore: boolean;
  cutAfter: boolean;
}

export type SearchStop = 'files' | 'lines' | 'chars' | 'read' | 'time';

export interface SearchPage {
  q: string;
  /** Index (in path order) of the first file this page looked at. */
  from: number;
  files: { rel: string; pathMatch: boolean; lines: LineMatch[]; moreLines: boolean }[];
  /** Which budget ended this page before the last file, or null when every file was searched. */
  stoppedBy: SearchStop | null;
  /** The `from` of the next page, or null. */
  next: number | null;
  /** Kept for older clients: true when stoppedBy is not null. */
  truncated: boolean;
  /** The calls that introduced or removed the text (first page only). */
  history: CommitPage | null;
}

export const STOP_NOTICES: Record<SearchStop, string> = {
  files: `This page shows ${SEARCH_BUDGETS.filesPerPage} files.`,
  lines: `This page shows at most ${SEARCH_BUDGETS.linesPerPage} matching lines.`,
  chars: `This page reached its size budget (${SEARCH_BUDGETS.pageChars / 1024} KB of matching lines).`,
  read: `This page reached its reading budget (${SEARCH_BUDGETS.readBytes / 1024 / 1024} MB of file content).`,
  time: `This page reached its time budget (${SEARCH_BUDGETS.millis / 1000} s).`,
};

export async function search(ctx: AuditContext, q: string, from = 0, budget = new WorkBudget(SEARCH_BUDGETS.millis)): Promise<SearchPage> {
  if (q.length > MAX_QUERY_CHARS) throw new BadRequest(`q is longer than ${MAX_QUERY_CHARS} characters`);
  if (!Number.isSafeInteger(from) || from < 0) throw new BadRequest('from must be a file number');
  const empty: SearchPage = { q, from, files: [], stoppedBy: null, next: null, truncated: false, history: null };
  if (q === '') return empty;
  const head = historySummary(ctx).head;
  if (!head) return empty;
  const files = await memoryFilesAt(ctx, head);
  if (from > files.length) throw new BadRequest(`from must be at most ${files.length}`);
  const needle = q.toLowerCase();
  const results: SearchPage['files'] = [];
  let lineCount = 0;
  let chars = 0;
  let bytesRead = 0;
  let stoppedBy: SearchStop | null = null;
  let index = from;
  for (; index < files.length; index++) {
    // Every page gets past at least one file, so "continue" always makes progress.
    if (index === from) stoppedBy = null;
    else if (results.length >= SEARCH_BUDGETS.filesPerPage) stoppedBy = 'files';
    else if (lineCount >= SEARCH_BUDGETS.linesPerPage) stoppedBy = 'lines';
    else if (chars >= SEARCH_BUDGETS.pageChars) stoppedBy = 'chars';
    else if (bytesRead >= SEARCH_BUDGETS.readBytes) stoppedBy = 'read';
    else if (budget.spent) stoppedBy = 'time';
    if (stoppedBy) break;
    const entry = files[index];
    const rel = entry.path.slice(MEMORY_ROOT.length + 1);
    const pathMatch = rel.toLowerCase().includes(needle);
    const text = await textOf(ctx, entry.oid);
    bytesRead += text.length;
    const room = Math.min(SEARCH_BUDGETS.linesPerFile, SEARCH_BUDGETS.linesPerPage - lineCount);
    const { lines, more } = matchingLines(text, needle, room, SEARCH_BUDGETS.pageChars - chars);
    lineCount += lines.length;
    for (const line of lines) chars += line.text.length;
    if (pathMatch || lines.length) results.push({ rel, pathMatch, lines, moreLines: more });
    await yieldToLoop();
  }
  const next = stoppedBy ? index : null;
  const history = from === 0 ? await listCommits(ctx, { text: q }) : null;
  return { q, from, files: results, stoppedBy, next, truncated: stoppedBy !== null, history };
}

/**
 * Up to `max` lines containing `needle` (already lower-cased), each cut to a window around its first
 * match. Works on positions in the text rather than splitting it, so a file of half a million short
 * lines costs one scan, not half a million strings.
 */
export function matchingLines(text: string, needle: string, max: number, charRoom: number): { lines: LineMatch[]; more: boolean } {
  const lines: LineMatch[] = [];
  if (max <= 0 || !needle) return { lines, more: false };
  let lower = text.toLowerCase();
  // A few characters change length when lower-cased; search the original text then (exact case only
  // for those), so that positions stay true.
  if (lower.length !== text.length) lower = text;
  let lineNo = 1;
  let counted = 0; // position up to which newlines are counted into lineNo
  let pos = lower.indexOf(needle);
  while (pos !== -1) {
    if (lines.length >= max || charRoom <= 0) return { lines, more: true };
    for (let nl = text.indexOf('\n', counted); nl !== -1 && nl < pos; nl = text.indexOf('\n', nl + 1)) lineNo++;
    const start = text.lastIndexOf('\n', pos - 1) + 1;
    let end = text.indexOf('\n', pos);
    if (end === -1) end = text.length;
    const window = cutAround(start, end, pos, needle.length, Math.min(SEARCH_BUDGETS.lineChars, Math.max(charRoom, needle.length)));
    const shown = text.slice(window.from, window.to);
    lines.push({ no: lineNo, text: shown, cutBefore: window.from > start, cutAfter: window.to < end });
    charRoom -= shown.length;
    counted = end;
    pos = end >= text.length ? -1 : lower.indexOf(needle, end + 1);
    if (pos !== -1) {
      lineNo++; // the newline at `end`
      counted = end + 1;
    }
  }
  return { lines, more: false };
}

/** A window of at most `width` characters of [start, end) that contains the match at `pos`. */
function cutAround(start: number, end: number, pos: number, length: number, width: number): { from: number; to: number } {
  if (end - start <= width) return { from: start, to: end };
  const lead = Math.max(0, Math.floor((width - length) / 3));
  const from = Math.max(start, Math.min(pos - lead, end - width));
  return { from, to: Math.min(end, from + width) };
}
