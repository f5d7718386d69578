import { diffLines } from 'diff';
import { MEMORY_ROOT } from '../contract/paths';
import { blobText, FileDiff, isMemoryFile, unifiedTextDiff } from '../store/history-index/file-diffs';
import type { HistoryEntry, HistoryIndex } from '../store/history-index';
import { type MemoryStore, readMemoryFiles } from '../store';

/**
 * The memory at one point against the memory at another (`memgit diff`, the UI's compare view): every
 * memory file that differs, with a unified diff from the `diff` package. A file is shown as renamed when
 * the rename calls between the two points moved it (edits after the move included), or when it vanished
 * from one path and appeared with the same bytes at exactly one other.
 */

export interface ComparedFile extends FileDiff {
  before: string;
  after: string;
  /** Unified diff, git-style `a/…` `b/…` names. */
  patch: string;
  added: number;
  removed: number;
}

export interface Comparison {
  from: HistoryEntry;
  to: HistoryEntry;
  /** The validated virtual path the comparison is limited to (`/memories` = everything). */
  path: string;
  files: ComparedFile[];
}

export async function compareMemory(store: MemoryStore, from: HistoryEntry, to: HistoryEntry, virtualPath = MEMORY_ROOT): Promise<Comparison> {
  const prefix = virtualPath.slice(1);
  const within = (p: string) => isMemoryFile(p) && (p === prefix || p.startsWith(`${prefix}/`));
  const [before, after] = await Promise.all([
    readMemoryFiles(store.objects, await store.commitTree(from.commit)),
    readMemoryFiles(store.objects, await store.commitTree(to.commit)),
  ]);
  const paths = [...new Set([...before.keys(), ...after.keys()])].filter(within).sort();
  const removed = paths.filter((p) => before.has(p) && !after.has(p));
  const added = paths.filter((p) => !before.has(p) && after.has(p));
  const diffs: FileDiff[] = [];
  const paired = new Set<string>();
  const moved = renamesBetween(store.history, from, to);
  for (const gone of removed) {
    const oid = before.get(gone)!.oid;
    const followed = moved(gone);
    if (followed !== gone && added.includes(followed) && !paired.has(followed)) {
      paired.add(followed);
      diffs.push({ status: 'renamed', oldPath: `/${gone}`, newPath: `/${followed}`, oldOid: oid, newOid: after.get(followed)!.oid });
      continue;
    }
    const twins = added.filter((a) => after.get(a)!.oid === oid && !paired.has(a));
    if (twins.length === 1 && removed.filter((r) => before.get(r)!.oid === oid).length === 1) {
      paired.add(twins[0]);
      diffs.push({ status: 'renamed', oldPath: `/${gone}`, newPath: `/${twins[0]}`, oldOid: oid, newOid: oid });
    } else {
      diffs.push({ status: 'deleted', oldPath: `/${gone}`, newPath: null, oldOid: oid, newOid: null });
    }
  }
  for (const p of paths) {
    const old = before.get(p);
    const now = after.get(p);
    if (old && now && old.oid !== now.oid) diffs.push({ status: 'modified', oldPath: `/${p}`, newPath: `/${p}`, oldOid: old.oid, newOid: now.oid });
    else if (!old && now && !paired.has(p)) diffs.push({ status: 'added', oldPath: null, newPath: `/${p}`, oldOid: null, newOid: now.oid });
  }
  diffs.sort((a, b) => ((a.newPath ?? a.oldPath)! < (b.newPath ?? b.oldPath)! ? -1 : 1));
  const files: ComparedFile[] = [];
  for (const d of diffs) {
    const [beforeText, afterText] = await Promise.all([blobText(store.objects, d.oldOid), blobText(store.objects, d.newOid)]);
    let plus = 0;
    let minus = 0;
    for (const part of diffLines(beforeText, afterText)) {
      if (part.added) plus += part.count ?? 0;
      else if (part.removed) minus += part.count ?? 0;
    }
    const patch = unifiedTextDiff(d, beforeText, afterText);
    files.push({ ...d, before: beforeText, after: afterText, patch: patch.endsWith('\n') ? patch : `${patch}\n`, added: plus, removed: minus });
  }
  return { from, to, path: virtualPath, files };
}

/**
 * Where the rename calls between two points moved a repository path (in either direction: comparing a
 * later point with an earlier one follows the renames backwards).
 */
function renamesBetween(history: HistoryIndex, from: HistoryEntry, to: HistoryEntry): (repoPath: string) => string {
  const a = history.position(from.commit) ?? 0;
  const b = history.position(to.commit) ?? 0;
  const renames: Array<[string, string]> = [];
  for (let i = Math.min(a, b) + 1; i <= Math.max(a, b); i++) {
    const e = history.at(i)!;
    if (e.command === 'rename' && e.path && e.newPath) renames.push([e.path.slice(1), e.newPath.slice(1)]);
  }
  const steps = a <= b ? renames : renames.reverse().map(([x, y]): [string, string] => [y, x]);
  return (repoPath) => {
    let p = repoPath;
    for (const [source, target] of steps) {
      if (p === source) p = target;
      else if (p.startsWith(`${source}/`)) p = `${target}${p.slice(source.length)}`;
    }
    return p;
  };
}
