import {
  AmbiguousPointError,
  AmbiguousRefError,
  CommitNotFoundError,
  contentsOf,
  InvalidPointError,
  RollbackBudget,
  RollbackFileDiff,
  RollbackOptions,
  RollbackOutcome,
  RollbackRefusedError,
  StaleHeadError,
} from '../../store';
import { DIFF_MAX_EDIT_LENGTH } from '../../history/diffs';
import { entryOf } from '../../history/points';
import { MAX_PAGE_DIFF_CHARS, WorkBudget, yieldToLoop } from './budget';
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

/**
 * What one rollback request may cost (docs/reliability.md). A preview (the confirmation page, the GET
 * twin, a POST with dryRun) plans at most `calls` undone calls and for at most `millis`; past either it
 * answers with status `stopped` and says how far it got, and the page offers the CLI instead of a
 * confirm button. Every outcome, previews and commits alike, carries at most `patchChars` of patches,
 * and a file whose versions differ by more than `maxEditLength` lines gets no patch.
 */
export const ROLLBACK_BUDGETS = {
  millis: 2000,
  calls: 1000,
  patchChars: MAX_PAGE_DIFF_CHARS / 2,
  maxEditLength: DIFF_MAX_EDIT_LENGTH,
} as const;

export function rollbackBudget(): RollbackBudget {
  const time = new WorkBudget(ROLLBACK_BUDGETS.millis);
  return {
    get spent() {
      return time.spent;
    },
    calls: ROLLBACK_BUDGETS.calls,
    patchChars: ROLLBACK_BUDGETS.patchChars,
    maxEditLength: ROLLBACK_BUDGETS.maxEditLength,
  };
}

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

/**
 * Run (or with dryRun, preview) an action within the request's budget (ROLLBACK_BUDGETS, unless
 * `options.budget` names another); the store's refusals become 400/404 for the pages.
 */
export async function runAction(ctx: AuditContext, action: RollbackAction, given: RollbackOptions): Promise<RollbackOutcome> {
  const store = ctx.store;
  const options: RollbackOptions = { ...given, budget: given.budget ?? rollbackBudget() };
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

/**
 * A rollback outcome as JSON: patches cut to the page's diff budget, the undone commits listed up to
 * MAX_REVERTS_LISTED (a reset across 100,000 commits would list 4 MB of ids), and `truncated` saying
 * that something was left out; `revertsLeftOut` counts the commits not listed.
 */
export type BoundedOutcome = RollbackOutcome & { truncated: boolean; revertsLeftOut: number };

export const MAX_REVERTS_LISTED = 1000;

export function boundedOutcome(outcome: RollbackOutcome, bytes = MAX_PAGE_DIFF_CHARS / 2): BoundedOutcome {
  // In bytes of JSON: the patches appear twice (per file and joined), and a character may take 3 bytes.
  let left = bytes;
  let truncated = outcome.patchCut;
  const files = outcome.files.map((file) => {
    if (file.cut) return { ...file, patch: leftOutPatch(file) };
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
  const revertsLeftOut = Math.max(0, outcome.reverts.length - MAX_REVERTS_LISTED);
  return {
    ...outcome,
    reverts: revertsLeftOut ? outcome.reverts.slice(0, MAX_REVERTS_LISTED) : outcome.reverts,
    revertsLeftOut,
    files,
    patch: truncated ? files.map((f) => f.patch).join('') : outcome.patch,
    truncated: truncated || revertsLeftOut > 0,
  };
}

/** What stands for a patch the outcome left out. */
function leftOutPatch(file: RollbackFileDiff): string {
  const name = file.newPath ?? file.oldPath;
  const why = file.tooLarge ? 'the two versions differ too much to diff within the budget' : 'response budget';
  return `\\ memgit: patch of ${name} left out (${why}); the CLI prints the whole diff\n`;
}

/** The CLI command that previews an action in full (a stopped preview points there). */
export function cliPreview(action: RollbackAction): string {
  switch (action.kind) {
    case 'revert':
      return `memgit revert ${shellWord(action.ref)} --dry-run`;
    case 'restore':
      return `memgit restore ${shellWord(action.path)} --at ${shellWord(action.at)} --dry-run`;
    case 'session':
      return `memgit rollback-session ${shellWord(action.session)} --dry-run`;
    case 'reset':
      return `memgit reset --to ${shellWord(action.to)} --dry-run`;
  }
}

function shellWord(word: string): string {
  return /^[A-Za-z0-9_.:/@=+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
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
  /** The CLI command that previews the action in full (shown when the preview stopped). */
  cli: string;
  budgets: typeof ROLLBACK_BUDGETS;
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
