/** `insert`: splice text in after a given line (spec §3 insert). */
import { displayValue, splitLines } from '../format';
import { failure, isInsertLineInRange, readTextField, type CommandHandler } from '../input';
import { resolvePath } from '../paths';
import { fileSizeLimitError } from './shared';

export const insert: CommandHandler = async (input, reader, options) => {
  const resolved = resolvePath(input.get('path'));
  if (!resolved.ok) return failure(resolved.error);
  const insertText = readTextField(input, 'insert_text');
  if (!insertText.ok) return failure(insertText.error);
  const shownPath = resolved.asGiven;

  if ((await reader.kind(resolved.rel)) !== 'file') {
    return failure(`Error: The path ${shownPath} does not exist`);
  }
  const lines = splitLines(await reader.readText(resolved.rel));
  const insertLine = input.get('insert_line');
  if (!isInsertLineInRange(insertLine, lines.length)) {
    return failure(
      `Error: Invalid \`insert_line\` parameter: ${displayValue(insertLine)}. It should be within the range of lines of the file: [0, ${lines.length}]`,
    );
  }

  // The text becomes whole lines of its own, so its own final newline would add an empty line.
  const text = insertText.value.endsWith('\n') ? insertText.value.slice(0, -1) : insertText.value;
  lines.splice(insertLine, 0, text);
  const newContent = lines.join('\n');
  const limitError = fileSizeLimitError(shownPath, newContent, options);
  if (limitError !== null) return failure(limitError);

  return {
    text: `The file ${shownPath} has been edited.`,
    isError: false,
    path: resolved.virtual,
    edits: [{ op: 'write', path: resolved.rel, content: newContent }],
  };
};
