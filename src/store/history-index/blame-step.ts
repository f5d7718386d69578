import { diffArrays } from 'diff';

/**
 * One step of blame, pure: the origins of a file's lines after a new revision, from the origins before
 * it. Shared by the index's incremental blame (blame-index.ts, extended by every write) and the read
 * model's replay of older revisions (src/history/blame.ts), so both attribute lines the same way.
 */

export const BLAME_MAX_EDIT_LENGTH = 2000;

export interface BlameState {
  lines: string[];
  /** For each line, the commit of the revision that wrote it. */
  origins: string[];
}

/** Pure: carry unchanged lines' origins over, attribute added lines to `commit`. */
export function advance(previous: BlameState, lines: string[], commit: string): BlameState {
  // Lines shared at both ends keep their origins without going through the diff: a one-line change
  // of a half-million-line file costs one scan instead of a diff of the whole file.
  const old = previous.lines;
  let head = 0;
  while (head < old.length && head < lines.length && old[head] === lines[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < lines.length - head && old[old.length - 1 - tail] === lines[lines.length - 1 - tail]) tail++;
  const changes = diffArrays(old.slice(head, old.length - tail), lines.slice(head, lines.length - tail), { maxEditLength: BLAME_MAX_EDIT_LENGTH });
  const origins: string[] = previous.origins.slice(0, head);
  if (!changes) {
    for (let k = head; k < lines.length - tail; k++) origins.push(commit);
    for (let k = old.length - tail; k < old.length; k++) origins.push(previous.origins[k]);
    return { lines, origins };
  }
  let oldIndex = head;
  for (const change of changes) {
    if (change.removed) {
      oldIndex += change.count;
    } else if (change.added) {
      for (let k = 0; k < change.count; k++) origins.push(commit);
    } else {
      for (let k = 0; k < change.count; k++) origins.push(previous.origins[oldIndex + k]);
      oldIndex += change.count;
    }
  }
  for (let k = old.length - tail; k < old.length; k++) origins.push(previous.origins[k]);
  return { lines, origins };
}
