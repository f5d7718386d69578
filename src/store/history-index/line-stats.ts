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

/** Lines of a text as blame and search see them: split on \n, without the empty piece after a final newline. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}
