import { applyEdits, DEFAULT_CONTRACT_OPTIONS, MEMORY_ROOT, MemoryTree, runCommand, toVirtual } from '../contract';
import type { CommandOutcome, MemoryReader, RelPath } from '../contract/types';
import type { FileChange, ProposedWrite } from './types';

/**
 * Building a ProposedWrite. The store's write path has the contract's outcome (its edits) and a reader of
 * the tree before the call: `proposedWrite` turns those into files with their text before and after.
 * `proposeFromToolInput` does the same for a tool input against given files, through the real contract
 * (the corpus and the tests use it).
 */

/** Files under a deleted directory whose old text is read, at most (their removal only feeds a medium rule). */
const MAX_DELETED_FILES = 200;

async function filesUnder(reader: MemoryReader, dir: RelPath, out: RelPath[]): Promise<void> {
  for (const entry of await reader.list(dir)) {
    if (out.length >= MAX_DELETED_FILES) return;
    const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (entry.kind === 'dir') await filesUnder(reader, path, out);
    else if (!entry.name.startsWith('.')) out.push(path);
  }
}

/** The write a successful mutating outcome describes; `reader` sees the memory before it. */
export async function proposedWrite(outcome: CommandOutcome, reader: MemoryReader): Promise<ProposedWrite> {
  const command = outcome.command ?? 'view';
  const files: FileChange[] = [];
  for (const edit of outcome.edits ?? []) {
    if (edit.op === 'write') {
      const before = (await reader.kind(edit.path)) === 'file' ? await reader.readText(edit.path) : null;
      files.push({ path: toVirtual(edit.path), before, after: edit.content });
    } else if (edit.op === 'delete') {
      const kind = await reader.kind(edit.path);
      const paths: RelPath[] = [];
      if (kind === 'file') paths.push(edit.path);
      else if (kind === 'dir') await filesUnder(reader, edit.path, paths);
      for (const p of paths) files.push({ path: toVirtual(p), before: await reader.readText(p), after: null });
    }
    // A move changes no text: what it adds is the new path, which the detectors read from `newPath`.
  }
  return { command, path: outcome.path ?? MEMORY_ROOT, ...(outcome.newPath ? { newPath: outcome.newPath } : {}), files };
}

export class ProposalRefused extends Error {
  readonly code = 'proposal_refused';
  constructor(readonly result: string) {
    super(`the contract refuses this call: ${result}`);
  }
}

/**
 * The write a tool input would make against the given files (virtual paths → text), run through the
 * memory contract itself. A call the contract refuses throws ProposalRefused with its result text.
 */
export async function proposeFromToolInput(input: unknown, files: Record<string, string> = {}): Promise<ProposedWrite> {
  const tree = new MemoryTree();
  applyEdits(
    tree,
    Object.entries(files).map(([path, content]) => ({ op: 'write' as const, path: path.replace(/^\/memories\/?/, ''), content })),
  );
  const outcome = await runCommand(input, tree, DEFAULT_CONTRACT_OPTIONS);
  if (outcome.isError) throw new ProposalRefused(outcome.text);
  return proposedWrite(outcome, tree);
}
