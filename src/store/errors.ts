/** One error class per failure mode, so callers can branch on `instanceof` rather than on message text. */

export class MemgitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The value given to `execute` is not a memory tool_use block. */
export class InvalidToolUseError extends MemgitError {}

/** The store was used after `close()`. */
export class StoreClosedError extends MemgitError {
  constructor() {
    super('memgit: the store is closed');
  }
}

/** A commit id or tool_use id that names nothing in this store. */
export class CommitNotFoundError extends MemgitError {
  constructor(readonly ref: string) {
    super(`memgit: no commit or tool_use id ${JSON.stringify(ref)} in this store`);
  }
}

/** The directory exists and holds something that is not a memgit store we can open. */
export class NotAStoreError extends MemgitError {}

/** HEAD or an object it needs cannot be read; memgit will not guess. */
export class StoreCorruptError extends MemgitError {}

/** Another writer held the store's lock for longer than the caller was willing to wait. */
export class LockTimeoutError extends MemgitError {
  constructor(readonly lockPath: string, waitedMs: number) {
    super(`memgit: the store is locked by another writer (${lockPath}); gave up after ${waitedMs} ms`);
  }
}

/** A rollback that cannot be planned as asked: a bad operator name, path or point in history, or nothing to undo. */
export class RollbackRefusedError extends MemgitError {}

/** The store moved on since the preview the operator confirmed; nothing was written. */
export class StaleHeadError extends MemgitError {
  constructor(
    readonly expected: string,
    readonly actual: string,
  ) {
    super(`memgit: the store changed since the preview (HEAD is now ${actual.slice(0, 12)}, not ${expected.slice(0, 12)}); review the new preview`);
  }
}

/** A replication command that cannot run as asked: a bad remote, a failed transfer, a read-only clone. */
export class ReplicationRefusedError extends MemgitError {}

/** Replication to a remote was stopped because the remote moved; only a deliberate force push goes on. */
export class ReplicationStoppedError extends MemgitError {
  constructor(
    readonly remote: string,
    readonly reason: string,
  ) {
    super(`memgit: replication to ${remote} is stopped: ${reason}`);
  }
}

/** A write to a read-only clone (made by `memgit clone` for auditing). */
export class ReadOnlyStoreError extends MemgitError {
  constructor() {
    super('memgit: this store is a read-only clone for auditing; it takes no writes (memgit restore-from makes a writable copy)');
  }
}

/**
 * A call under a session that another key began (`memgit server`): a session belongs to the key of its
 * first commit, and no other key may add calls to it. Nothing was done.
 */
export class SessionKeyError extends MemgitError {
  constructor(readonly session: string) {
    super(`memgit: session ${JSON.stringify(session.slice(0, 128))} was begun by another key (or by a local writer); only that key may add calls to it: start a new session id`);
  }
}

/** A redaction that cannot run as asked: nothing or several things to match, a bad regex, an unknown call. */
export class RedactionRefusedError extends MemgitError {}

/** A ref that names more than one commit or call (an old store's call id spelling a commit id, a short prefix). */
export class AmbiguousRefError extends CommitNotFoundError {
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
    this.message = `memgit: ${JSON.stringify(ref)} is ambiguous: it names ${list}; say which with commit:<id> or call:<tool_use id>`;
  }
}

/** A point in history that names nothing in this store (an unknown ref, HEAD~N beyond the first commit, a time before it). */
export class PointNotFoundError extends CommitNotFoundError {
  constructor(ref: string, message: string) {
    super(ref);
    this.message = message;
  }
}

/** A point that is malformed (an impossible time, `HEAD~x`): a usage error, not a lookup that failed. */
export class InvalidPointError extends MemgitError {}

/** A point that names more than one commit (a tool_use id that is also another commit's prefix, a short prefix). */
export class AmbiguousPointError extends MemgitError {}

/** A memory path that holds nothing (or not what was asked: a directory where a file was wanted) at a point in history. */
export class PathNotFoundError extends MemgitError {}
