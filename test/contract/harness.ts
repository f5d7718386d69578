/** Shared helpers for the contract tests: runs commands against a fresh in-memory tree. */
import * as path from 'path';
import { applyEdits, DEFAULT_CONTRACT_OPTIONS, MemoryTree, runCommand } from '../../src/contract';
import type { CommandOutcome, ContractOptions } from '../../src/contract';

/** The project's own copy of the contract's conformance vectors and hostile paths (see docs/memory-tool-contract.md). */
export const CONFORMANCE_DIR = path.resolve(__dirname, '../conformance');

export function contractOptions(overrides: Partial<ContractOptions> = {}): ContractOptions {
  return { ...DEFAULT_CONTRACT_OPTIONS, ...overrides };
}

/** Runs one command and, like the store would, applies its edits when it succeeded. */
export async function runAndApply(
  tree: MemoryTree,
  input: unknown,
  options: ContractOptions = contractOptions(),
): Promise<CommandOutcome> {
  const outcome = await runCommand(input, tree, options);
  if (outcome.edits !== undefined) applyEdits(tree, outcome.edits);
  return outcome;
}

/** A tree built by commands that must all succeed. */
export async function treeFrom(setup: readonly unknown[], options = contractOptions()): Promise<MemoryTree> {
  const tree = new MemoryTree();
  for (const command of setup) {
    const outcome = await runAndApply(tree, command, options);
    if (outcome.isError) throw new Error(`setup ${JSON.stringify(command)} failed: ${outcome.text}`);
  }
  return tree;
}
