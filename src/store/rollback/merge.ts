import { diffArrays } from 'diff';
import type * as Diff3 from 'node-diff3' with { 'resolution-mode': 'import' };

/**
 * Line-level three-way merge for reverting one call: base = the content the call wrote, ours = the
 * content now, theirs = the content before the call. Pure functions over strings.
 *
 * node-diff3 finds the regions where both sides moved away from base (the Khanna–Kunal–Pierce diff3).
 * Like GNU diff3 it treats changes that merely touch (a deleted line and a line inserted right after it)
 * as one conflicting region; memory files are short lists of facts where "undo this line, keep the line
 * the agent added below it" is the common case, so each such region is split again and only changes to
 * the same lines, or insertions at the same place, are conflicts.
 */

// node-diff3 ships a CommonJS build (exports.require) but types that TypeScript reads as ESM.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const diff3: typeof Diff3 = require('node-diff3');

/** Text as lines; the last element is '' when the text ends with a newline, so join('\n') round-trips. */
export function splitLines(text: string): string[] {
  return text.split('\n');
}

/** A half-open range [start, end) of base lines (0-based); start === end is an insertion point. */
export interface LineRange {
  start: number;
  end: number;
}

export interface MergeConflict {
  /** The conflicting lines in ours (0-based, half-open). */
  ours: LineRange;
  /** The same region in base coordinates. */
  base: LineRange;
}

/**
 * Bounds of one merge, so that a hostile file cannot hold the process: node-diff3's LCS costs about
 * (lines of base) × (lines of the other side), and jsdiff's search (edit distance) × lines. Lines that all
 * three texts share at the start and at the end are left out first (a one-line change of a 1 MiB file
 * merges a few lines); what is left must fit these bounds, or the merge reports `tooLarge` (a conflict:
 * nothing is written) instead of running for minutes.
 */
export const MERGE_LIMITS = {
  /** (lines of base) × (lines of ours + lines of theirs), after the shared ends are left out. */
  work: 25_000_000,
  /** Edit distance of the line diffs within a region and of a later call's change. */
  editLength: 5000,
} as const;

export type MergeResult =
  | { clean: true; text: string }
  | { clean: false; conflicts: MergeConflict[]; tooLarge?: false }
  /** The texts differ in too many lines to merge within MERGE_LIMITS: `lines` is how many of base would be merged. */
  | { clean: false; conflicts: []; tooLarge: true; lines: number };

interface Hunk extends LineRange {
  lines: string[];
}

/** How many lines all of `texts` share at the start, and then at the end (never overlapping). */
function sharedEnds(texts: string[][]): { head: number; tail: number } {
  const shortest = Math.min(...texts.map((t) => t.length));
  const [first, ...rest] = texts;
  let head = 0;
  while (head < shortest && rest.every((t) => t[head] === first[head])) head++;
  let tail = 0;
  while (tail < shortest - head && rest.every((t) => t[t.length - 1 - tail] === first[first.length - 1 - tail])) tail++;
  return { head, tail };
}

export function threeWayMerge(base: string, ours: string, theirs: string): MergeResult {
  const whole = [splitLines(base), splitLines(ours), splitLines(theirs)];
  const { head, tail } = sharedEnds(whole);
  const [o, a, b] = whole.map((t) => t.slice(head, t.length - tail));
  if (o.length * (a.length + b.length) > MERGE_LIMITS.work) return { clean: false, conflicts: [], tooLarge: true, lines: o.length };
  const merged: string[] = whole[0].slice(0, head);
  const conflicts: MergeConflict[] = [];
  for (const region of diff3.diff3MergeRegions(a, o, b)) {
    if (region.stable) {
      append(merged, region.bufferContent);
      continue;
    }
    const resolved = mergeRegion(region.oContent, region.aContent, region.bContent);
    if (resolved) {
      append(merged, resolved);
    } else {
      conflicts.push({
        ours: { start: head + region.aStart, end: head + region.aStart + region.aLength },
        base: { start: head + region.oStart, end: head + region.oStart + region.oLength },
      });
    }
  }
  append(merged, whole[0].slice(whole[0].length - tail));
  return conflicts.length ? { clean: false, conflicts } : { clean: true, text: merged.join('\n') };
}

/** Apply both sides' changes to one unstable region, or null when they touch the same lines (or differ too much to tell). */
function mergeRegion(o: string[], a: string[], b: string[]): string[] | null {
  if (sameLines(a, b)) return a;
  const ours = hunks(o, a);
  const theirsAll = hunks(o, b);
  if (!ours || !theirsAll) return null;
  const theirs = theirsAll.filter((y) => !ours.some((x) => sameHunk(x, y)));
  for (const x of ours) for (const y of theirs) if (collide(x, y)) return null;
  // Insertions sort before a replacement starting at the same line, so the order is well defined.
  const all = [...ours, ...theirs].sort((x, y) => x.start - y.start || (x.end - x.start) - (y.end - y.start));
  const out: string[] = [];
  let cursor = 0;
  for (const h of all) {
    append(out, o.slice(cursor, h.start));
    append(out, h.lines);
    cursor = h.end;
  }
  append(out, o.slice(cursor));
  return out;
}

/** `target.push(...items)` without spreading (a spread of half a million lines overflows the stack). */
function append(target: string[], items: readonly string[]): void {
  for (const item of items) target.push(item);
}

/**
 * The changes from `from` to `to` as replaced ranges of `from`: the lines between their shared head and
 * tail diffed, or null when those differ by more than MERGE_LIMITS.editLength lines.
 */
export function hunks(from: string[], to: string[]): Hunk[] | null {
  const { head, tail } = sharedEnds([from, to]);
  const parts = diffArrays(from.slice(head, from.length - tail), to.slice(head, to.length - tail), { maxEditLength: MERGE_LIMITS.editLength });
  if (!parts) return null;
  const result: Hunk[] = [];
  let position = head;
  let open: Hunk | null = null;
  for (const part of parts) {
    if (!part.added && !part.removed) {
      if (open) result.push(open);
      open = null;
      position += part.count ?? part.value.length;
      continue;
    }
    open ??= { start: position, end: position, lines: [] };
    if (part.removed) {
      position += part.count ?? part.value.length;
      open.end = position;
    } else {
      append(open.lines, part.value);
    }
  }
  if (open) result.push(open);
  return result;
}

function collide(x: LineRange, y: LineRange): boolean {
  const xInsert = x.start === x.end;
  const yInsert = y.start === y.end;
  if (xInsert && yInsert) return x.start === y.start;
  if (xInsert) return y.start < x.start && x.start < y.end;
  if (yInsert) return x.start < y.start && y.start < x.end;
  return x.start < y.end && y.start < x.end;
}

function sameHunk(x: Hunk, y: Hunk): boolean {
  return x.start === y.start && x.end === y.end && sameLines(x.lines, y.lines);
}

function sameLines(x: string[], y: string[]): boolean {
  return x.length === y.length && x.every((line, i) => line === y[i]);
}

/**
 * Where a later call's change lands in base coordinates: `before` → `after` is that call's change and
 * base is the reverted call's result. Lines of `before` that are not in base sit between the base lines
 * around them, so a change there maps to that gap (or to the base lines it replaced). When either diff is
 * beyond MERGE_LIMITS the footprint is the whole of base (the call is counted as touching everything).
 */
export function baseFootprint(base: string, before: string, after: string): LineRange[] {
  const o = splitLines(base);
  const other = splitLines(before);
  const anchor = anchorLines(o, other);
  const change = hunks(other, splitLines(after));
  if (!anchor || !change) return [{ start: 0, end: o.length }];
  const gapBefore = (i: number) => (i > 0 ? anchor(i - 1).end : 0);
  const gapAfter = (i: number) => (i < other.length ? anchor(i).start : o.length);
  return change.map((h) =>
    h.start === h.end
      ? { start: gapBefore(h.start), end: gapAfter(h.start) }
      : { start: anchor(h.start).start, end: anchor(h.end - 1).end },
  );
}

/** For a line of `other`, the range of base lines it stands for (computed per line, not for all of them). */
function anchorLines(base: string[], other: string[]): ((i: number) => LineRange) | null {
  const found = hunks(base, other);
  if (!found) return null;
  // Each hunk's first line in `other`, and the shift (other − base) after it.
  const spans: { otherStart: number; hunk: Hunk; shiftAfter: number }[] = [];
  let shift = 0;
  for (const hunk of found) {
    const otherStart = hunk.start + shift;
    shift += hunk.lines.length - (hunk.end - hunk.start);
    spans.push({ otherStart, hunk, shiftAfter: shift });
  }
  return (i: number) => {
    let lo = 0;
    let hi = spans.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (spans[mid].otherStart <= i) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return { start: i, end: i + 1 };
    const span = spans[lo - 1];
    if (i < span.otherStart + span.hunk.lines.length) return { start: span.hunk.start, end: span.hunk.end };
    const k = i - span.shiftAfter;
    return { start: k, end: k + 1 };
  };
}

/**
 * Lines of `after` that a change from `before` wrote or next to which it deleted (1-based, inclusive);
 * the whole of `after` when the two differ beyond MERGE_LIMITS.
 */
export function changedLines(before: string, after: string): { from: number; to: number }[] {
  const afterLines = splitLines(after);
  const found = hunks(splitLines(before), afterLines);
  if (!found) return [{ from: 1, to: Math.max(1, afterLines.length - (afterLines[afterLines.length - 1] === '' ? 1 : 0)) }];
  const ranges: { from: number; to: number }[] = [];
  let shift = 0;
  for (const h of found) {
    const start = h.start + shift + 1;
    ranges.push(h.lines.length ? { from: start, to: start + h.lines.length - 1 } : { from: start, to: start });
    shift += h.lines.length - (h.end - h.start);
  }
  return ranges;
}

export function overlaps(x: LineRange, y: LineRange): boolean {
  return x.start <= y.end && y.start <= x.end;
}
