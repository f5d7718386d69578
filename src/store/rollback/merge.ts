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

export type MergeResult = { clean: true; text: string } | { clean: false; conflicts: MergeConflict[] };

interface Hunk extends LineRange {
  lines: string[];
}

export function threeWayMerge(base: string, ours: string, theirs: string): MergeResult {
  const o = splitLines(base);
  const a = splitLines(ours);
  const b = splitLines(theirs);
  const merged: string[] = [];
  const conflicts: MergeConflict[] = [];
  for (const region of diff3.diff3MergeRegions(a, o, b)) {
    if (region.stable) {
      merged.push(...region.bufferContent);
      continue;
    }
    const resolved = mergeRegion(region.oContent, region.aContent, region.bContent);
    if (resolved) {
      merged.push(...resolved);
    } else {
      conflicts.push({
        ours: { start: region.aStart, end: region.aStart + region.aLength },
        base: { start: region.oStart, end: region.oStart + region.oLength },
      });
    }
  }
  return conflicts.length ? { clean: false, conflicts } : { clean: true, text: merged.join('\n') };
}

/** Apply both sides' changes to one unstable region, or null when they touch the same lines. */
function mergeRegion(o: string[], a: string[], b: string[]): string[] | null {
  if (sameLines(a, b)) return a;
  const ours = hunks(o, a);
  const theirs = hunks(o, b).filter((y) => !ours.some((x) => sameHunk(x, y)));
  for (const x of ours) for (const y of theirs) if (collide(x, y)) return null;
  // Insertions sort before a replacement starting at the same line, so the order is well defined.
  const all = [...ours, ...theirs].sort((x, y) => x.start - y.start || (x.end - x.start) - (y.end - y.start));
  const out: string[] = [];
  let cursor = 0;
  for (const h of all) {
    out.push(...o.slice(cursor, h.start), ...h.lines);
    cursor = h.end;
  }
  out.push(...o.slice(cursor));
  return out;
}

/** The changes from `from` to `to` as replaced ranges of `from`. */
export function hunks(from: string[], to: string[]): Hunk[] {
  const result: Hunk[] = [];
  let position = 0;
  let open: Hunk | null = null;
  for (const part of diffArrays(from, to)) {
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
      open.lines.push(...part.value);
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
 * around them, so a change there maps to that gap (or to the base lines it replaced).
 */
export function baseFootprint(base: string, before: string, after: string): LineRange[] {
  const o = splitLines(base);
  const anchors = anchorLines(o, splitLines(before));
  const gapBefore = (i: number) => (i > 0 ? anchors[i - 1].end : 0);
  const gapAfter = (i: number) => (i < anchors.length ? anchors[i].start : o.length);
  return hunks(splitLines(before), splitLines(after)).map((h) =>
    h.start === h.end
      ? { start: gapBefore(h.start), end: gapAfter(h.start) }
      : { start: anchors[h.start].start, end: anchors[h.end - 1].end },
  );
}

/** For each line of `other`, the range of base lines it stands for. */
function anchorLines(base: string[], other: string[]): LineRange[] {
  const anchors: LineRange[] = [];
  let cursor = 0;
  for (const h of hunks(base, other)) {
    for (let k = cursor; k < h.start; k++) anchors.push({ start: k, end: k + 1 });
    for (let i = 0; i < h.lines.length; i++) anchors.push({ start: h.start, end: h.end });
    cursor = h.end;
  }
  for (let k = cursor; k < base.length; k++) anchors.push({ start: k, end: k + 1 });
  return anchors;
}

/** Lines of `after` that a change from `before` wrote or next to which it deleted (1-based, inclusive). */
export function changedLines(before: string, after: string): { from: number; to: number }[] {
  const ranges: { from: number; to: number }[] = [];
  let shift = 0;
  for (const h of hunks(splitLines(before), splitLines(after))) {
    const start = h.start + shift + 1;
    ranges.push(h.lines.length ? { from: start, to: start + h.lines.length - 1 } : { from: start, to: start });
    shift += h.lines.length - (h.end - h.start);
  }
  return ranges;
}

export function overlaps(x: LineRange, y: LineRange): boolean {
  return x.start <= y.end && y.start <= x.end;
}
