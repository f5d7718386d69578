import { diffArrays } from 'diff';
import type * as Diff3 from 'node-diff3' with { 'resolution-mode': 'import' };

/**
 * Line-level three-way merge for reverting one call: base = the content the call wrote, ours = the
 * content now, theirs = the content before the call. Pure functions over strings.
 *
 * The regions where both sides moved away from base are found as diff3 does (Khanna–Kunal–Pierce, the
 * region logic of node-diff3 and GNU diff3), from two line diffs of base: node-diff3's LCS for short texts
 * (fast there, but it scans its candidates linearly: hours for a 1 MiB file of half a million lines),
 * jsdiff's Myers search, bounded by edit distance, for longer ones. Like GNU diff3, changes that
 * merely touch (a deleted line and a line inserted right after it) form one conflicting region; memory
 * files are short lists of facts where "undo this line, keep the line the agent added below it" is the
 * common case, so each such region is split again and only changes to the same lines, or insertions at
 * the same place, are conflicts.
 */

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
 * Bounds of one merge, so that a hostile file cannot hold the process. Lines that all three texts share at
 * the start and at the end are left out first (a one-line change of a 1 MiB file merges a few lines);
 * each line diff may then search at most `editLength` edits (its cost is about lines × edit distance).
 * Versions further apart are reported `tooLarge` (a conflict: nothing is written).
 */
export const MERGE_LIMITS = {
  /**
   * A line diff is node-diff3's LCS while (lines of one text) × (lines of the other) and the pairs of equal
   * lines (its work with repeated lines, such as blank ones) stay under these.
   */
  lcsWork: 4_000_000,
  lcsPairs: 100_000,
  /** Beyond that, the edit distance (lines) jsdiff's search may reach; further apart is `tooLarge`. */
  editLength: 1000,
} as const;

// node-diff3 ships a CommonJS build (exports.require) but types that TypeScript reads as ESM.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const diff3: typeof Diff3 = require('node-diff3');

export type MergeResult =
  | { clean: true; text: string }
  | { clean: false; conflicts: MergeConflict[]; tooLarge?: false }
  /** Base and ours or theirs differ in more lines than MERGE_LIMITS allow; `lines`: base lines left to merge. */
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

/** Texts split around the whole lines they all share at the start and at the end (see splitShared). */
export interface SharedSplit {
  /** How many lines all texts share at the start, and at the end. */
  head: number;
  tail: number;
  /** Each text's lines between them (splitLines(text) = shared head ++ middle ++ shared tail). */
  middles: string[][];
  /** The text of `middle` between the shared lines. */
  join(middle: string[]): string;
}

/**
 * `texts` split around the whole lines they all share at the start and at the end, found on the strings
 * first (a character loop), so that only the differing middles are split into lines: a one-line change
 * of a 1 MiB file splits a few lines, not half a million.
 */
export function splitShared(texts: string[]): SharedSplit {
  const first = texts[0];
  let prefix = Math.min(...texts.map((t) => t.length));
  for (const t of texts.slice(1)) prefix = commonPrefix(first, t, prefix);
  prefix = first.lastIndexOf('\n', prefix - 1) + 1; // back to a line start (0 when no whole line is shared)
  let suffix = Math.min(...texts.map((t) => t.length)) - prefix;
  for (const t of texts.slice(1)) suffix = commonSuffix(first, t, suffix);
  // Forward to a line start: just after the first newline within the shared end (which all texts hold).
  const newline = suffix === 0 ? -1 : first.indexOf('\n', first.length - suffix);
  suffix = newline === -1 ? 0 : first.length - newline - 1;
  // The shared lines as joined text and a count (an empty list of lines is not the empty line).
  let head = prefix === 0 ? null : { text: first.slice(0, prefix - 1), lines: lineCount(first.slice(0, prefix - 1)) };
  // (The tail's line count is not needed to merge: it is counted only when asked for.)
  let tail = newline === -1 ? null : { text: first.slice(first.length - suffix), lines: 0 };
  // A middle ends with the newline before the tail, which ends its last line rather than starting one.
  let middles = texts.map((t) => splitLines(t.slice(prefix, newline === -1 ? t.length : t.length - suffix - 1)));
  // Shared lines the character loop could not see as whole (a middle's last line is whole; see above).
  const more = sharedEnds(middles);
  if (more.head) head = joinLines(head, { text: middles[0].slice(0, more.head).join('\n'), lines: more.head });
  if (more.tail) tail = joinLines({ text: middles[0].slice(middles[0].length - more.tail).join('\n'), lines: more.tail }, tail);
  if (more.head || more.tail) middles = middles.map((m) => m.slice(more.head, m.length - more.tail));
  const tailText = tail?.text;
  return {
    head: head?.lines ?? 0,
    get tail() {
      return tailText === undefined ? 0 : lineCount(tailText);
    },
    middles,
    join: (middle) => [head, middle.length ? { text: middle.join('\n'), lines: middle.length } : null, tail].reduce(joinLines, null)?.text ?? '',
  };
}

/** Characters compared at once (string equality of two slices is a memory compare). */
const BLOCK = 4096;

/** How many characters `a` and `b` share at the start, at most `limit`. */
function commonPrefix(a: string, b: string, limit: number): number {
  let k = 0;
  while (k + BLOCK <= limit && a.slice(k, k + BLOCK) === b.slice(k, k + BLOCK)) k += BLOCK;
  while (k < limit && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  return k;
}

/** How many characters `a` and `b` share at the end, at most `limit`. */
function commonSuffix(a: string, b: string, limit: number): number {
  let k = 0;
  while (k + BLOCK <= limit && a.slice(a.length - k - BLOCK, a.length - k) === b.slice(b.length - k - BLOCK, b.length - k)) k += BLOCK;
  while (k < limit && a.charCodeAt(a.length - 1 - k) === b.charCodeAt(b.length - 1 - k)) k++;
  return k;
}

type Lines = { text: string; lines: number } | null;

/** Two runs of lines as one (null: no lines at all). */
function joinLines(x: Lines, y: Lines): Lines {
  if (!x) return y;
  if (!y) return x;
  return { text: `${x.text}\n${y.text}`, lines: x.lines + y.lines };
}

export function threeWayMerge(base: string, ours: string, theirs: string): MergeResult {
  const split = splitShared([base, ours, theirs]);
  const [o, a, b] = split.middles;
  const head = split.head;
  const regions = diff3Regions(a, o, b);
  if (!regions) return { clean: false, conflicts: [], tooLarge: true, lines: o.length };
  const merged: string[] = [];
  const conflicts: MergeConflict[] = [];
  for (const region of regions) {
    if (region.stable) {
      append(merged, region.content);
      continue;
    }
    const resolved = mergeRegion(o.slice(region.o.start, region.o.end), a.slice(region.a.start, region.a.end), b.slice(region.b.start, region.b.end));
    if (resolved) {
      append(merged, resolved);
    } else {
      conflicts.push({
        ours: { start: head + region.a.start, end: head + region.a.end },
        base: { start: head + region.o.start, end: head + region.o.end },
      });
    }
  }
  return conflicts.length ? { clean: false, conflicts } : { clean: true, text: split.join(merged) };
}

type Region = { stable: true; content: string[] } | { stable: false; o: LineRange; a: LineRange; b: LineRange };

/**
 * diff3's regions of base `o` against `a` and `b`: stable runs (base, or one side's change alone) and
 * unstable regions where both sides changed overlapping or touching lines of base. Null when either diff
 * is beyond MERGE_LIMITS.
 */
function diff3Regions(a: string[], o: string[], b: string[]): Region[] | null {
  const toA = hunks(o, a);
  const toB = hunks(o, b);
  if (!toA || !toB) return null;
  // Each change as base range → side range (its start in the side: base start + the shift so far).
  type Change = { side: 'a' | 'b'; o: LineRange; start: number; length: number };
  const changes: Change[] = [];
  for (const [side, list] of [['a', toA], ['b', toB]] as const) {
    let shift = 0;
    for (const h of list) {
      changes.push({ side, o: { start: h.start, end: h.end }, start: h.start + shift, length: h.lines.length });
      shift += h.lines.length - (h.end - h.start);
    }
  }
  changes.sort((x, y) => x.o.start - y.o.start);
  const regions: Region[] = [];
  let offset = 0;
  const advanceTo = (end: number) => {
    if (end > offset) regions.push({ stable: true, content: o.slice(offset, end) });
    offset = Math.max(offset, end);
  };
  for (let k = 0; k < changes.length; ) {
    const first = changes[k];
    let end = first.o.end;
    const group = [first];
    for (k++; k < changes.length && changes[k].o.start <= end; k++) {
      end = Math.max(end, changes[k].o.end);
      group.push(changes[k]);
    }
    advanceTo(first.o.start);
    if (group.length === 1) {
      const side = first.side === 'a' ? a : b;
      if (first.length > 0) regions.push({ stable: true, content: side.slice(first.start, first.start + first.length) });
    } else {
      // Each side's range: its changes' extent, widened by the base lines of the region they did not touch.
      const range = (side: 'a' | 'b'): LineRange => {
        const mine = group.filter((c) => c.side === side);
        if (mine.length === 0) return { start: first.o.start + shiftBefore(side === 'a' ? toA : toB, first.o.start), end: end + shiftBefore(side === 'a' ? toA : toB, end) };
        const sideStart = Math.min(...mine.map((c) => c.start));
        const sideEnd = Math.max(...mine.map((c) => c.start + c.length));
        const baseStart = Math.min(...mine.map((c) => c.o.start));
        const baseEnd = Math.max(...mine.map((c) => c.o.end));
        return { start: sideStart + (first.o.start - baseStart), end: sideEnd + (end - baseEnd) };
      };
      regions.push({ stable: false, o: { start: first.o.start, end }, a: range('a'), b: range('b') });
    }
    offset = end;
  }
  advanceTo(o.length);
  return regions;
}

/** Lines a side has gained (or lost, negative) before base line `at`, from its changes that end by then. */
function shiftBefore(list: Hunk[], at: number): number {
  let shift = 0;
  for (const h of list) {
    if (h.end > at || (h.start === at && h.end === at)) break;
    shift += h.lines.length - (h.end - h.start);
  }
  return shift;
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
 * tail diffed (see MERGE_LIMITS), or null when they are long and differ by more than `editLength` lines.
 */
export function hunks(from: string[], to: string[]): Hunk[] | null {
  const { head, tail } = sharedEnds([from, to]);
  const x = from.slice(head, from.length - tail);
  const y = to.slice(head, to.length - tail);
  if (x.length * y.length <= MERGE_LIMITS.lcsWork && equalPairs(x, y) <= MERGE_LIMITS.lcsPairs) {
    return diff3.diffIndices(x, y).map((d) => ({ start: head + d.buffer1[0], end: head + d.buffer1[0] + d.buffer1[1], lines: d.buffer2Content }));
  }
  const parts = diffArrays(x, y, { maxEditLength: MERGE_LIMITS.editLength });
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

/** How many (line of x, line of y) pairs are equal: what node-diff3's LCS visits. */
function equalPairs(x: string[], y: string[]): number {
  const counts = new Map<string, number>();
  for (const line of y) counts.set(line, (counts.get(line) ?? 0) + 1);
  let pairs = 0;
  for (const line of x) pairs += counts.get(line) ?? 0;
  return pairs;
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

/** The line changes from one text to another (hunks of `from`, see `hunks`), splitting only what differs. */
function textHunks(from: string, to: string): Hunk[] | null {
  const { head, middles } = splitShared([from, to]);
  const found = hunks(middles[0], middles[1]);
  return found && found.map((h) => ({ start: h.start + head, end: h.end + head, lines: h.lines }));
}

/** Lines of a text as splitLines counts them. */
function lineCount(text: string): number {
  let count = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) count++;
  return count;
}

/**
 * Where a later call's change lands in base coordinates: `before` → `after` is that call's change and
 * base is the reverted call's result. Lines of `before` that are not in base sit between the base lines
 * around them, so a change there maps to that gap (or to the base lines it replaced). When either diff is
 * beyond MERGE_LIMITS the footprint is the whole of base (the call is counted as touching everything).
 */
export function baseFootprint(base: string, before: string, after: string): LineRange[] {
  const anchor = anchorLines(textHunks(base, before));
  const change = textHunks(before, after);
  if (!anchor || !change) return [{ start: 0, end: lineCount(base) }];
  const gapBefore = (i: number) => (i > 0 ? anchor(i - 1).end : 0);
  // Past the last line of `before`: the end of base (both counted only then, half a million lines).
  const gapAfter = (i: number) => (i < lineCount(before) ? anchor(i).start : lineCount(base));
  return change.map((h) =>
    h.start === h.end
      ? { start: gapBefore(h.start), end: gapAfter(h.start) }
      : { start: anchor(h.start).start, end: anchor(h.end - 1).end },
  );
}

/**
 * For a line of the other text, the range of base lines it stands for, from the hunks of base → other
 * (computed per line asked for, not for all of them).
 */
function anchorLines(found: Hunk[] | null): ((i: number) => LineRange) | null {
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
  const found = textHunks(before, after);
  if (!found) return [{ from: 1, to: Math.max(1, lineCount(after) - (after.endsWith('\n') ? 1 : 0)) }];
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
