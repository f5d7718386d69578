import type { FlagRecord } from '../store';
import type { HistoryContext } from './context';

/**
 * Flagged calls, one way for every surface (the UI's badges and counts, `memgit flags`, the server's store
 * list): the calls whose writing added a likely secret or, where the store opts in, personal data. The
 * store flags them in the background after each commit (src/store/flags) and keeps only masked samples.
 */

/** The flag of one commit, if it is flagged. */
export function flagOfCommit(ctx: HistoryContext, commit: string): FlagRecord | undefined {
  return ctx.store.flags.forCommit(commit);
}

/** Every flagged call, oldest first; `complete` first waits for a scan under way (history not yet scanned). */
export async function flaggedCalls(ctx: HistoryContext, options: { complete?: boolean } = {}): Promise<readonly FlagRecord[]> {
  if (options.complete) await ctx.store.flags.idle();
  return ctx.store.flags.all();
}

/** How many calls are flagged so far. */
export function flaggedCallCount(ctx: HistoryContext): number {
  return ctx.store.flags.all().length;
}
