import { structuredPatch } from 'diff';

/**
 * How many lines a change added and removed, counted exactly as the audit UI's diff view counts them
 * (the same unified diff, with the same give-up bound: a pair of texts too different to diff within
 * DIFF_MAX_EDIT_LENGTH counts as 0/0, and the UI shows "too large"). The history index records these at
 * write time, so list pages never re-read blobs for them.
 */

export const DIFF_CONTEXT_LINES = 3;
export const DIFF_MAX_EDIT_LENGTH = 5000;

export interface LineCounts {
  added: number;
  removed: number;
}

/**
 * Whether a line diff of the two texts certainly needs more than `max` edits (lines added plus lines
 * removed), known without searching: a diff keeps at most the lines the two texts have in common (as
 * multisets), so it edits at least all the others. jsdiff would search up to `max` edits before giving
 * up (a cost of about max² steps: seconds for two unrelated 6,000-line versions); when this says so, the
 * answer is the same "give up", found in one pass. (Texts with many lines in common but far apart, such
 * as the same lines reversed, still take the search.)
 */
export function beyondEditLength(before: string, after: string, max: number): boolean {
  // As many lines as jsdiff has tokens; a last line without its newline counts as equal to one with it
  // here (jsdiff would not), which only lowers the bound.
  const a = splitLines(before);
  const b = splitLines(after);
  if (Math.abs(a.length - b.length) > max) return true;
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let common = 0;
  for (const line of b) {
    const n = counts.get(line);
    if (n) {
      common++;
      counts.set(line, n - 1);
    }
  }
  return a.length + b.length - 2 * common > max;
}

export function lineChangeCounts(before: string, after: string): LineCounts {
  if (before === after) return { added: 0, removed: 0 };
  // Only the lines between what the two texts share at their start and end are diffed: a minimal diff
  // keeps every such line, so the counts (and the give-up bound, which counts edits) are the same, and a
  // one-line change to a large file costs that line, not a tokenized copy of the file.
  ({ before, after } = trimCommonLines(before, after, 0));
  if (beyondEditLength(before, after, DIFF_MAX_EDIT_LENGTH)) return { added: 0, removed: 0 };
  const patch = structuredPatch('a', 'b', before, after, undefined, undefined, {
    context: DIFF_CONTEXT_LINES,
    maxEditLength: DIFF_MAX_EDIT_LENGTH,
  });
  if (!patch) return { added: 0, removed: 0 };
  let added = 0;
  let removed = 0;
  for (const hunk of patch.hunks) {
    for (const line of hunk.lines) {
      if (line[0] === '+') added++;
      else if (line[0] === '-') removed++;
    }
  }
  return { added, removed };
}

/**
 * The two texts without the whole lines they share at the start and at the end, keeping `context` of
 * those lines on each side so the diff shows the same context; `skippedLines` is how many leading lines
 * were left out (to be added to the line numbers of the hunks).
 */
export function trimCommonLines(before: string, after: string, context: number): { before: string; after: string; skippedLines: number } {
  const shorter = Math.min(before.length, after.length);
  let same = 0;
  while (same < shorter && before.charCodeAt(same) === after.charCodeAt(same)) same++;
  let start = same === 0 ? 0 : before.lastIndexOf('\n', same - 1) + 1; // a line start within the shared prefix
  for (let k = 0; k < context && start > 0; k++) start = start >= 2 ? before.lastIndexOf('\n', start - 2) + 1 : 0;
  let tail = 0;
  const tailRoom = shorter - start;
  while (tail < tailRoom && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail++;
  let end = before.length; // in `before`; the shared suffix is cut at a line start
  if (tail > 0) {
    const newline = before.indexOf('\n', before.length - tail);
    if (newline !== -1) {
      end = newline + 1;
      for (let k = 0; k < context && end < before.length; k++) {
        const next = before.indexOf('\n', end);
        end = next === -1 ? before.length : next + 1;
      }
    }
  }
  if (start === 0 && end === before.length) return { before, after, skippedLines: 0 };
  const cutAtEnd = before.length - end;
  let skipped: number | undefined;
  return {
    before: before.slice(start, end),
    after: after.slice(start, after.length - cutAtEnd),
    // Counted only when asked (the UI's hunks need it, the line counts of every write do not): a line at a
    // time over the whole shared prefix, most of the trim's cost in a large file.
    get skippedLines() {
      if (skipped === undefined) {
        skipped = 0;
        for (let i = before.indexOf('\n'); i !== -1 && i < start; i = before.indexOf('\n', i + 1)) skipped++;
      }
      return skipped;
    },
  };
}

/** Lines of a text as blame and search see them: split on \n, without the empty piece after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
