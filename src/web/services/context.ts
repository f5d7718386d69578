import { AmbiguousPointError, AmbiguousRefError, type CacheBudget, CommitNotFoundError, InvalidPointError, type MemoryStore } from '../../store';
import { toRepoPath } from '../../history/paths';
import type { HistoryEntry } from '../../history/entry';
import { historyContext, HistoryContext } from '../../history/context';
import { HISTORY_CACHE_BUDGETS, LruCache, roughBytes } from '../../history/cache';
import { pointAt, RefKind } from '../../history/points';
import { positionedCommitRecord, PositionedCommitRecord } from '../../history/records';

export { blameStateBytes, LruCache, roughBytes, stringBytes } from '../../history/cache';
export { sizeOf, textOf } from '../../history/context';
export type { BlameState } from '../../history/blame';

/**
 * What every audit page needs: the read model's context of the store (src/history/context.ts: the store
 * and the caches every surface shares) and the UI's own cache of render-ready diffs.
 */
export interface AuditContext extends HistoryContext {
  /** Render-ready diffs of a commit, by commit id. */
  diffs: LruCache<string, unknown>;
}

/**
 * Memory budgets of the caches a served store holds, in estimated bytes: the read model's (shared with
 * every other surface of the process) and the diff views of the pages.
 */
const MIB = 1024 * 1024;

export const CACHE_BUDGETS = {
  ...HISTORY_CACHE_BUDGETS,
  diffs: { total: 32 * MIB, entry: 4 * MIB },
} as const;

/**
 * The caches of one store's audit UI. With `budget` (memgit server: one budget for every open store and
 * its UI), their entries also count against that shared budget, on top of the bounds above; the read
 * model's caches count against the store's own budget (the same one under memgit server), else this one.
 */
export function createAuditContext(store: MemoryStore, budget?: CacheBudget): AuditContext {
  const b = CACHE_BUDGETS;
  return { ...historyContext(store, budget), diffs: new LruCache(1000, (v) => roughBytes(v), b.diffs.total, b.diffs.entry, budget) };
}

/** The entry a point names (the read model's points; `kind` restricts it to commits or calls), or HEAD when none is given. */
export async function entryFor(ctx: AuditContext, ref: string | undefined, kind: RefKind = 'any'): Promise<HistoryEntry> {
  try {
    return await pointAt(ctx, ref === '' ? undefined : ref, kind);
  } catch (error) {
    if (error instanceof AmbiguousRefError || error instanceof InvalidPointError || error instanceof AmbiguousPointError) {
      throw new BadRequest(error.detail);
    }
    if (error instanceof CommitNotFoundError) {
      if (kind === 'any' || ref === undefined || ref === '') throw new NotFound(error.detail);
      const what = kind === 'commit' ? 'commit' : 'call with tool_use id';
      throw new NotFound(`no ${what} ${JSON.stringify(ref)} in this store`);
    }
    throw error;
  }
}

/** A memory path relative to /memories ('' = the root) as a repository path. */
export function repoPathOf(rel: string): string {
  return toRepoPath(rel);
}

/**
 * A history entry in the shape every page and JSON twin shows: the commit record (src/history/records.ts,
 * docs/records.md) plus its position in history.
 */
export type CommitSummary = PositionedCommitRecord;

export function summarise(ctx: AuditContext, entry: HistoryEntry): CommitSummary {
  return positionedCommitRecord(ctx, entry);
}

/** The error services throw for a missing commit, file, session or directory: pages answer 404. */
export class NotFound extends Error {}

/** The error services throw for a malformed query parameter: pages answer 400. */
export class BadRequest extends Error {}
