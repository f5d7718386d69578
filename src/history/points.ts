import { PointNotFoundError, type RefKind } from '../store';
import type { HistoryEntry } from '../store/history-index/entry';
import type { HistoryContext } from './context';

/**
 * Points in history, one way for every surface: a tool_use id, a commit id or prefix, `commit:`/`call:`,
 * HEAD, HEAD~N or an ISO time (the rules are the store's: src/store/points.ts). Malformed points throw
 * InvalidPointError (an impossible date such as 2026-02-30 among them), points that name nothing
 * PointNotFoundError, points that name two things AmbiguousPointError or AmbiguousRefError; each edge
 * says so in its own terms.
 */

export type { RefKind } from '../store';
export { isIsoTime, parseIsoTime } from '../store';

/** The commit a point names (`kind` restricts it to commits or calls), or HEAD when none is given. */
export async function pointAt(ctx: HistoryContext, ref: string | undefined, kind: RefKind = 'any'): Promise<HistoryEntry> {
  if (ref === undefined) {
    const head = ctx.store.history.head;
    if (!head) throw new PointNotFoundError('HEAD', 'the store has no commits');
    return head;
  }
  return kind === 'any' ? ctx.store.resolvePoint(ref) : ctx.store.resolve(ref, kind);
}

/** The newest commit, after bringing the history up to date with other processes' writes. */
export async function currentHead(ctx: HistoryContext): Promise<HistoryEntry> {
  await ctx.store.refreshHead();
  return pointAt(ctx, undefined);
}

/** How a point is named in messages: the call's tool_use id, else the commit's title and id. */
export function describePoint(entry: HistoryEntry): string {
  return entry.toolUseId ? `${entry.toolUseId} (commit ${entry.commit.slice(0, 12)})` : `commit ${entry.commit.slice(0, 12)}`;
}

/** The commit with this full id, if it is in history. */
export function entryOf(ctx: HistoryContext, commit: string): HistoryEntry | undefined {
  return ctx.store.history.get(commit);
}

/** Position of a commit in history (0 = the store's first commit; a stable page cursor), if it is in history. */
export function positionOf(ctx: HistoryContext, commit: string): number | undefined {
  return ctx.store.history.position(commit);
}
