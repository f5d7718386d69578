import { formatPatch, structuredPatch, StructuredPatch } from 'diff';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import type { ObjectStore } from '../objects';
import { KEEP_FILE } from '../tree-draft';
import type { HistoryEntry } from './entry';
import { beyondEditLength, trimCommonLines } from './line-stats';

/** The memory files one commit changed, with their contents before and after (renames paired). */

export interface FileDiff {
  status: 'added' | 'deleted' | 'modified' | 'renamed';
  /** Virtual paths (`/memories/...`); null on the side where the file does not exist. */
  oldPath: string | null;
  newPath: string | null;
  oldOid: string | null;
  newOid: string | null;
}

/** Memory files only: the `.keep` placeholders and repository files are storage details. */
export function isMemoryFile(repoPath: string): boolean {
  return repoPath.startsWith(`${MEMORY_REPO_ROOT}/`) && !repoPath.endsWith(`/${KEEP_FILE}`);
}

export function fileDiffs(entry: HistoryEntry): FileDiff[] {
  const changes = entry.changes.filter((c) => isMemoryFile(c.path));
  const added = changes.filter((c) => !c.oldOid && c.newOid);
  const deleted = changes.filter((c) => c.oldOid && !c.newOid);
  const diffs: FileDiff[] = [];
  const pairedAdds = new Set<string>();
  for (const gone of deleted) {
    const twin = renamedTo(entry, gone.path, added);
    if (twin) {
      pairedAdds.add(twin.path);
      diffs.push({ status: 'renamed', oldPath: `/${gone.path}`, newPath: `/${twin.path}`, oldOid: gone.oldOid, newOid: twin.newOid });
    } else {
      diffs.push({ status: 'deleted', oldPath: `/${gone.path}`, newPath: null, oldOid: gone.oldOid, newOid: null });
    }
  }
  for (const change of changes) {
    if (change.oldOid && change.newOid) {
      diffs.push({ status: 'modified', oldPath: `/${change.path}`, newPath: `/${change.path}`, oldOid: change.oldOid, newOid: change.newOid });
    } else if (!change.oldOid && !pairedAdds.has(change.path)) {
      diffs.push({ status: 'added', oldPath: null, newPath: `/${change.path}`, oldOid: null, newOid: change.newOid });
    }
  }
  return diffs.sort((a, b) => ((a.newPath ?? a.oldPath)! < (b.newPath ?? b.oldPath)! ? -1 : 1));
}

/**
 * Where a rename call moved a removed file: the same path below the new name. Pairing by path, not by
 * blob id, keeps two files with identical content in a renamed directory on their own histories.
 */
function renamedTo(entry: HistoryEntry, removedRepoPath: string, added: HistoryEntry['changes']) {
  if (entry.command !== 'rename' || !entry.path || !entry.newPath) return undefined;
  const removed = `/${removedRepoPath}`;
  if (removed !== entry.path && !removed.startsWith(`${entry.path}/`)) return undefined;
  const target = `${entry.newPath}${removed.slice(entry.path.length)}`;
  return added.find((a) => `/${a.path}` === target);
}

export async function blobText(objects: ObjectStore, oid: string | null): Promise<string> {
  if (!oid) return '';
  const bytes = await objects.readBlob(oid);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/** A git-style unified diff of one file change. */
export async function unifiedDiff(objects: ObjectStore, diff: FileDiff, context = 3): Promise<string> {
  const [before, after] = await Promise.all([blobText(objects, diff.oldOid), blobText(objects, diff.newOid)]);
  return unifiedTextDiff(diff, before, after, context);
}

/** The same, from the two contents (which need not be in the object store yet, e.g. a rollback preview). */
export function unifiedTextDiff(diff: Pick<FileDiff, 'oldPath' | 'newPath'>, before: string, after: string, context = 3): string {
  return unifiedTextDiffWithin(diff, before, after, Infinity, context)!;
}

/**
 * The same patch, or null when the lines between the shared head and tail differ by more than
 * `maxEditLength` lines: jsdiff's search costs (lines) × (edit distance), so two unrelated versions of a
 * 1 MiB file would take minutes.
 */
export function unifiedTextDiffWithin(diff: Pick<FileDiff, 'oldPath' | 'newPath'>, before: string, after: string, maxEditLength: number, context = 3): string | null {
  const oldName = diff.oldPath ? `a${diff.oldPath}` : '/dev/null';
  const newName = diff.newPath ? `b${diff.newPath}` : '/dev/null';
  // The diff of the lines between the shared head and tail (a one-line change of a 1 MiB file is a
  // diff of a few lines); the same patch as diffing the whole texts, with the line numbers moved back.
  const oneSided = oneSidedPatch(oldName, newName, before, after);
  const trimmed = oneSided ? { before: '', after: '', skippedLines: 0 } : trimCommonLines(before, after, context);
  const structured =
    oneSided ??
    (Number.isFinite(maxEditLength)
      ? beyondEditLength(trimmed.before, trimmed.after, maxEditLength)
        ? undefined
        : structuredPatch(oldName, newName, trimmed.before, trimmed.after, undefined, undefined, { context, maxEditLength })
      : structuredPatch(oldName, newName, trimmed.before, trimmed.after, undefined, undefined, { context }));
  if (!structured) return null;
  for (const hunk of structured.hunks) {
    hunk.oldStart += trimmed.skippedLines;
    hunk.newStart += trimmed.skippedLines;
  }
  const patch = formatPatch(structured);
  // createTwoFilesPatch starts with an "Index:"-less header of ===; keep only the ---/+++ and hunks.
  return patch.split('\n').filter((line) => !line.startsWith('====')).join('\n');
}

/**
 * The patch of a file added (before is '') or deleted (after is ''), built directly: the same as
 * jsdiff's, without running its edit-distance search over every line (which, for a 1 MiB file of half
 * a million lines, takes seconds). Null when both sides have content or neither changed.
 */
export function oneSidedPatch(oldName: string, newName: string, before: string, after: string): StructuredPatch | null {
  if ((before !== '' && after !== '') || before === after) return null;
  const text = before || after;
  const sign = before ? '-' : '+';
  const lines = text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  if (endsWithNewline) lines.pop();
  const hunkLines = lines.map((line) => sign + line);
  if (!endsWithNewline) hunkLines.push('\\ No newline at end of file');
  return {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [{ oldStart: 1, oldLines: before ? lines.length : 0, newStart: 1, newLines: after ? lines.length : 0, lines: hunkLines }],
  };
}
