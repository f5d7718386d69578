import { FileDiff, isMemoryFile } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import { AuditContext, BadRequest, CommitSummary, NotFound, summarise } from './context';
import { MAX_PAGE_DIFF_CHARS, yieldToLoop } from './budget';
import { diffView, diffViewsOf, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';

/** Sessions: the list, and one session's evolution call by call with the memory before vs after it. */

export const CALLS_PER_PAGE = 50;
const MAX_COMBINED_FILES = 100;

export interface SessionSummary {
  id: string;
  calls: number;
  first: number;
  last: number;
  files: number;
}

/** All sessions, most recently active first; recomputed only when history has grown. */
export function listSessions(ctx: AuditContext): SessionSummary[] {
  const history = ctx.store.history;
  const cached = ctx.sessionList as { size: number; list: SessionSummary[] } | undefined;
  if (cached && cached.size === history.size) return cached.list;
  const list = history.sessions().map((id) => {
    const entries = history.bySession(id);
    const files = new Set<string>();
    for (const e of entries) for (const c of e.changes) if (isMemoryFile(c.path)) files.add(c.path);
    return { id, calls: entries.length, first: entries[0].time, last: entries[entries.length - 1].time, files: files.size };
  });
  list.sort((a, b) => b.last - a.last || (a.id < b.id ? -1 : 1));
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
  // A page is bounded by the bytes of its diffs as well as by its number of calls: the combined diff and
  // the calls each get half of the page's budget, and the page ends after the call that spent it.
  const { combined: wholeCombined, truncated } = await combinedDiff(ctx, entries);
  const combinedBudget = pageDiffBudget(MAX_PAGE_DIFF_CHARS / 2);
  const combined = wholeCombined.map((d) => withinBudget(d, combinedBudget));
  const callsBudget = pageDiffBudget(MAX_PAGE_DIFF_CHARS / 2);
  const page: SessionCall[] = [];
  for (const [k, entry] of slice.entries()) {
    if (callsBudget.left <= 0) break;
    const diffs = (await diffViewsOf(ctx, entry)).map((d) => withinBudget(d, callsBudget));
    page.push({ ...summarise(ctx, entry), step: from + k, diffs });
    await yieldToLoop(); // other requests are answered between the calls of a long session
  }
  const shownTo = from - 1 + page.length; // steps shown: from .. shownTo
  return {
    id,
    calls: entries.length,
    first: summarise(ctx, entries[0]),
    last: summarise(ctx, entries[entries.length - 1]),
    before: entries[0].parent,
    page,
    from,
    nextFrom: shownTo < entries.length ? shownTo + 1 : null,
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
  const combined: FileDiffView[] = [];
  for (const d of diffs) {
    combined.push(await diffView(ctx, d));
    await yieldToLoop();
  }
  return { combined, truncated: diffs.length === MAX_COMBINED_FILES && paths.length > MAX_COMBINED_FILES };
}
