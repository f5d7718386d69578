import { MEMORY_REPO_ROOT } from '../../contract/paths';
import type { HistoryEntry } from '../history-index';
import type { ObjectStore, TreeEntry } from '../objects';
import type { Redactor } from './matcher';

/** One memory file one commit wrote, as it will read after the redaction (for the operator's preview). */
export interface PreviewItem {
  commit: string;
  toolUseId: string | null;
  session: string | null;
  path: string;
  /** Changed lines (1-based) before and after, at most PREVIEW_LINES per file. */
  lines: Array<{ line: number; before: string; after: string }>;
  moreLines: number;
}

export interface RewriteResult {
  oldHead: string;
  newHead: string;
  /** old → new id of every rewritten commit (empty for a dry run). */
  map: Map<string, string>;
  firstRewritten: string | null;
  commitsChanged: number;
  commitsRewritten: number;
  blobsRedacted: number;
  preview: PreviewItem[];
  /** Review refs (docs/review.md) whose chains were rewritten too: each ref's old and new tip. */
  sideRefs: Array<{ ref: string; oldTip: string; newTip: string }>;
}

const PREVIEW_LINES = 20;
export const PREVIEW_ITEMS = 500;

/**
 * Rewrite history from the first commit whose memory the redactor changes: every blob it matches (in the
 * commits of `range`) is replaced, and every later commit is written again on top with the same message
 * (plus a `Memory-Redacted` trailer), author, committer and times. With `dryRun` nothing is written: the
 * result counts and previews what would change.
 */
export async function rewriteHistory(
  objects: ObjectStore,
  entries: readonly HistoryEntry[],
  redact: Redactor,
  options: {
    id: string;
    dryRun: boolean;
    pathSensitive: boolean;
    range: { from: number; to: number };
    onProgress?: (done: number, total: number) => void;
    /**
     * Refs beside the branch whose commits descend from it (review branches and their archives): every
     * commit of theirs not on the branch is redacted and written again on the rewritten branch.
     */
    sideRefs?: Array<{ ref: string; tip: string }>;
  },
): Promise<RewriteResult> {
  const blobMemo = new Map<string, string | null>();
  const treeMemo = new Map<string, string>();
  const map = new Map<string, string>();
  const preview: PreviewItem[] = [];
  let blobsRedacted = 0;
  let commitsChanged = 0;
  let firstRewritten: string | null = null;
  const CHANGED = 'changed:';

  const redactBlob = async (oid: string, repoPath: string): Promise<string | null> => {
    const key = options.pathSensitive ? `${repoPath}\0${oid}` : oid;
    if (blobMemo.has(key)) return blobMemo.get(key)!;
    const before = Buffer.from(await objects.readBlob(oid)).toString('utf8');
    const after = redact(repoPath, before);
    let result: string | null = null;
    if (after !== null && after !== before) {
      blobsRedacted++;
      result = options.dryRun ? `${CHANGED}${oid}` : await objects.writeBlob(Buffer.from(after, 'utf8'));
      previews.set(key, { before, after });
    }
    blobMemo.set(key, result);
    return result;
  };
  const previews = new Map<string, { before: string; after: string }>();

  // The first commit of a range that starts after the first commit carries files it did not write: the
  // preview lists those too (with the commit's own changes), so it shows every file the redaction changes.
  let carried: Array<{ path: string; oid: string }> | null = null;
  const rewriteTree = async (oid: string, prefix: string): Promise<string> => {
    const key = options.pathSensitive ? `${prefix}\0${oid}` : oid;
    const memo = treeMemo.get(key);
    if (memo && !carried) return memo;
    const entries = await objects.readTree(oid);
    let changed = false;
    const next: TreeEntry[] = [];
    for (const entry of entries) {
      const repoPath = prefix ? `${prefix}/${entry.path}` : entry.path;
      let newOid = entry.oid;
      if (entry.type === 'tree' && (prefix !== '' || entry.path === MEMORY_REPO_ROOT)) newOid = await rewriteTree(entry.oid, repoPath);
      else if (entry.type === 'blob' && prefix !== '') {
        newOid = (await redactBlob(entry.oid, repoPath)) ?? entry.oid;
        if (carried && newOid !== entry.oid) carried.push({ path: repoPath, oid: entry.oid });
      }
      if (newOid !== entry.oid) changed = true;
      next.push({ ...entry, oid: newOid });
    }
    const result = !changed ? oid : options.dryRun ? `${CHANGED}${oid}` : await objects.writeTree(next);
    treeMemo.set(key, result);
    return result;
  };

  const oldHead = entries[entries.length - 1].commit;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i];
    options.onProgress?.(i + 1, entries.length);
    const inRange = i >= options.range.from && i <= options.range.to;
    if (!inRange && map.size === 0 && (!options.dryRun || commitsChanged === 0)) continue; // before anything changed
    const { commit } = await objects.readCommit(entry.commit);
    carried = i === options.range.from && i > 0 ? [] : null;
    const newTree = inRange ? await rewriteTree(commit.tree, '') : commit.tree;
    const treeChanged = newTree !== commit.tree;
    if (treeChanged) {
      commitsChanged++;
      firstRewritten ??= entry.commit;
      const files = entry.changes.filter((c) => c.newOid).map((c) => ({ path: c.path, oid: c.newOid! }));
      for (const file of carried ?? []) if (!files.some((f) => f.path === file.path)) files.push(file);
      for (const file of files) {
        if (preview.length >= PREVIEW_ITEMS) break;
        const key = options.pathSensitive ? `${file.path}\0${file.oid}` : file.oid;
        const shown = previews.get(key);
        if (shown) preview.push(previewItem(entry, file.path, shown.before, shown.after));
      }
    }
    carried = null;
    if (options.dryRun) continue;
    const parent = commit.parent[0];
    const newParent = parent === undefined ? undefined : (map.get(parent) ?? parent);
    if (!treeChanged && newParent === parent) continue;
    const newCommit = await objects.writeCommit({
      message: withRedactedTrailer(commit.message, options.id),
      tree: newTree,
      parent: newParent === undefined ? [] : [newParent],
      author: commit.author,
      committer: commit.committer,
    });
    map.set(entry.commit, newCommit);
  }
  // Review refs: their own commits (off the branch), oldest first, redacted whatever the range.
  const onBranch = new Set(entries.map((e) => e.commit));
  const sideRefs: RewriteResult['sideRefs'] = [];
  for (const side of options.sideRefs ?? []) {
    const chain: Array<{ oid: string; commit: Awaited<ReturnType<ObjectStore['readCommit']>>['commit'] }> = [];
    for (let cursor: string | undefined = side.tip; cursor !== undefined && !onBranch.has(cursor) && !map.has(cursor) && chain.length < 1_000_000; ) {
      const { commit } = await objects.readCommit(cursor);
      chain.push({ oid: cursor, commit });
      cursor = commit.parent[0];
    }
    for (const { oid, commit } of chain.reverse()) {
      const newTree = await rewriteTree(commit.tree, '');
      const treeChanged = newTree !== commit.tree;
      if (treeChanged) {
        commitsChanged++;
        firstRewritten ??= oid;
      }
      if (options.dryRun) continue;
      const parent = commit.parent[0];
      const newParent = parent === undefined ? undefined : (map.get(parent) ?? parent);
      if (!treeChanged && newParent === parent) continue;
      map.set(oid, await objects.writeCommit({ message: withRedactedTrailer(commit.message, options.id), tree: newTree, parent: newParent === undefined ? [] : [newParent], author: commit.author, committer: commit.committer }));
    }
    const newTip = map.get(side.tip) ?? side.tip;
    if (newTip !== side.tip) sideRefs.push({ ref: side.ref, oldTip: side.tip, newTip });
  }
  return {
    sideRefs,
    oldHead,
    newHead: map.get(oldHead) ?? oldHead,
    map,
    firstRewritten,
    commitsChanged,
    commitsRewritten: options.dryRun ? countFrom(entries, firstRewritten) : map.size,
    blobsRedacted,
    preview,
  };
}

function countFrom(entries: readonly HistoryEntry[], first: string | null): number {
  if (!first) return 0;
  return entries.length - entries.findIndex((e) => e.commit === first);
}

/** The message with `Memory-Redacted: <id>` added to its trailers (a message without trailers gets some). */
export function withRedactedTrailer(message: string, id: string): string {
  const body = message.endsWith('\n') ? message : `${message}\n`;
  const hasTrailers = /\n\nMemory-[A-Za-z-]+: .*\n$/.test(body) || /\n\n(?:Memory-[A-Za-z-]+: .*\n)+$/.test(body);
  return hasTrailers ? `${body}Memory-Redacted: ${id}\n` : `${body}\nMemory-Redacted: ${id}\n`;
}

function previewItem(entry: HistoryEntry, repoPath: string, before: string, after: string): PreviewItem {
  const a = before.split('\n');
  const b = after.split('\n');
  const lines: PreviewItem['lines'] = [];
  let more = 0;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] === b[i]) continue;
    if (lines.length < PREVIEW_LINES) lines.push({ line: i + 1, before: a[i] ?? '', after: b[i] ?? '' });
    else more++;
  }
  return { commit: entry.commit, toolUseId: entry.toolUseId ?? null, session: entry.session ?? null, path: `/${repoPath}`, lines, moreLines: more };
}
