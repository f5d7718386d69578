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

export function lineChangeCounts(before: string, after: string): LineCounts {
  if (before === after) return { added: 0, removed: 0 };
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
