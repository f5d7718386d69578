/** `rename`: move a file or directory, making missing parents of the destination (spec §3 rename). */
import { failure, type CommandHandler } from '../input';
import { MEMORY_ROOT, resolvePath, toVirtual } from '../paths';
import { findFileAncestor } from './shared';

export const rename: CommandHandler = async (input, reader) => {
  const source = resolvePath(input.get('old_path'), 'old_path');
  if (!source.ok) return failure(source.error);
  const destination = resolvePath(input.get('new_path'), 'new_path');
  if (!destination.ok) return failure(destination.error);
  const oldPath = source.asGiven;
  const newPath = destination.asGiven;

  // The order of these checks is part of the contract: the first that fails decides the text.
  if (source.rel === '') return failure(`Error: Cannot rename the ${MEMORY_ROOT} directory itself`);
  if ((await reader.kind(destination.rel)) !== null) {
    return failure(`Error: The destination ${newPath} already exists`);
  }
  if ((await reader.kind(source.rel)) === null) return failure(`Error: The path ${oldPath} does not exist`);
  if (destination.rel.startsWith(`${source.rel}/`)) {
    return failure(`Error: Cannot move ${oldPath} to a subdirectory of itself, ${newPath}`);
  }
  const fileAncestor = await findFileAncestor(reader, destination.rel);
  if (fileAncestor !== null) {
    return failure(`Error: Cannot move ${oldPath} to ${newPath}: ${toVirtual(fileAncestor)} is not a directory`);
  }

  return {
    text: `Successfully renamed ${oldPath} to ${newPath}`,
    isError: false,
    path: source.virtual,
    newPath: destination.virtual,
    edits: [{ op: 'move', from: source.rel, to: destination.rel }],
  };
};
