import type { HistoryEntry } from '../store/history-index/entry';
import type { HistoryContext } from './context';

/** The store's history in numbers: its commits, its sessions (that committed), and its newest commit. */
export interface HistorySummary {
  commits: number;
  sessions: number;
  head: HistoryEntry | null;
}

export function historySummary(ctx: HistoryContext): HistorySummary {
  const history = ctx.store.history;
  return { commits: history.size, sessions: history.sessions().length, head: history.head ?? null };
}

/** How many calls (tool_use ids) wrote a commit: the agents' writes, not operators' commits or the first one. */
export function committedCallCount(ctx: HistoryContext): number {
  return ctx.store.history.all().filter((e) => e.toolUseId !== undefined).length;
}

/**
 * A store indexed cold (just cloned, or an index of an older format) has no line counts and sizes yet:
 * answers compute the ones they need on demand, and this pass computes the rest in the background.
 */
export function completeFactsInBackground(ctx: HistoryContext): void {
  const history = ctx.store.history;
  if (history.missingFacts() > 0) void history.backfillFacts().catch(() => undefined);
}
