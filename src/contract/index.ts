/**
 * The pure memory-tool contract: `runCommand` turns one untrusted tool input into the exact result text
 * and, on success of a mutating command, the tree edits the store must apply.
 */
import { create } from './commands/create';
import { deletePath } from './commands/delete';
import { insert } from './commands/insert';
import { rename } from './commands/rename';
import { strReplace } from './commands/str_replace';
import { view } from './commands/view';
import { failure, NOT_AN_OBJECT_ERROR, readInputFields, unknownCommandError, type CommandHandler } from './input';
import type { CommandOutcome, ContractOptions, MemoryCommandName, MemoryReader } from './types';

export * from './types';
export { formatSize, numberLines } from './format';
export { NOT_AN_OBJECT_ERROR, unknownCommandError } from './input';
export { isValidId, MEMORY_ROOT, resolvePath, toVirtual, type ResolvedPath } from './paths';
export { isNewId, newIdProblem, OBJECT_ID_LIKE } from './ids';
export { MemoryTree, applyEdits } from './memory-tree';

export const DEFAULT_CONTRACT_OPTIONS: Readonly<ContractOptions> = Object.freeze({
  createMode: 'overwrite',
  maxFileBytes: 1024 * 1024,
});

/** Exactly one handler per command; the Record type makes a missing or extra command a compile error. */
const COMMAND_HANDLERS: Readonly<Record<MemoryCommandName, CommandHandler>> = Object.freeze({
  view,
  create,
  str_replace: strReplace,
  insert,
  delete: deletePath,
  rename,
});

/** Own properties only: `valueOf`, `toString`, `__proto__`... must be unknown commands, not prototype hits. */
function isCommandName(command: unknown): command is MemoryCommandName {
  return typeof command === 'string' && Object.hasOwn(COMMAND_HANDLERS, command);
}

export async function runCommand(
  input: unknown,
  reader: MemoryReader,
  options: ContractOptions,
): Promise<CommandOutcome> {
  const fields = readInputFields(input);
  if (fields === null) return failure(NOT_AN_OBJECT_ERROR);
  const command = fields.get('command');
  if (!isCommandName(command)) return failure(unknownCommandError(command));
  const outcome = await COMMAND_HANDLERS[command](fields, reader, options);
  return { ...outcome, command };
}
