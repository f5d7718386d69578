import type { RefKind } from '../../store/resolve-ref';
import { AuditContext, CommitSummary, entryFor, summarise } from './context';
import { diffViewsOf, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';
import { FlagBadge, flagOf } from './flags';
import { rewrittenFrom } from './redaction';
import { revertedBy } from './rollback';

/** One call: its metadata and trailers, its diff, and its neighbours in the same session. */

export interface CommitPage {
  commit: CommitSummary;
  message: string;
  diffs: FileDiffView[];
  sessionStep: number | null;
  sessionCalls: number;
  prevInSession: CommitSummary | null;
  nextInSession: CommitSummary | null;
  /** Operator commits that undid this one (their Memory-Reverts trailers name it). */
  revertedBy: CommitSummary[];
  /** Flagged for a likely secret or personal data (masked samples), or null. */
  flag: FlagBadge | null;
  /** The URL named this commit by its id from before a redaction: that id and the redaction. */
  rewrittenFrom: { old: string; redaction: string } | null;
}

export async function commitPage(ctx: AuditContext, ref: string, kind: RefKind = 'any'): Promise<CommitPage> {
  const entry = await entryFor(ctx, ref, kind);
  const { commit } = await ctx.store.objects.readCommit(entry.commit);
  const calls = entry.session ? ctx.store.history.bySession(entry.session) : [];
  const step = calls.findIndex((e) => e.commit === entry.commit);
  const budget = pageDiffBudget();
  return {
    commit: summarise(ctx, entry),
    message: commit.message,
    diffs: (await diffViewsOf(ctx, entry)).map((d) => withinBudget(d, budget)),
    sessionStep: step === -1 ? null : step + 1,
    sessionCalls: calls.length,
    prevInSession: step > 0 ? summarise(ctx, calls[step - 1]) : null,
    nextInSession: step !== -1 && step + 1 < calls.length ? summarise(ctx, calls[step + 1]) : null,
    revertedBy: revertedBy(ctx, entry.commit),
    flag: flagOf(ctx, entry.commit),
    rewrittenFrom: kind === 'call' ? null : await rewrittenFrom(ctx, ref, entry.commit),
  };
}
