import { contentsOf, type RollbackOutcome } from '../../store';
import { actionParams, cliPreview, ROLLBACK_BUDGETS, RollbackAction, runRollback } from '../../operator/rollback';
import { entryOf } from '../../history/points';
import { yieldToLoop } from './budget';
import { AuditContext, CommitSummary, entryFor, summarise } from './context';
import { compareTexts, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';

/**
 * The rollback confirmation page's model (the preview it shows, the diffs, the calls a conflict names)
 * and the "reverted by" links. What a request asks and how it runs is the operator floor's
 * (src/operator/rollback.ts), the same for the UI and the server's API.
 */

export interface ConfirmModel {
  action: RollbackAction;
  params: Record<string, string>;
  /** What the action is about: the call reverted, the point restored or reset to. */
  target: CommitSummary | null;
  outcome: RollbackOutcome;
  diffs: FileDiffView[];
  /** Conflicting calls, summarised for links. */
  conflictCalls: Record<string, CommitSummary>;
  /** The CLI command that previews the action in full (shown when the preview stopped). */
  cli: string;
  budgets: typeof ROLLBACK_BUDGETS;
}

/** The confirmation page's model: the exact diff the action would commit now, or its conflicts. */
export async function confirmModel(ctx: AuditContext, action: RollbackAction, operator: string): Promise<ConfirmModel> {
  const outcome = await runRollback(ctx.store, action, { operator, dryRun: true });
  return describe(ctx, action, outcome);
}

export async function describe(ctx: AuditContext, action: RollbackAction, outcome: RollbackOutcome): Promise<ConfirmModel> {
  const targetRef =
    action.kind === 'revert' ? action.ref : action.kind === 'restore' ? action.at : action.kind === 'reset' ? targetOfReset(ctx, outcome) : null;
  const target = targetRef ? summarise(ctx, await entryFor(ctx, targetRef)) : null;
  const budget = pageDiffBudget();
  const diffs: FileDiffView[] = [];
  for (const file of outcome.files) {
    const texts = contentsOf(file);
    const { patch: _patch, cut: _cut, tooLarge, ...diff } = file;
    if (!texts || budget.left <= 0) {
      // Left out by the outcome's budget (its contents were never read), or past the page's: not diffed.
      diffs.push({ ...diff, added: 0, removed: 0, hunks: [], truncated: true, tooLarge: tooLarge === true, noFinalNewline: false, hidden: false, omitted: tooLarge !== true, statsUnknown: true });
      continue;
    }
    diffs.push(withinBudget({ ...diff, ...compareTexts(texts.before, texts.after) }, budget));
    await yieldToLoop();
  }
  const conflictCalls: Record<string, CommitSummary> = {};
  for (const c of outcome.conflicts) {
    for (const call of c.calls) {
      const entry = entryOf(ctx, call.commit);
      if (entry) conflictCalls[call.commit] = summarise(ctx, entry);
    }
  }
  return { action, params: actionParams(action), target, outcome, diffs, conflictCalls, cli: cliPreview(action), budgets: ROLLBACK_BUDGETS };
}

/** A reset names its point as a time, id or commit; the point is the commit just before the undone ones. */
function targetOfReset(ctx: AuditContext, outcome: RollbackOutcome): string | null {
  const oldestUndone = outcome.reverts[outcome.reverts.length - 1];
  if (!oldestUndone) return outcome.head;
  return entryOf(ctx, oldestUndone)?.parent ?? null;
}
