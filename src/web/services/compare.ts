import { MEMORY_ROOT, resolvePath } from '../../contract/paths';
import { compareMemory } from '../../history/compare';
import { AuditContext, BadRequest, CommitSummary, entryFor, summarise } from './context';
import { compareTexts, FileDiffView } from './diff-view';

/** The compare view: the memory at one point against another (the UI twin of `memgit diff`). */

export const MAX_COMPARED_FILES = 200;

export interface ComparePage {
  /** What was asked (for the form); points are any form the read model takes (src/history/points.ts). */
  asked: { from: string; to: string; path: string };
  from: CommitSummary | null;
  to: CommitSummary | null;
  path: string;
  diffs: FileDiffView[];
  /** More files differ than are shown. */
  truncated: boolean;
  total: number;
}

export async function comparePage(ctx: AuditContext, from: string | undefined, to: string | undefined, path: string | undefined): Promise<ComparePage> {
  const asked = { from: from ?? '', to: to ?? '', path: path ?? '' };
  let virtual = MEMORY_ROOT;
  if (path !== undefined) {
    const resolved = resolvePath(path.startsWith('/') ? path : `${MEMORY_ROOT}/${path}`);
    if (!resolved.ok) throw new BadRequest(`path: ${resolved.error.replace(/^Error: /, '')}`);
    virtual = resolved.virtual;
  }
  if (from === undefined) return { asked, from: null, to: null, path: virtual, diffs: [], truncated: false, total: 0 };
  const fromEntry = await entryFor(ctx, from);
  const toEntry = await entryFor(ctx, to);
  const comparison = await compareMemory(ctx.store, fromEntry, toEntry, virtual);
  const shown = comparison.files.slice(0, MAX_COMPARED_FILES);
  const diffs = shown.map((f) => ({
    status: f.status,
    oldPath: f.oldPath,
    newPath: f.newPath,
    oldOid: f.oldOid,
    newOid: f.newOid,
    ...compareTexts(f.before, f.after),
  }));
  return {
    asked,
    from: summarise(ctx, fromEntry),
    to: summarise(ctx, toEntry),
    path: virtual,
    diffs,
    truncated: comparison.files.length > shown.length,
    total: comparison.files.length,
  };
}
