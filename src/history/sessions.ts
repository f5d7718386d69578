import { isNewId } from '../contract/ids';
import type { CallEntry, TimelineRecord } from '../store';
import { FileDiff, isMemoryFile } from '../store/history-index/file-diffs';
import type { HistoryIndex } from '../store/history-index';
import type { HistoryEntry } from '../store/history-index/entry';
import { HistoryContext, remembered } from './context';
import { SessionRecord, sessionRecord } from './records';
import { revertedBy } from './reverts';

/**
 * The sessions of a store (`memgit sessions`, the UI's list): when each was active, how many calls and
 * writes, how many undone — from the history — and how many reads and failed calls, from the call log.
 * A session that made no commit (it only read, or every call failed) is known from the call log alone:
 * it is listed too, marked `logOnly`, with its first and last logged call as its times.
 */

export interface SessionStats {
  id: string;
  /** Seconds since the epoch of its first and last commit (of a `logOnly` session: its first and last logged call, with milliseconds). */
  first: number;
  last: number;
  /** Commits (successful writes) of the session. */
  calls: number;
  /** Calls that changed a memory file. */
  writes: number;
  /** Calls later undone by an operator (revert, restore, rollback-session, reset). */
  reverted: number;
  /** Successful views and failed calls in the call log (0 when the log is off or has dropped them). */
  reads: number;
  failed: number;
  /** The session made no commit: it is known only from the call log. */
  logOnly: boolean;
}

/**
 * Every session as its documented record (`memgit.session/1`, docs/records.md), most recently active
 * first: what `memgit sessions --json`, the UI's list and `GET /api/sessions` print. Recomputed only when
 * the history or the call log has changed.
 */
export async function listSessions(ctx: HistoryContext): Promise<SessionRecord[]> {
  const { history, callLog } = ctx.store;
  return remembered(ctx, 'sessions', `${history.size}:${await callLog.version()}`, async () =>
    sessionStats(history, await callLog.read()).map((stats) => {
      const files = new Set<string>();
      for (const e of history.bySession(stats.id)) for (const c of e.changes) if (isMemoryFile(c.path)) files.add(c.path);
      return sessionRecord({ ...stats, files: files.size });
    }),
  );
}

/** Every session, most recently active first; `calls` is the call log (`store.callLog.read()`), if read. */
export function sessionStats(history: HistoryIndex, calls: readonly CallEntry[] = []): SessionStats[] {
  const logged = new Map<string, { reads: number; failed: number; first: number; last: number }>();
  /** The latest logged call of each session, writes included, in milliseconds. */
  const latestMs = new Map<string, number>();
  for (const call of calls) {
    if (!isNewId(call.session)) continue; // a session id the store refused names no session
    latestMs.set(call.session, Math.max(latestMs.get(call.session) ?? 0, call.time));
    if (call.kind === 'write') continue;
    const seen = logged.get(call.session) ?? { reads: 0, failed: 0, first: call.time, last: call.time };
    if (call.kind === 'read') seen.reads += 1;
    else seen.failed += 1;
    seen.first = Math.min(seen.first, call.time);
    seen.last = Math.max(seen.last, call.time);
    logged.set(call.session, seen);
  }
  const list = history.sessions().map((id) => {
    const entries = history.bySession(id);
    const fromLog = logged.get(id);
    logged.delete(id);
    return {
      id,
      // Commit times have whole seconds; the call log has the milliseconds, writes included. Without it, the
      // end of the commit's second (as listCalls places a write after its reads).
      lastMs: Math.max(latestMs.get(id) ?? entries[entries.length - 1].time * 1000 + 999, entries[entries.length - 1].time * 1000),
      lastPosition: history.position(entries[entries.length - 1].commit) ?? 0,
      first: entries[0].time,
      last: entries[entries.length - 1].time,
      calls: entries.length,
      writes: entries.filter((e) => e.changes.some((c) => isMemoryFile(c.path))).length,
      reverted: entries.filter((e) => revertedBy(history, e.commit).length > 0).length,
      reads: fromLog?.reads ?? 0,
      failed: fromLog?.failed ?? 0,
      logOnly: false,
    };
  });
  for (const [id, seen] of logged) {
    const times = { first: seen.first / 1000, last: seen.last / 1000, lastMs: seen.last };
    list.push({ id, ...times, lastPosition: -1, calls: 0, writes: 0, reverted: 0, reads: seen.reads, failed: seen.failed, logOnly: true });
  }
  // Within a second, the later commit in history is the newer.
  return list
    .sort((a, b) => b.lastMs - a.lastMs || b.lastPosition - a.lastPosition || (a.id < b.id ? -1 : 1))
    .map(({ lastPosition: _, lastMs: __, ...stats }) => stats);
}

/**
 * What the API did to a session's context (compaction summaries, context-editing clears), in order, each
 * naming the commit it came after: the session's timeline (src/store/timeline.ts).
 */
export function sessionTimeline(ctx: HistoryContext, id: string): Promise<TimelineRecord[]> {
  return ctx.store.timeline.forSession(id);
}

/** One session's commits, oldest first (none for a session known only from the call log). */
export function sessionCommits(ctx: HistoryContext, id: string): HistoryEntry[] {
  return ctx.store.history.bySession(id);
}

/** Where a commit stands in its session: its step (1-based) of how many, and the calls before and after it. */
export function sessionNeighbours(ctx: HistoryContext, entry: HistoryEntry): { step: number | null; calls: number; previous: HistoryEntry | null; next: HistoryEntry | null } {
  const calls = entry.session ? ctx.store.history.bySession(entry.session) : [];
  const i = calls.findIndex((e) => e.commit === entry.commit);
  return {
    step: i === -1 ? null : i + 1,
    calls: calls.length,
    previous: i > 0 ? calls[i - 1] : null,
    next: i !== -1 && i + 1 < calls.length ? calls[i + 1] : null,
  };
}

/**
 * Every memory file a session's commits touched, as it was before the session's first call vs after its
 * last one (calls of other sessions that landed in between on the same files are part of that
 * difference), in path order, at most `limit` files. From the index (the commit that last wrote each
 * path): no tree is read.
 */
export function sessionChanges(ctx: HistoryContext, entries: readonly HistoryEntry[], limit: number): { diffs: FileDiff[]; truncated: boolean } {
  if (entries.length === 0) return { diffs: [], truncated: false };
  const touched = new Set<string>();
  for (const e of entries) for (const c of e.changes) if (isMemoryFile(c.path)) touched.add(c.path);
  const paths = [...touched].sort();
  const history = ctx.store.history;
  const firstPosition = history.position(entries[0].commit)!;
  const lastPosition = history.position(entries[entries.length - 1].commit)!;
  const blobAt = (repoPath: string, position: number): string | null =>
    history.lastChange(repoPath, position)?.changes.find((c) => c.path === repoPath)?.newOid ?? null;
  const diffs: FileDiff[] = [];
  for (const repoPath of paths) {
    const oldOid = firstPosition > 0 ? blobAt(repoPath, firstPosition - 1) : null;
    const newOid = blobAt(repoPath, lastPosition);
    if (oldOid === newOid) continue;
    const status = !oldOid ? 'added' : !newOid ? 'deleted' : 'modified';
    diffs.push({ status, oldPath: oldOid ? `/${repoPath}` : null, newPath: newOid ? `/${repoPath}` : null, oldOid, newOid });
    if (diffs.length === limit) break;
  }
  return { diffs, truncated: diffs.length === limit && paths.length > limit };
}
