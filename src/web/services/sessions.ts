import { sessionStats, SessionStats } from '../../history/sessions';
import { FileDiff, isMemoryFile } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import { AuditContext, BadRequest, CommitSummary, NotFound, summarise } from './context';
import { diffView, diffViewsOf, FileDiffView } from './diff-view';

/** Sessions: the list, and one session's evolution call by call with the memory before vs after it. */

export const CALLS_PER_PAGE = 50;
const MAX_COMBINED_FILES = 100;

export interface SessionSummary extends SessionStats {
  files: number;
}

/** All sessions, most recently active first (the figures `memgit sessions` prints); recomputed only when history has grown. */
export function listSessions(ctx: AuditContext): SessionSummary[] {
  const history = ctx.store.history;
  const cached = ctx.sessionList as { size: number; list: SessionSummary[] } | undefined;
  if (cached && cached.size === history.size) return cached.list;
  const list = sessionStats(history).map((stats) => {
    const files = new Set<string>();
    for (const e of history.bySession(stats.id)) for (const c of e.changes) if (isMemoryFile(c.path)) files.add(c.path);
    return { ...stats, files: files.size };
  });
  ctx.sessionList = { size: history.size, list };
  return list;
}

export interface SessionCall extends CommitSummary {
  step: number;
  diffs: FileDiffView[];
}

export interface SessionPage {
  id: string;
  calls: number;
  first: CommitSummary;
  last: CommitSummary;
  /** The commit just before the session's first call (the memory before the session). */
  before: string | null;
  page: SessionCall[];
  /** Step number (1-based) where this page starts, and cursors to neighbouring pages. */
  from: number;
  nextFrom: number | null;
  prevFrom: number | null;
  combined: FileDiffView[];
  combinedTruncated: boolean;
}

export async function sessionPage(ctx: AuditContext, id: string, from = 1): Promise<SessionPage> {
  const entries = ctx.store.history.bySession(id);
  if (entries.length === 0) throw new NotFound(`no session ${JSON.stringify(id)} in this store`);
  if (!Number.isSafeInteger(from) || from < 1 || from > entries.length) throw new BadRequest(`from must be a step between 1 and ${entries.length}`);
  const slice = entries.slice(from - 1, from - 1 + CALLS_PER_PAGE);
  const page = await Promise.all(
    slice.map(async (entry, k) => ({ ...summarise(ctx, entry), step: from + k, diffs: await diffViewsOf(ctx, entry) })),
  );
  const { combined, truncated } = await combinedDiff(ctx, entries);
  return {
    id,
    calls: entries.length,
    first: summarise(ctx, entries[0]),
    last: summarise(ctx, entries[entries.length - 1]),
    before: entries[0].parent,
    page,
    from,
    nextFrom: from - 1 + CALLS_PER_PAGE < entries.length ? from + CALLS_PER_PAGE : null,
    prevFrom: from > 1 ? Math.max(1, from - CALLS_PER_PAGE) : null,
    combined,
    combinedTruncated: truncated,
  };
}

/**
 * Every file the session touched, as it was before the session's first call vs after its last one.
 * (Calls of other sessions that landed in between on the same files are part of that difference.)
 */
async function combinedDiff(ctx: AuditContext, entries: HistoryEntry[]): Promise<{ combined: FileDiffView[]; truncated: boolean }> {
  // Cached by the session's first and last commits: a session that gains a call gets a new key.
  const key = `session:${entries[0].commit}:${entries[entries.length - 1].commit}`;
  const cached = ctx.diffs.get(key) as { combined: FileDiffView[]; truncated: boolean } | undefined;
  if (cached) return cached;
  const result = await computeCombinedDiff(ctx, entries);
  ctx.diffs.set(key, result);
  return result;
}

async function computeCombinedDiff(ctx: AuditContext, entries: HistoryEntry[]): Promise<{ combined: FileDiffView[]; truncated: boolean }> {
  const touched = new Set<string>();
  for (const e of entries) for (const c of e.changes) if (isMemoryFile(c.path)) touched.add(c.path);
  const paths = [...touched].sort();
  const objects = ctx.store.objects;
  const beforeTree = entries[0].parent ? await ctx.store.commitTree(entries[0].parent) : null;
  const afterTree = await ctx.store.commitTree(entries[entries.length - 1].commit);
  const diffs: FileDiff[] = [];
  for (const repoPath of paths) {
    const before = beforeTree ? await objects.entryAt(beforeTree, repoPath) : null;
    const after = await objects.entryAt(afterTree, repoPath);
    const oldOid = before?.type === 'blob' ? before.oid : null;
    const newOid = after?.type === 'blob' ? after.oid : null;
    if (oldOid === newOid) continue;
    const status = !oldOid ? 'added' : !newOid ? 'deleted' : 'modified';
    diffs.push({ status, oldPath: oldOid ? `/${repoPath}` : null, newPath: newOid ? `/${repoPath}` : null, oldOid, newOid });
    if (diffs.length === MAX_COMBINED_FILES) break;
  }
  return { combined: await Promise.all(diffs.map((d) => diffView(ctx, d))), truncated: diffs.length === MAX_COMBINED_FILES && paths.length > MAX_COMBINED_FILES };
}
