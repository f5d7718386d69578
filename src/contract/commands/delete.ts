/** `delete`: remove a file, or a directory with everything in it (spec §3 delete). */
import { failure, type CommandHandler } from '../input';
import { MEMORY_ROOT, resolvePath } from '../paths';

export const deletePath: CommandHandler = async (input, reader) => {
  const resolved = resolvePath(input.get('path'));
  if (!resolved.ok) return failure(resolved.error);

  if (resolved.rel === '') return failure(`Error: Cannot delete the ${MEMORY_ROOT} directory itself`);
  if ((await reader.kind(resolved.rel)) === null) {
    return failure(`Error: The path ${resolved.asGiven} does not exist`);
  }
  return {
    text: `Successfully deleted ${resolved.asGiven}`,
    isError: false,
    path: resolved.virtual,
    edits: [{ op: 'delete', path: resolved.rel }],
  };
};
