import { MEMORY_ROOT } from '../../contract/paths';
import { directoryAt, fileSize } from '../../history/memory-at';
import { lastChangeOf as lastChangeAt } from '../../history/revisions';
import { AuditContext, CommitSummary, entryFor, NotFound, summarise } from './context';

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
  const path = `${MEMORY_ROOT}${dir ? `/${dir}` : ''}`;
  const children = await directoryAt(ctx, path, atEntry);
  if (!children) throw new NotFound(`${path} is not a directory at this commit`);
  const rows: TreeRow[] = [];
  for (const child of children.slice(0, MAX_LISTED)) {
    const rel = dir ? `${dir}/${child.name}` : child.name;
    const isDir = child.kind === 'dir';
    const last = isDir ? undefined : lastChangeAt(ctx, `${MEMORY_ROOT}/${rel}`, atEntry);
    rows.push({
      name: child.name,
      kind: child.kind,
      rel,
      size: isDir ? 0 : await fileSize(ctx, `${MEMORY_ROOT}/${rel}`, child.oid, last),
      lastChange: last ? summarise(ctx, last) : null,
    });
  }
  return {
    at: summarise(ctx, atEntry),
    pinned: at !== undefined && at !== '',
    dir,
    path,
    rows,
    truncated: children.length > MAX_LISTED,
  };
}
