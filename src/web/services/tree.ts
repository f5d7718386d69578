import type { HistoryEntry } from '../../store/history-index';
import { KEEP_FILE } from '../../store/tree-draft';
import { AuditContext, CommitSummary, entryFor, NotFound, repoPathOf, sizeOf, summarise } from './context';

/** The memory as it was after one call: a directory listing with sizes and each file's last change then. */

export const MAX_LISTED = 500;

export interface TreeRow {
  name: string;
  kind: 'file' | 'dir';
  /** Path relative to /memories. */
  rel: string;
  size: number;
  lastChange: CommitSummary | null;
}

export interface TreePage {
  at: CommitSummary;
  pinned: boolean;
  dir: string;
  path: string;
  rows: TreeRow[];
  truncated: boolean;
}

export async function treePage(ctx: AuditContext, at: string | undefined, dir: string): Promise<TreePage> {
  const atEntry = await entryFor(ctx, at);
  const tree = await ctx.store.commitTree(atEntry.commit);
  const node = await ctx.store.objects.entryAt(tree, repoPathOf(dir));
  if (!node || node.type !== 'tree') throw new NotFound(`/memories${dir ? `/${dir}` : ''} is not a directory at this commit`);
  const position = ctx.store.history.position(atEntry.commit)!;
  const children = (await ctx.store.objects.readTree(node.oid)).filter((e) => e.path !== KEEP_FILE && (e.type === 'tree' || e.mode === '100644'));
  children.sort((a, b) => (a.type === b.type ? (a.path < b.path ? -1 : 1) : a.type === 'tree' ? -1 : 1));
  const rows: TreeRow[] = [];
  for (const child of children.slice(0, MAX_LISTED)) {
    const rel = dir ? `${dir}/${child.path}` : child.path;
    const isDir = child.type === 'tree';
    const last = isDir ? null : lastChangeOf(ctx, repoPathOf(rel), position);
    rows.push({
      name: child.path,
      kind: isDir ? 'dir' : 'file',
      rel,
      size: isDir ? 0 : await sizeAt(ctx, repoPathOf(rel), child.oid, last ?? undefined),
      lastChange: last ? summarise(ctx, last) : null,
    });
  }
  return {
    at: summarise(ctx, atEntry),
    pinned: at !== undefined && at !== '',
    dir,
    path: `/memories${dir ? `/${dir}` : ''}`,
    rows,
    truncated: children.length > MAX_LISTED,
  };
}

/** The newest commit at or before `position` that changed this path (an index lookup and a binary search). */
export function lastChangeOf(ctx: AuditContext, repoPath: string, position: number): HistoryEntry | undefined {
  return ctx.store.history.lastChange(repoPath, position);
}

/**
 * A file's size from the history index (the commit that last wrote it recorded it), falling back to the
 * blob only when the index cannot vouch for that blob.
 */
export async function sizeAt(ctx: AuditContext, repoPath: string, oid: string, last: HistoryEntry | undefined): Promise<number> {
  if (last && last.changes.some((c) => c.path === repoPath && c.newOid === oid)) {
    const size = await ctx.store.history.sizeWritten(last, repoPath);
    if (size !== null) return size;
  }
  return sizeOf(ctx, oid);
}
