/** `create`: write a whole file, making missing parent directories (spec §3 create). */
import { failure, readTextField, type CommandHandler } from '../input';
import { MEMORY_ROOT, resolvePath, toVirtual } from '../paths';
import { fileSizeLimitError, findFileAncestor } from './shared';

export const create: CommandHandler = async (input, reader, options) => {
  const resolved = resolvePath(input.get('path'));
  if (!resolved.ok) return failure(resolved.error);
  const fileText = readTextField(input, 'file_text');
  if (!fileText.ok) return failure(fileText.error);
  const shownPath = resolved.asGiven;

  // The root is named canonically whatever spelling (`/memories/`) the caller used.
  if (resolved.rel === '') return failure(`Error: File ${MEMORY_ROOT} already exists`);
  const existing = await reader.kind(resolved.rel);
  if (existing === 'dir' || (existing === 'file' && options.createMode === 'error')) {
    return failure(`Error: File ${shownPath} already exists`);
  }
  if (existing === null) {
    const fileAncestor = await findFileAncestor(reader, resolved.rel);
    if (fileAncestor !== null) {
      return failure(`Error: Cannot create ${shownPath}: ${toVirtual(fileAncestor)} is not a directory`);
    }
  }
  const limitError = fileSizeLimitError(shownPath, fileText.value, options);
  if (limitError !== null) return failure(limitError);

  return {
    text: `File created successfully at: ${shownPath}`,
    isError: false,
    path: resolved.virtual,
    edits: [{ op: 'write', path: resolved.rel, content: fileText.value }],
  };
};
