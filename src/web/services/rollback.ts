import { revertedBy as revertedByIndex } from '../../history/reverts';
import { AmbiguousPointError, AmbiguousRefError, CommitNotFoundError, InvalidPointError, RollbackRefusedError, StaleHeadError } from '../../store/errors';
import { contentsOf, RollbackOptions, RollbackOutcome } from '../../store/rollback';
import { MAX_PAGE_DIFF_CHARS } from './budget';
import { AuditContext, BadRequest, CommitSummary, entryFor, NotFound, summarise } from './context';
import { compareTexts, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';

/**
 * The rollback actions of the UI and its JSON API: parsing an action from request parameters, its
 * preview (a dry run, so GET changes nothing), running it, and the "reverted by" links.
 */

export type RollbackKind = 'revert' | 'restore' | 'session' | 'reset';

export type RollbackAction =
  | { kind: 'revert'; ref: string }
  | { kind: 'restore'; path: string; at: string }
  | { kind: 'session'; session: string }
  | { kind: 'reset'; to: string };

export const ROLLBACK_KINDS: readonly RollbackKind[] = ['revert', 'restore', 'session', 'reset'];

const MAX_PARAM_LENGTH = 2048;

function param(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw new BadRequest(`${name} is required`);
  if (value.length > MAX_PARAM_LENGTH) throw new BadRequest(`${name} is too long`);
  return value;
}

export function parseAction(kind: string, params: Record<string, unknown>): RollbackAction {
  switch (kind) {
    case 'revert':
      return { kind, ref: param(params, 'ref') };
    case 'restore':
      return { kind, path: param(params, 'path'), at: param(params, 'at') };
    case 'session':
      return { kind, session: param(params, 'session') };
    case 'reset':
      return { kind, to: param(params, 'to') };
    default:
      throw new NotFound(`no rollback action ${JSON.stringify(kind)}`);
  }
}

/** The action's parameters, as hidden form fields and query strings. */
export function actionParams(action: RollbackAction): Record<string, string> {
  const { kind: _kind, ...rest } = action;
  return rest as Record<string, string>;
}

/** Run (or with dryRun, preview) an action; the store's refusals become 400/404 for the pages. */
export async function runAction(ctx: AuditContext, action: RollbackAction, options: RollbackOptions): Promise<RollbackOutcome> {
  const store = ctx.store;
  try {
    switch (action.kind) {
      case 'revert':
        return await store.revert(action.ref, options);
      case 'restore':
        return await store.restore(action.path, { ...options, at: action.at });
      case 'session':
        return await store.rollbackSession(action.session, options);
      case 'reset':
        return await store.reset({ ...options, to: action.to });
    }
  } catch (error) {
    if (error instanceof AmbiguousRefError) throw new BadRequest(error.message.replace(/^memgit: /, ''));
    if (error instanceof CommitNotFoundError) throw new NotFound(error.message.replace(/^memgit: /, ''));
    if (error instanceof RollbackRefusedError || error instanceof InvalidPointError || error instanceof AmbiguousPointError) throw new BadRequest(error.message.replace(/^memgit: /, ''));
    throw error;
  }
}

export { StaleHeadError };

/** A rollback outcome as JSON: patches cut to the page's diff budget, and `truncated` saying so. */
export type BoundedOutcome = RollbackOutcome & { truncated: boolean };

export function boundedOutcome(outcome: RollbackOutcome, bytes = MAX_PAGE_DIFF_CHARS / 2): BoundedOutcome {
  // In bytes of JSON: the patches appear twice (per file and joined), and a character may take 3 bytes.
  let left = bytes;
  let truncated = false;
  const files = outcome.files.map((file) => {
    const size = Buffer.byteLength(file.patch, 'utf8');
    if (size <= left) {
      left -= size;
      return file;
    }
    truncated = true;
    const room = Math.floor(left / 3);
    const cut = room > 0 ? file.patch.slice(0, file.patch.lastIndexOf('\n', room) + 1) : '';
    left = 0;
    return { ...file, patch: `${cut}\\ memgit: patch cut here (response budget); the CLI prints the whole diff\n` };
  });
  return { ...outcome, files, patch: truncated ? files.map((f) => f.patch).join('') : outcome.patch, truncated };
}

export interface ConfirmModel {
  action: RollbackAction;
  params: Record<string, string>;
  /** What the action is about: the call reverted, the point restored or reset to. */
  target: CommitSummary | null;
  outcome: RollbackOutcome;
  diffs: FileDiffView[];
  /** Conflicting calls, summarised for links. */
  conflictCalls: Record<string, CommitSummary>;
}

/** The confirmation page's model: the exact diff the action would commit now, or its conflicts. */
export async function confirmModel(ctx: AuditContext, action: RollbackAction, operator: string): Promise<ConfirmModel> {
  const outcome = await runAction(ctx, action, { operator, dryRun: true });
  return describe(ctx, action, outcome);
}

export async function describe(ctx: AuditContext, action: RollbackAction, outcome: RollbackOutcome): Promise<ConfirmModel> {
  const targetRef =
    action.kind === 'revert' ? action.ref : action.kind === 'restore' ? action.at : action.kind === 'reset' ? targetOfReset(ctx, outcome) : null;
  const target = targetRef ? summarise(ctx, await entryFor(ctx, targetRef)) : null;
  const budget = pageDiffBudget();
  const diffs = outcome.files.map((file) => {
    const texts = contentsOf(file) ?? { before: '', after: '' };
    const { patch: _patch, ...diff } = file;
    return withinBudget({ ...diff, ...compareTexts(texts.before, texts.after) }, budget);
  });
  const conflictCalls: Record<string, CommitSummary> = {};
  for (const c of outcome.conflicts) {
    for (const call of c.calls) {
      const entry = ctx.store.history.get(call.commit);
      if (entry) conflictCalls[call.commit] = summarise(ctx, entry);
    }
  }
  return { action, params: actionParams(action), target, outcome, diffs, conflictCalls };
}

/** A reset names its point as a time, id or commit; the point is the commit just before the undone ones. */
function targetOfReset(ctx: AuditContext, outcome: RollbackOutcome): string | null {
  const oldestUndone = outcome.reverts[outcome.reverts.length - 1];
  if (!oldestUndone) return outcome.head;
  return ctx.store.history.get(oldestUndone)?.parent ?? null;
}

/** Which operator commits reverted a commit (the index over Memory-Reverts trailers lives in src/history). */
export function revertedBy(ctx: AuditContext, commit: string): CommitSummary[] {
  return revertedByIndex(ctx.store.history, commit).map((entry) => summarise(ctx, entry));
}
