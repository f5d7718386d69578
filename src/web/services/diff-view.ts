import { structuredPatch } from 'diff';
import { lineCountsOf } from '../../history/commit';
import { beyondEditLength, DIFF_CONTEXT_LINES, DIFF_MAX_EDIT_LENGTH, FileDiff, fileDiffs, oneSidedPatch, trimCommonLines } from '../../history/diffs';
import type { HistoryEntry } from '../../history/entry';
import { displayCost, hasHidden } from '../filters';
import { MAX_PAGE_DIFF_CHARS } from './budget';
import { AuditContext, textOf } from './context';

/**
 * Render-ready diffs: hunks of numbered lines (unified) or paired rows (side by side), with the work
 * per diff bounded — at most MAX_DIFF_LINES rows, lines cut at MAX_LINE_CHARS, and a give-up edit
 * distance so a pathological pair of 1 MiB files cannot stall a request.
 */

export const MAX_DIFF_LINES = 1500;
export const MAX_LINE_CHARS = 4000;
// Shared with the history index's line counts (lineChangeCounts), so the two always agree.
const MAX_EDIT_LENGTH = DIFF_MAX_EDIT_LENGTH;
const CONTEXT_LINES = DIFF_CONTEXT_LINES;
/**
 * And a time bound: an edit distance under the bound can still cost seconds when most lines are shared
 * but reordered (two 6,000-line versions of the same lines shuffled: about 2 s of Myers search, on the main
 * thread). A page gives such a pair up as "too large" rather than stall every other request; only pages
 * are bounded this way, never the line counts the history index records (those must not depend on load).
 */
export const DIFF_MAX_MILLIS = 250;

export type LineKind = 'add' | 'del' | 'ctx';

export interface DiffLine {
  kind: LineKind;
  oldNo: number | null;
  newNo: number | null;
  text: string;
  /** The text was longer than MAX_LINE_CHARS and was cut. */
  cut: boolean;
}

export interface SplitRow {
  left: DiffLine | null;
  right: DiffLine | null;
}

export interface Hunk {
  header: string;
  lines: DiffLine[];
  splitRows: SplitRow[];
}

export interface FileDiffView {
  status: FileDiff['status'];
  oldPath: string | null;
  newPath: string | null;
  oldOid: string | null;
  newOid: string | null;
  added: number;
  removed: number;
  hunks: Hunk[];
  /** Rows beyond MAX_DIFF_LINES were left out; the raw file holds the rest. */
  truncated: boolean;
  /** The two sides differ too much to diff within bounds; only the raw files are offered. */
  tooLarge: boolean;
  /** Either side does not end with a newline. */
  noFinalNewline: boolean;
  /** Either side holds invisible or bidirectional control characters (shown marked). */
  hidden: boolean;
  /** Left out entirely: the page had spent its diff budget before this file. */
  omitted?: boolean;
  /** Not diffed at all (left out before its contents were read): `added` and `removed` are not known. */
  statsUnknown?: boolean;
}

/** Markup around one diff line (row, cells, numbers), in characters, for the page budget. */
const LINE_OVERHEAD = 120;

/** What is left of a page's diff budget (characters of output, see displayCost). */
export interface DiffBudget {
  left: number;
}

export function pageDiffBudget(chars = MAX_PAGE_DIFF_CHARS): DiffBudget {
  return { left: chars };
}

/**
 * The part of `view` that fits in what the page's budget has left, as a copy (cached views stay whole):
 * hunks cut at the first line that does not fit, and `truncated` (or `omitted`, when nothing fits) set so
 * the page says so and links to the raw file.
 */
export function withinBudget(view: FileDiffView, budget: DiffBudget): FileDiffView {
  if (!view.hunks.length) return view;
  if (budget.left <= 0) return { ...view, hunks: [], truncated: true, omitted: true };
  const hunks: Hunk[] = [];
  let cut = false;
  for (const hunk of view.hunks) {
    const lines: DiffLine[] = [];
    for (const line of hunk.lines) {
      const cost = LINE_OVERHEAD + displayCost(line.text);
      if (cost > budget.left) {
        cut = true;
        break;
      }
      budget.left -= cost;
      lines.push(line);
    }
    if (lines.length) hunks.push(lines.length === hunk.lines.length ? hunk : { header: hunk.header, lines, splitRows: pairRows(lines) });
    if (cut) break;
  }
  if (!cut) return view;
  budget.left = 0;
  return { ...view, hunks, truncated: true, omitted: hunks.length === 0 };
}

/** The diffs of one commit's memory files; cached, as a commit's diff never changes. */
export async function diffViewsOf(ctx: AuditContext, entry: HistoryEntry): Promise<FileDiffView[]> {
  const cached = ctx.diffs.get(entry.commit) as FileDiffView[] | undefined;
  if (cached) return cached;
  const views = await Promise.all(fileDiffs(entry).map((d) => diffView(ctx, d)));
  ctx.diffs.set(entry.commit, views);
  return views;
}

export async function diffView(ctx: AuditContext, diff: FileDiff): Promise<FileDiffView> {
  const [before, after] = await Promise.all([textOf(ctx, diff.oldOid), textOf(ctx, diff.newOid)]);
  return { ...diff, ...compareTexts(before, after) };
}

/**
 * Line counts of one commit's memory files (the commits list shows them per row): recorded in the
 * history index when the commit was written, so this reads no blobs.
 */
export function lineStats(ctx: AuditContext, entry: HistoryEntry): Promise<{ added: number; removed: number }> {
  return lineCountsOf(ctx, entry);
}

type Comparison = Pick<FileDiffView, 'added' | 'removed' | 'hunks' | 'truncated' | 'tooLarge' | 'noFinalNewline' | 'hidden'>;

/** Pure: the numbered, bounded diff of two texts. */
export function compareTexts(before: string, after: string): Comparison {
  const noFinalNewline = (before !== '' && !before.endsWith('\n')) || (after !== '' && !after.endsWith('\n'));
  const hidden = hasHidden(before) || hasHidden(after);
  // Lines shared at both ends (beyond the context shown) are left out of the diff itself: a one-line
  // change of a half-million-line file is then a diff of a few lines, not of the whole file.
  // An added or deleted file: only the lines shown are split out; the rest are counted.
  if ((before === '' || after === '') && before !== after) return oneSidedComparison(before, after, noFinalNewline, hidden);
  const oneSided = oneSidedPatch('a', 'b', before, after);
  const trimmed = oneSided ? { before: '', after: '', skippedLines: 0 } : trimCommonLines(before, after, CONTEXT_LINES);
  const patch =
    before === after
      ? { hunks: [] }
      : oneSided ??
        (beyondEditLength(trimmed.before, trimmed.after, MAX_EDIT_LENGTH)
          ? undefined
          : structuredPatch('a', 'b', trimmed.before, trimmed.after, undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH, timeout: DIFF_MAX_MILLIS }));
  if (patch) {
    for (const hunk of patch.hunks) {
      hunk.oldStart += trimmed.skippedLines;
      hunk.newStart += trimmed.skippedLines;
    }
  }
  if (!patch) return { added: 0, removed: 0, hunks: [], truncated: false, tooLarge: true, noFinalNewline, hidden };
  let added = 0;
  let removed = 0;
  let budget = MAX_DIFF_LINES;
  let truncated = false;
  const hunks: Hunk[] = [];
  for (const hunk of patch.hunks) {
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    const lines: DiffLine[] = [];
    for (const raw of hunk.lines) {
      const marker = raw[0];
      if (marker === '\\') continue; // "\ No newline at end of file": reported once per file instead
      const kind: LineKind = marker === '+' ? 'add' : marker === '-' ? 'del' : 'ctx';
      if (kind === 'add') added++;
      if (kind === 'del') removed++;
      if (budget > 0) {
        budget--;
        const text = raw.slice(1);
        const cut = text.length > MAX_LINE_CHARS;
        lines.push({
          kind,
          oldNo: kind === 'add' ? null : oldNo,
          newNo: kind === 'del' ? null : newNo,
          text: cut ? text.slice(0, MAX_LINE_CHARS) : text,
          cut,
        });
      } else {
        truncated = true;
      }
      if (kind !== 'add') oldNo++;
      if (kind !== 'del') newNo++;
    }
    if (lines.length) {
      const header = `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
      hunks.push({ header, lines, splitRows: pairRows(lines) });
    }
  }
  return { added, removed, hunks, truncated, tooLarge: false, noFinalNewline, hidden };
}

function oneSidedComparison(before: string, after: string, noFinalNewline: boolean, hidden: boolean): Comparison {
  const text = before || after;
  const kind: LineKind = before ? 'del' : 'add';
  const lines: DiffLine[] = [];
  let count = 0;
  let from = 0;
  while (from < text.length) {
    let end = text.indexOf('\n', from);
    if (end === -1) end = text.length;
    count++;
    if (lines.length < MAX_DIFF_LINES) {
      const line = text.slice(from, Math.min(end, from + MAX_LINE_CHARS));
      lines.push({ kind, oldNo: kind === 'del' ? count : null, newNo: kind === 'add' ? count : null, text: line, cut: end - from > MAX_LINE_CHARS });
    }
    from = end + 1;
  }
  const header = kind === 'add' ? `@@ -1,0 +1,${count} @@` : `@@ -1,${count} +1,0 @@`; // as jsdiff numbers them
  return {
    added: kind === 'add' ? count : 0,
    removed: kind === 'del' ? count : 0,
    hunks: [{ header, lines, splitRows: pairRows(lines) }],
    truncated: count > lines.length,
    tooLarge: false,
    noFinalNewline,
    hidden,
  };
}

/** Side-by-side rows: context on both sides, each run of removals paired line by line with the additions after it. */
export function pairRows(lines: DiffLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].kind === 'ctx') {
      rows.push({ left: lines[i], right: lines[i] });
      i++;
      continue;
    }
    const dels: DiffLine[] = [];
    const adds: DiffLine[] = [];
    while (i < lines.length && lines[i].kind === 'del') dels.push(lines[i++]);
    while (i < lines.length && lines[i].kind === 'add') adds.push(lines[i++]);
    for (let k = 0; k < Math.max(dels.length, adds.length); k++) {
      rows.push({ left: dels[k] ?? null, right: adds[k] ?? null });
    }
  }
  return rows;
}
