import { FileDiff, fileDiffs } from './file-diffs';
import type { HistoryEntry } from './entry';
import { lineChangeCounts } from './line-stats';

/**
 * Facts about one commit's memory files that are fixed once it is written — the file diffs (renames
 * paired), their sizes before and after, and the lines each added and removed — so that list pages are
 * index lookups rather than blob reads. Persisted compactly on the entry as `facts`: four numbers per
 * file diff, in fileDiffs() order: added, removed, old size, new size (bytes; -1 where the side is absent).
 */

export interface FileFact extends FileDiff {
  added: number;
  removed: number;
  oldSize: number | null;
  newSize: number | null;
}

const PER_DIFF = 4;

/** The entry's file facts, or null when they have not been computed yet (an entry indexed cold). */
export function fileFacts(entry: HistoryEntry): FileFact[] | null {
  const facts = entry.facts;
  if (!facts) return null;
  const diffs = fileDiffs(entry);
  if (facts.length !== diffs.length * PER_DIFF) return null; // not ours: recompute rather than misattribute
  return diffs.map((d, i) => {
    const [added, removed, oldSize, newSize] = facts.slice(i * PER_DIFF, i * PER_DIFF + PER_DIFF);
    return { ...d, added, removed, oldSize: oldSize < 0 ? null : oldSize, newSize: newSize < 0 ? null : newSize };
  });
}

/** Lines added and removed over all of a commit's memory files (a rename of unchanged content counts 0). */
export function commitLineCounts(facts: FileFact[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const f of facts) {
    added += f.added;
    removed += f.removed;
  }
  return { added, removed };
}

/** Compute an entry's facts from its blobs (bytes by oid). */
export async function computeFacts(entry: HistoryEntry, readBlob: (oid: string) => Promise<Uint8Array>): Promise<number[]> {
  const out: number[] = [];
  for (const diff of fileDiffs(entry)) {
    // An entry that is not a blob (a gitlink planted with the git CLI) has no content memgit shows: absent.
    const read = (oid: string | null) => (oid ? readBlob(oid).catch(() => null) : null);
    const [before, after] = await Promise.all([read(diff.oldOid), read(diff.newOid)]);
    const counts = diff.oldOid === diff.newOid ? { added: 0, removed: 0 } : lineChangeCounts(utf8(before), utf8(after));
    out.push(counts.added, counts.removed, before ? before.byteLength : -1, after ? after.byteLength : -1);
  }
  return out;
}

export function utf8(bytes: Uint8Array | null): string {
  return bytes ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') : '';
}
