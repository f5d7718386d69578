import type { CallEntry, MemoryStore, ReviewSummary } from '../store';
import type { HistoryEntry } from '../store/history-index';
import { callRecord, CallRecord, CallReview } from './records';

/**
 * Every call of a store in order — reads, failures and writes — as call records: the call log, plus any
 * write whose log line is missing (a crash between its commit and the append, or a log compacted or turned
 * off): history is the source of truth for writes. `session` and `path` (a virtual path: the calls that
 * named it or a path below it) narrow the list (`memgit log --all-calls`, the session page).
 */
export async function listCalls(store: MemoryStore, filter: { session?: string; path?: string } = {}): Promise<CallRecord[]> {
  await store.refreshHead();
  const logged = (await store.callLog.read()).filter((e) => filter.session === undefined || e.session === filter.session);
  const loggedWrites = new Set(logged.filter((e) => e.kind === 'write').map((e) => e.commit));
  const history = filter.session !== undefined ? store.history.bySession(filter.session) : store.history.all();
  // A held call that was approved has its logged line (its review-branch commit) and a commit on main: one call.
  const heldWrites = new Set(logged.filter((e) => e.kind === 'write' && e.review !== undefined).map((e) => `${e.review}\n${e.id}`));
  const missing = history
    .filter((h) => h.toolUseId !== undefined && !loggedWrites.has(h.commit) && !(h.review !== undefined && heldWrites.has(`${h.review}\n${h.toolUseId}`)))
    .map(writeFromHistory);
  const merged = [...logged, ...missing].map((entry, order) => ({ entry, order }));
  // Stable by time: log lines keep their append order, writes from history slot in by commit time.
  merged.sort((a, b) => a.entry.time - b.entry.time || a.order - b.order);
  const reviews = merged.some(({ entry }) => entry.review !== undefined) ? new Map((await store.reviews()).map((r) => [r.id, r])) : new Map<string, ReviewSummary>();
  const records = merged.map(({ entry }) => callRecord(entry, reviewOf(entry, reviews)));
  if (filter.path === undefined) return records;
  // The paths a call named, as the agent wrote them: those at or below the virtual path.
  const prefix = filter.path.replace(/\/+$/, '');
  return records.filter((c) => c.paths.some((p) => p === prefix || p.startsWith(`${prefix}/`)));
}

/** The call of a tool_use id: its logged calls (a retried id has several), newest last. */
export async function callsOf(store: MemoryStore, id: string): Promise<CallRecord[]> {
  return (await listCalls(store)).filter((c) => c.id === id);
}

/** Where a held call stands: held while its review is pending, then approved (with its commit on main) or rejected. */
function reviewOf(entry: CallEntry, reviews: Map<string, ReviewSummary>): CallReview | null {
  if (entry.review === undefined) return null;
  const review = reviews.get(entry.review);
  if (!review || review.state === 'pending') return { id: entry.review, state: 'held', approvedAs: null };
  const call = review.calls.find((c) => c.commit === entry.commit || (entry.commit === null && c.toolUseId === entry.id));
  const approvedAs = review.state === 'approved' ? (call?.approvedAs ?? null) : null;
  return { id: entry.review, state: approvedAs ? 'approved' : 'rejected', approvedAs };
}

function writeFromHistory(entry: HistoryEntry): CallEntry {
  return {
    id: entry.toolUseId!,
    session: entry.session ?? '',
    // Commit times have whole seconds; the end of that second keeps the write after the reads before it.
    time: entry.time * 1000 + 999,
    command: entry.command ?? null,
    paths: [entry.path, entry.newPath].filter((p): p is string => p !== undefined),
    kind: 'write',
    error: null,
    commit: entry.commit,
    readAt: entry.parent,
    // A commit on main approved from review (the call's log line is gone): it was held, and approved.
    ...(entry.review !== undefined ? { review: entry.review } : {}),
  };
}
