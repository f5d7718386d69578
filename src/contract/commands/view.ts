/** `view`: a directory listing two levels deep, or a file's numbered lines (spec §3 view). */
import { DIRECTORY_SIZE_TEXT, formatSize, numberLines, splitLines } from '../format';
import { failure, readViewRange, type CommandHandler } from '../input';
import { childPath, resolvePath } from '../paths';
import type { CommandOutcome, DirEntry, MemoryReader, RelPath } from '../types';

const MAX_VIEW_LINES = 999_999;
const LISTING_DEPTH = 2;

export const view: CommandHandler = async (input, reader) => {
  const resolved = resolvePath(input.get('path'));
  if (!resolved.ok) return failure(resolved.error);
  const shownPath = resolved.asGiven;

  const kind = await reader.kind(resolved.rel);
  if (kind === null) {
    return failure(`The path ${shownPath} does not exist. Please provide a valid path.`);
  }
  if (kind === 'dir') {
    // Listings drop the trailing `/` the caller may have given; entry lines append their own.
    const shownDir = shownPath.endsWith('/') ? shownPath.slice(0, -1) : shownPath;
    return { text: await listDirectory(reader, resolved.rel, shownDir), isError: false, path: resolved.virtual };
  }
  return viewFile(reader, resolved.rel, shownPath, resolved.virtual, input.get('view_range'));
};

async function viewFile(
  reader: MemoryReader,
  rel: RelPath,
  shownPath: string,
  virtual: string,
  viewRangeInput: unknown,
): Promise<CommandOutcome> {
  const lines = splitLines(await reader.readText(rel));
  if (lines.length > MAX_VIEW_LINES) {
    return failure(`File ${shownPath} exceeds maximum line limit of 999,999 lines.`);
  }
  let firstLine = 1;
  let shownLines = lines;
  const viewRange = readViewRange(viewRangeInput);
  if (viewRange !== null) {
    const [requestedStart, requestedEnd] = viewRange;
    firstLine = Math.max(1, requestedStart);
    // JS slice semantics on purpose: an end past EOF clamps, other negative ends count from the end.
    shownLines = lines.slice(firstLine - 1, requestedEnd === -1 ? lines.length : requestedEnd);
  }
  return {
    text: `Here's the content of ${shownPath} with line numbers:\n${numberLines(shownLines, firstLine)}`,
    isError: false,
    path: virtual,
  };
}

/** Hidden names (this includes the `.keep` directory placeholder) and node_modules are never listed. */
function isListed(entry: DirEntry): boolean {
  return !entry.name.startsWith('.') && entry.name !== 'node_modules';
}

/** Sorted by UTF-16 code units, like JS's default sort (uppercase, then `_`, then lowercase). */
function byCodeUnits(a: DirEntry, b: DirEntry): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

async function listDirectory(reader: MemoryReader, rel: RelPath, shownDir: string): Promise<string> {
  const lines = [
    `Here're the files and directories up to 2 levels deep in ${shownDir}, excluding hidden items and node_modules:`,
    `${DIRECTORY_SIZE_TEXT}\t${shownDir}`,
  ];
  await appendEntries(reader, rel, shownDir, 1, lines);
  return lines.join('\n');
}

/** Depth-first pre-order; directories at the last level are shown but not expanded. */
async function appendEntries(
  reader: MemoryReader,
  rel: RelPath,
  shownDir: string,
  depth: number,
  lines: string[],
): Promise<void> {
  const entries = (await reader.list(rel)).filter(isListed).sort(byCodeUnits);
  for (const entry of entries) {
    const shownEntry = `${shownDir}/${entry.name}`;
    if (entry.kind === 'file') {
      lines.push(`${formatSize(entry.size)}\t${shownEntry}`);
      continue;
    }
    lines.push(`${DIRECTORY_SIZE_TEXT}\t${shownEntry}/`);
    if (depth < LISTING_DEPTH) {
      await appendEntries(reader, childPath(rel, entry.name), shownEntry, depth + 1, lines);
    }
  }
}
