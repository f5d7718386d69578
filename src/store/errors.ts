import type { ErrorCode } from './error-codes';

export { ERROR_CODES } from './error-codes';
export type { ErrorCode } from './error-codes';

/**
 * One error class per failure mode, so callers can branch on `instanceof` or on `code` rather than on
 * message text. Every public error of memgit extends MemgitError.
 */

export class MemgitError extends Error {
  /** The class's failure mode (error-codes.ts); every subclass names its own. */
  static readonly code: ErrorCode = 'memgit_error';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }

  /** A stable snake_case name of the failure mode (docs/library.md#errors): what edges map to their answers. */
  get code(): ErrorCode {
    return (this.constructor as typeof MemgitError).code;
  }

  /**
   * The message for people, as every edge shows it: the same text as `message`, which begins with no
   * `memgit: ` (the CLI adds that when it prints an error; the HTTP API, MCP and the UI show it as is).
   * Kept as a name of its own for the callers that use it.
   */
  get detail(): string {
    return this.message;
  }
}

/** What to show of any error: its message (a memgit error's `detail`), or the value as a string. */
export function errorDetail(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The value given to `execute` is not a memory tool_use block. */
export class InvalidToolUseError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_tool_use';
}

/** The store was used after `close()`. */
export class StoreClosedError extends MemgitError {
  static override readonly code: ErrorCode = 'store_closed';

  constructor() {
    super('the store is closed');
  }
}

/** A commit id or tool_use id that names nothing in this store. */
export class CommitNotFoundError extends MemgitError {
  static override readonly code: ErrorCode = 'commit_not_found';

  constructor(readonly ref: string) {
    super(`no commit or tool_use id ${JSON.stringify(ref)} in this store`);
  }
}

/** The directory exists and holds something that is not a memgit store we can open. */
export class NotAStoreError extends MemgitError {
  static override readonly code: ErrorCode = 'not_a_store';
}

/** HEAD or an object it needs cannot be read; memgit will not guess. */
export class StoreCorruptError extends MemgitError {
  static override readonly code: ErrorCode = 'store_corrupt';
}

/** Another writer held the store's lock for longer than the caller was willing to wait. */
export class LockTimeoutError extends MemgitError {
  static override readonly code: ErrorCode = 'lock_timeout';

  constructor(readonly lockPath: string, waitedMs: number) {
    super(`the store is locked by another writer (${lockPath}); gave up after ${waitedMs} ms`);
  }
}

/** A rollback that cannot be planned as asked: a bad operator name, path or point in history, or nothing to undo. */
export class RollbackRefusedError extends MemgitError {
  static override readonly code: ErrorCode = 'rollback_refused';
}

/** The store moved on since the preview the operator confirmed; nothing was written. */
export class StaleHeadError extends MemgitError {
  static override readonly code: ErrorCode = 'stale_head';

  /** `message`: what to say instead, where the caller's request names its preview otherwise (a JSON `expectHead`). */
  constructor(
    readonly expected: string,
    readonly actual: string,
    message?: string,
  ) {
    super(message ?? `the store changed since the preview (HEAD is now ${actual.slice(0, 12)}, not ${expected.slice(0, 12)}); review the new preview`);
  }
}

/** A replication command that cannot run as asked: a bad remote, a failed transfer, a read-only clone. */
export class ReplicationRefusedError extends MemgitError {
  static override readonly code: ErrorCode = 'replication_refused';
}

/** Replication to a remote was stopped because the remote moved; only a deliberate force push goes on. */
export class ReplicationStoppedError extends MemgitError {
  static override readonly code: ErrorCode = 'replication_stopped';

  constructor(
    readonly remote: string,
    readonly reason: string,
  ) {
    super(`replication to ${remote} is stopped: ${reason}`);
  }
}

/** A write to a read-only clone (made by `memgit clone` for auditing). */
export class ReadOnlyStoreError extends MemgitError {
  static override readonly code: ErrorCode = 'read_only_store';

  constructor() {
    super('this store is a read-only clone for auditing; it takes no writes (memgit restore-from makes a writable copy)');
  }
}

/**
 * A call under a session that another key began (`memgit server`): a session belongs to the key of its
 * first commit, and no other key may add calls to it. Nothing was done.
 */
export class SessionKeyError extends MemgitError {
  static override readonly code: ErrorCode = 'session_key_conflict';

  constructor(readonly session: string) {
    super(`session ${JSON.stringify(session.slice(0, 128))} was begun by another key (or by a local writer); only that key may add calls to it: start a new session id`);
  }
}

/** A redaction that cannot run as asked: nothing or several things to match, a bad regex, an unknown call. */
export class RedactionRefusedError extends MemgitError {
  static override readonly code: ErrorCode = 'redaction_refused';
}

/** A ref that names more than one commit or call (an old store's call id spelling a commit id, a short prefix). */
export class AmbiguousRefError extends CommitNotFoundError {
  static override readonly code: ErrorCode = 'ambiguous_ref';

  constructor(
    ref: string,
    readonly candidates: { kind: 'commit' | 'call'; commit: string; toolUseId?: string }[],
  ) {
    super(ref);
    const shown = candidates.slice(0, 10);
    const more = candidates.length - shown.length;
    const list = shown
      .map((c) => (c.kind === 'call' ? `call ${c.toolUseId} (commit ${c.commit.slice(0, 12)})` : `commit ${c.commit}`))
      .join(', ') + (more > 0 ? ` and ${more} more` : '');
    this.message = `${JSON.stringify(ref)} is ambiguous: it names ${list}; say which with commit:<id> or call:<tool_use id>`;
  }
}

/** A point in history that names nothing in this store (an unknown ref, HEAD~N beyond the first commit, a time before it). */
export class PointNotFoundError extends CommitNotFoundError {
  static override readonly code: ErrorCode = 'point_not_found';

  constructor(ref: string, message: string) {
    super(ref);
    this.message = message;
  }
}

/** A point that is malformed (an impossible time, `HEAD~x`): a usage error, not a lookup that failed. */
export class InvalidPointError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_point';
}

/** A point that names more than one commit (a tool_use id that is also another commit's prefix, a short prefix). */
export class AmbiguousPointError extends MemgitError {
  static override readonly code: ErrorCode = 'ambiguous_point';
}

/** A memory path that holds nothing (or not what was asked: a directory where a file was wanted) at a point in history. */
export class PathNotFoundError extends MemgitError {
  static override readonly code: ErrorCode = 'path_not_found';
}

/** A review policy that is not one memgit knows (`memgit policy --review`), or a policy file that does not parse. */
export class InvalidReviewPolicyError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_review_policy';
}

/** A review id that names no pending or decided review of this store. */
export class ReviewNotFoundError extends MemgitError {
  static override readonly code: ErrorCode = 'review_not_found';

  constructor(readonly id: string) {
    super(`no review ${JSON.stringify(id)} in this store`);
  }
}

/** An approval or rejection that cannot be done (a call conflicts with main now, a review already decided): nothing was written. */
export class ReviewRefusedError extends MemgitError {
  static override readonly code: ErrorCode = 'review_refused';

  constructor(
    message: string,
    /** The calls that no longer apply to main, with the files they conflict on. */
    readonly conflicts: Array<{ toolUseId: string; commit: string; paths: string[] }> = [],
  ) {
    super(message);
  }
}

/** A dream asked for with bad input (instructions over 4,096 characters, an unknown session, a bad model name): nothing was started. */
export class InvalidDreamError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_dream';
}

/** A dream id that names no dream of this store. */
export class DreamNotFoundError extends MemgitError {
  static override readonly code: ErrorCode = 'dream_not_found';

  constructor(readonly id: string) {
    super(`no dream ${JSON.stringify(id)} in this store`);
  }
}

/** A dream asked for while another of the same store is running (at most one at a time): nothing was started. */
export class DreamRunningError extends MemgitError {
  static override readonly code: ErrorCode = 'dream_running';

  constructor(readonly running: string) {
    super(`dream ${running} is running on this store (one at a time); nothing was started`);
  }
}
