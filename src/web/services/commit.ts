import type { RefKind } from '../../history/points';
import { sessionNeighbours } from '../../history/sessions';
import { AuditContext, CommitSummary, entryFor, summarise } from './context';
import { diffViewsOf, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';
import { FlagBadge, flagOf } from './flags';
import { commitMessage, revertedByOf, rewrittenFrom } from '../../history/commit';

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
  const session = sessionNeighbours(ctx, entry);
  const budget = pageDiffBudget();
  return {
    commit: summarise(ctx, entry),
    message: await commitMessage(ctx, entry),
    diffs: (await diffViewsOf(ctx, entry)).map((d) => withinBudget(d, budget)),
    sessionStep: session.step,
    sessionCalls: session.calls,
    prevInSession: session.previous ? summarise(ctx, session.previous) : null,
    nextInSession: session.next ? summarise(ctx, session.next) : null,
    revertedBy: revertedByOf(ctx, entry.commit).map((e) => summarise(ctx, e)),
    flag: flagOf(ctx, entry.commit),
    rewrittenFrom: kind === 'call' ? null : await rewrittenFrom(ctx, ref, entry.commit),
  };
}
