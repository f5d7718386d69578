import { isMemoryFile } from '../store/history-index/file-diffs';
import type { HistoryEntry } from '../store/history-index/entry';
import type { CallEntry } from '../store';
import type { HistoryContext } from './context';

/**
 * The one JSON shape of memgit's records — a commit, a call, a session, a file revision — used by the CLI's
 * `--json`, the HTTP API (the web's /api twins) and the library. Documented in docs/records.md, with a JSON
 * Schema in docs/records.schema.json. camelCase names, ISO 8601 UTC times, `null` for what does not apply,
 * and a `schema` marker (`memgit.commit/1`) on every record: a change that breaks readers bumps the number;
 * new fields may be added without one.
 */

export const RECORD_SCHEMAS = {
  commit: 'memgit.commit/1',
  call: 'memgit.call/1',
  session: 'memgit.session/1',
  fileRevision: 'memgit.file-revision/1',
} as const;

/** One commit of the store: an agent call, an operator's rollback, or the store's initialisation. */
export interface CommitRecord {
  schema: typeof RECORD_SCHEMAS.commit;
  commit: string;
  parent: string | null;
  /** Commit time, ISO 8601 UTC. */
  time: string;
  /** The tool_use id of an agent call (null for operator and store commits). */
  toolUseId: string | null;
  /** The commit's first line: the tool_use id, or e.g. `revert toolu_…` for an operator action. */
  title: string;
  session: string | null;
  command: string | null;
  /** The call's path (Memory-Path), and a rename's new path. */
  path: string | null;
  newPath: string | null;
  /** Every memory file the commit changed (virtual paths, sorted): also for operator commits. */
  paths: string[];
  /** `operator:<name>` for rollbacks. */
  actor: string | null;
  /** Commits an operator commit undid, newest first. */
  reverts: string[];
  reason: string | null;
  /** The id of the server key the commit was made with (`Memory-Key`; null for local writes). */
  key: string | null;
  /**
   * A call approved from review onto main (docs/review.md): the review (`Memory-Review`), who approved it
   * (`Memory-Approved-By`) and the commit it made on its review branch (`Memory-Original`). Else null.
   */
  review: { id: string; approvedBy: string | null; original: string | null } | null;
}

/** A file's change in a commit, with its unified diff when asked for (`memgit show --json`). */
export interface FileChangeRecord {
  status: 'added' | 'deleted' | 'modified' | 'renamed';
  oldPath: string | null;
  newPath: string | null;
  patch?: string;
}

/** A session: the commits one conversation made, and its reads and failed calls from the call log. */
export interface SessionRecord {
  schema: typeof RECORD_SCHEMAS.session;
  id: string;
  /** Commits (successful writes) of the session. */
  calls: number;
  first: string;
  last: string;
  /** Memory files the session changed. */
  files: number;
  /** Commits that changed a memory file, and calls an operator later undid (when known). */
  writes?: number;
  reverted?: number;
  /** Successful views and failed calls of the session in the call log (when known). */
  reads?: number;
  failed?: number;
  /** The session made no commit: it is known only from the call log (its reads and failures). */
  logOnly?: boolean;
}

/** One revision of one file: the commit that created, changed, renamed or deleted it. */
export interface FileRevisionRecord extends Omit<CommitRecord, 'schema' | 'path' | 'newPath' | 'paths'> {
  schema: typeof RECORD_SCHEMAS.fileRevision;
  /** The file's path in this revision. */
  path: string;
  kind: 'created' | 'modified' | 'renamed' | 'deleted';
  /** For a rename: the path it came from. */
  from: string | null;
}

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** Seconds since the epoch of a record's ISO time. */
export function recordSeconds(iso: string): number {
  return Math.floor(Date.parse(iso) / 1000);
}

export function commitRecord(entry: HistoryEntry): CommitRecord {
  const paths = [...new Set(entry.changes.filter((c) => isMemoryFile(c.path)).map((c) => `/${c.path}`))].sort();
  return {
    schema: RECORD_SCHEMAS.commit,
    commit: entry.commit,
    parent: entry.parent,
    time: isoTime(entry.time),
    toolUseId: entry.toolUseId ?? null,
    title: entry.title,
    session: entry.session ?? null,
    command: entry.command ?? null,
    path: entry.path ?? null,
    newPath: entry.newPath ?? null,
    paths,
    actor: entry.actor ?? null,
    reverts: entry.reverts ?? [],
    reason: entry.reason ?? null,
    key: entry.key ?? null,
    review: entry.review !== undefined ? { id: entry.review, approvedBy: entry.approvedBy ?? null, original: entry.original ?? null } : null,
  };
}

/**
 * A commit record with its position in history (0 = the store's first commit): the shape of every commit
 * in the HTTP API's answers (docs/records.md).
 */
export type PositionedCommitRecord = CommitRecord & { position: number };

export function positionedCommitRecord(ctx: HistoryContext, entry: HistoryEntry): PositionedCommitRecord {
  return { ...commitRecord(entry), position: ctx.store.history.position(entry.commit) ?? -1 };
}

export function sessionRecord(session: {
  id: string;
  calls: number;
  first: number;
  last: number;
  files: number;
  writes?: number;
  reverted?: number;
  reads?: number;
  failed?: number;
  logOnly?: boolean;
}): SessionRecord {
  const record: SessionRecord = {
    schema: RECORD_SCHEMAS.session,
    id: session.id,
    calls: session.calls,
    first: isoTime(session.first),
    last: isoTime(session.last),
    files: session.files,
  };
  if (session.writes !== undefined) record.writes = session.writes;
  if (session.reverted !== undefined) record.reverted = session.reverted;
  if (session.reads !== undefined) record.reads = session.reads;
  if (session.failed !== undefined) record.failed = session.failed;
  if (session.logOnly !== undefined) record.logOnly = session.logOnly;
  return record;
}

export function fileRevisionRecord(
  entry: HistoryEntry,
  revision: { path: string; kind: FileRevisionRecord['kind']; from: string | null },
): FileRevisionRecord {
  const { schema: _schema, path: _path, newPath: _newPath, paths: _paths, ...commit } = commitRecord(entry);
  return { ...commit, schema: RECORD_SCHEMAS.fileRevision, path: revision.path, kind: revision.kind, from: revision.from };
}

/** One memory call as the call log records it: reads and failed calls too (docs/records.md). */
export interface CallRecord {
  schema: typeof RECORD_SCHEMAS.call;
  id: string;
  session: string;
  time: string;
  command: string | null;
  paths: string[];
  ok: boolean;
  kind: 'read' | 'write' | 'failed';
  error: string | null;
  commit: string | null;
  readAt: string | null;
  /** The id of the server key the call came with (null for local calls). */
  key: string | null;
  /**
   * A write held for review (docs/review.md): its review, the state of this call in it (`held` while the
   * review is pending, then `approved` or `rejected`) and, once approved, its commit on main. Null for
   * every call that was not held.
   */
  review: CallReview | null;
}

export interface CallReview {
  id: string;
  state: 'held' | 'approved' | 'rejected';
  approvedAs: string | null;
}

export function callRecord(entry: CallEntry, review: CallReview | null = null): CallRecord {
  return {
    schema: RECORD_SCHEMAS.call,
    id: entry.id,
    session: entry.session,
    time: new Date(entry.time).toISOString(),
    command: entry.command,
    paths: entry.paths,
    ok: entry.kind !== 'failed',
    kind: entry.kind,
    error: entry.error,
    commit: entry.commit,
    readAt: entry.readAt,
    key: entry.key ?? null,
    review,
  };
}
