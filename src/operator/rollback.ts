import { type MemoryStore, oneLine, ReadOnlyStoreError, type RollbackBudget, type RollbackFileDiff, type RollbackOptions, type RollbackOutcome, StaleHeadError } from '../store';
import { DIFF_MAX_EDIT_LENGTH } from '../history/diffs';
import { InvalidRequestError, UnknownActionError } from './errors';

/**
 * The four rollback actions as an operator asks for them, in the UI (forms, its JSON twins) and in the
 * server's API (`POST /api/v1/stores/{store}/rollback/{kind}`): a request's fields parsed into an action,
 * the action run on the store within a request's budget, and the outcome cut to what one answer may hold.
 * One mapping from request to operation to record, called directly by every edge that offers it.
 */

export type RollbackKind = 'revert' | 'restore' | 'session' | 'reset';

export type RollbackAction =
  | { kind: 'revert'; ref: string }
  | { kind: 'restore'; path: string; at: string }
  | { kind: 'session'; session: string }
  | { kind: 'reset'; to: string };

export const ROLLBACK_KINDS: readonly RollbackKind[] = ['revert', 'restore', 'session', 'reset'];

const MAX_PARAM_LENGTH = 2048;
export const MAX_REASON_LENGTH = 200;

/** Bytes of patch text (UTF-8, in JSON) one rollback answer carries: half of the UI's page diff budget. */
export const ROLLBACK_PATCH_BYTES = 1024 * 1024;

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
  patchChars: ROLLBACK_PATCH_BYTES,
  maxEditLength: DIFF_MAX_EDIT_LENGTH,
} as const;

/** A request's budget: ROLLBACK_BUDGETS, its time counted from now. */
export function rollbackBudget(now: () => number = Date.now): RollbackBudget {
  const deadline = now() + ROLLBACK_BUDGETS.millis;
  return {
    get spent() {
      return now() >= deadline;
    },
    calls: ROLLBACK_BUDGETS.calls,
    patchChars: ROLLBACK_BUDGETS.patchChars,
    maxEditLength: ROLLBACK_BUDGETS.maxEditLength,
  };
}

function param(params: Record<string, unknown>, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw new InvalidRequestError(`${name} is required`);
  if (value.length > MAX_PARAM_LENGTH) throw new InvalidRequestError(`${name} is too long`);
  return value;
}

/** The action a request names: `kind` from its path, the rest from its query or body. */
export function parseRollbackAction(kind: string, params: Record<string, unknown>): RollbackAction {
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
      throw new UnknownActionError(`no rollback action ${JSON.stringify(kind)}`);
  }
}

/** The action's parameters, as hidden form fields and query strings. */
export function actionParams(action: RollbackAction): Record<string, string> {
  const { kind: _kind, ...rest } = action;
  return rest as Record<string, string>;
}

/** A request's reason: one line of at most MAX_REASON_LENGTH characters, or none. */
export function readReason(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new InvalidRequestError('reason must be text');
  const line = oneLine(value, MAX_REASON_LENGTH);
  return line === '' ? undefined : line;
}

/**
 * Run (or with dryRun, preview) an action within the request's budget (ROLLBACK_BUDGETS, unless
 * `options.budget` names another). The store's refusals go up as they are (their codes say what they are).
 */
export async function runRollback(store: MemoryStore, action: RollbackAction, given: RollbackOptions): Promise<RollbackOutcome> {
  const options: RollbackOptions = { ...given, budget: given.budget ?? rollbackBudget() };
  switch (action.kind) {
    case 'revert':
      return store.revert(action.ref, options);
    case 'restore':
      return store.restore(action.path, { ...options, at: action.at });
    case 'session':
      return store.rollbackSession(action.session, options);
    case 'reset':
      return store.reset({ ...options, to: action.to });
  }
}

/** Who asks, as the commit records it: `Memory-Actor: operator:<operator>`, and the server key it came with. */
export interface RollbackRequester {
  operator: string;
  key?: string;
}

/** What a request's JSON expectHead refusal says: the caller previews again, then confirms. */
export const STALE_REQUEST_MESSAGE = 'the store changed since expectHead; preview again';

/**
 * A JSON rollback request (the UI's `POST /api/rollback/{kind}`, the server's
 * `POST /api/v1/stores/{store}/rollback/{kind}`): `{ref|path+at|session|to, reason?, dryRun?, expectHead?}`
 * → the action → its outcome, bounded. A read-only store refuses every request first (ReadOnlyStoreError);
 * a store that moved since `expectHead` throws StaleHeadError with STALE_REQUEST_MESSAGE.
 */
export async function rollbackRequest(store: MemoryStore, kind: string, body: Record<string, unknown>, who: RollbackRequester): Promise<BoundedOutcome> {
  if (store.readOnly) throw new ReadOnlyStoreError();
  const action = parseRollbackAction(kind, body);
  try {
    const outcome = await runRollback(store, action, {
      operator: who.operator,
      reason: readReason(body.reason),
      dryRun: body.dryRun === true,
      expectHead: typeof body.expectHead === 'string' ? body.expectHead : undefined,
      ...(who.key === undefined ? {} : { key: who.key }),
    });
    return boundedOutcome(outcome);
  } catch (error) {
    if (error instanceof StaleHeadError) throw new StaleHeadError(error.expected, error.actual, STALE_REQUEST_MESSAGE);
    throw error;
  }
}

/**
 * A rollback outcome as JSON: patches cut to the answer's budget, the undone commits listed up to
 * MAX_REVERTS_LISTED (a reset across 100,000 commits would list 4 MB of ids), and `truncated` saying
 * that something was left out; `revertsLeftOut` counts the commits not listed.
 */
export type BoundedOutcome = RollbackOutcome & { truncated: boolean; revertsLeftOut: number };

export const MAX_REVERTS_LISTED = 1000;

export function boundedOutcome(outcome: RollbackOutcome, bytes = ROLLBACK_PATCH_BYTES): BoundedOutcome {
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
