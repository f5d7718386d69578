/** `str_replace`: replace the one verbatim occurrence of `old_str` (spec §3 str_replace). */
import { snippetAround, splitLines } from '../format';
import { failure, readTextField, type CommandHandler } from '../input';
import { resolvePath } from '../paths';
import { fileSizeLimitError } from './shared';

export const strReplace: CommandHandler = async (input, reader, options) => {
  const resolved = resolvePath(input.get('path'));
  if (!resolved.ok) return failure(resolved.error);
  const oldStr = readTextField(input, 'old_str');
  if (!oldStr.ok) return failure(oldStr.error);
  const newStr = readTextField(input, 'new_str', '');
  if (!newStr.ok) return failure(newStr.error);
  const shownPath = resolved.asGiven;

  if ((await reader.kind(resolved.rel)) !== 'file') {
    return failure(`Error: The path ${shownPath} does not exist. Please provide a valid path.`);
  }
  const content = await reader.readText(resolved.rel);
  const matches = findOccurrences(content, oldStr.value);
  if (matches.count === 0) {
    return failure(
      `No replacement was performed, old_str \`${oldStr.value}\` did not appear verbatim in ${shownPath}.`,
    );
  }
  if (matches.count > 1) {
    return failure(
      `No replacement was performed. Multiple occurrences of old_str \`${oldStr.value}\` in lines: ${matches.startLines.join(', ')}. Please ensure it is unique`,
    );
  }

  // Slicing instead of String.replace keeps `$&`, `$1`... in new_str literal.
  const start = content.indexOf(oldStr.value);
  const newContent = content.slice(0, start) + newStr.value + content.slice(start + oldStr.value.length);
  const limitError = fileSizeLimitError(shownPath, newContent, options);
  if (limitError !== null) return failure(limitError);

  return {
    text: `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippetAround(newContent, matches.startLines[0])}`,
    isError: false,
    path: resolved.virtual,
    edits: [{ op: 'write', path: resolved.rel, content: newContent }],
  };
};

interface Occurrences {
  /** Non-overlapping occurrences of old_str in the content. */
  count: number;
  /** Distinct 1-based lines on which an occurrence starts, ascending. */
  startLines: number[];
}

/**
 * An empty `old_str` occurs once in an empty file; in any other file it occurs at every position, so it
 * is never unique (even in a one-line file) and every line is reported.
 */
function findOccurrences(content: string, oldStr: string): Occurrences {
  if (oldStr === '') {
    if (content === '') return { count: 1, startLines: [1] };
    return { count: content.length + 1, startLines: splitLines(content).map((_, index) => index + 1) };
  }
  const startLines: number[] = [];
  let count = 0;
  let line = 1;
  let scannedUpTo = 0;
  for (let index = content.indexOf(oldStr); index !== -1; index = content.indexOf(oldStr, index + oldStr.length)) {
    count++;
    line += countNewlines(content, scannedUpTo, index);
    scannedUpTo = index;
    if (startLines[startLines.length - 1] !== line) startLines.push(line);
  }
  return { count, startLines };
}

function countNewlines(content: string, from: number, to: number): number {
  let count = 0;
  for (let newline = content.indexOf('\n', from); newline !== -1 && newline < to; newline = content.indexOf('\n', newline + 1)) {
    count++;
  }
  return count;
}
