import { isNewId } from '../../contract/ids';
import { listSessions as listSessionRecords, sessionChanges, sessionCommits, sessionTimeline } from '../../history/sessions';
import type { HistoryEntry } from '../../history/entry';
import type { TimelineRecord } from '../../store';
import type { CallRecord, SessionRecord } from '../../history/records';
import { listCalls } from '../../history/calls';
import { AuditContext, BadRequest, CommitSummary, NotFound, summarise } from './context';
import { MAX_PAGE_DIFF_CHARS, yieldToLoop } from './budget';
import { diffView, diffViewsOf, FileDiffView, pageDiffBudget, withinBudget } from './diff-view';
import { FlagBadge, flagsOf } from './flags';

/** Sessions: the list, and one session's evolution call by call with the memory before vs after it. */

export const CALLS_PER_PAGE = 50;
const MAX_COMBINED_FILES = 100;
const MAX_ALL_CALLS = 1000;

export type SessionSummary = SessionRecord;

/**
 * All sessions, most recently active first (the figures `memgit sessions` prints), sessions known only from
 * the call log (no commits: they only read, or failed) included; recomputed only when the history or the
 * call log has changed.
 */
export function listSessions(ctx: AuditContext): Promise<SessionSummary[]> {
  return listSessionRecords(ctx);
}

export interface SessionCall extends CommitSummary {
  step: number;
  diffs: FileDiffView[];
  /** What the API did to the agent's context right after this call (compaction summaries, clears), in order. */
  eventsAfter: SessionEvent[];
}

/** Longest part of a compaction summary shown on the page (the JSON twin has all that was stored). */
export const SUMMARY_PREVIEW_CHARS = 4000;
/** Most timeline events listed on one page of calls. */
export const MAX_EVENTS_PER_PAGE = 200;

/** A timeline event as the session page shows it. */
export type SessionEvent = Omit<TimelineRecord, 'v' | 'session'> & {
  /** Seconds since the epoch, like commit times (`time` stays in milliseconds). */
  at: number;
  /** The first SUMMARY_PREVIEW_CHARS of a compaction summary, and how many characters of it are not shown. */
  summaryPreview?: string | null;
  summaryHidden?: number;
  /** A compaction whose summary is null: the API could not write one. */
  failed?: boolean;
  /** What a clear removed, in words: `clear_tool_uses_20250919: 3 tool uses, 12000 input tokens`. */
  detail?: string;
};

export interface SessionPage {
  id: string;
  /** Commits of the session (0 for a `logOnly` session). */
  calls: number;
  /** The session made no commit: it is known only from the call log, and only `allCalls` has its calls. */
  logOnly: boolean;
  /** Successful views and failed calls of the session in the call log. */
  reads: number;
  failed: number;
  /** Its first and last commit (null for a `logOnly` session). */
  first: CommitSummary | null;
  last: CommitSummary | null;
  /** The commit just before the session's first call (the memory before the session). */
  before: string | null;
  page: SessionCall[];
  /** Step number (1-based) where this page starts, and cursors to neighbouring pages. */
  from: number;
  nextFrom: number | null;
  prevFrom: number | null;
  combined: FileDiffView[];
  combinedTruncated: boolean;
  /** Timeline events from before the session's first call (on the first page only). */
  eventsBefore: SessionEvent[];
  /** Timeline events of this page left out beyond MAX_EVENTS_PER_PAGE. */
  eventsOmitted: number;
  /** The whole session's timeline in numbers: compaction summaries (failed ones included) and clears. */
  compactions: number;
  clears: number;
  /** Every call of the session in order, reads and failures too (the call log), at most MAX_ALL_CALLS. */
  allCalls: CallRecord[];
  allCallsTruncated: boolean;
  /** Flags of the calls on this page, by commit id (flagged calls only). */
  flags: Record<string, FlagBadge>;
}

export async function sessionPage(ctx: AuditContext, id: string, from = 1): Promise<SessionPage> {
  const entries = sessionCommits(ctx, id);
  if (entries.length === 0) return logOnlySessionPage(ctx, id, from);
  if (!Number.isSafeInteger(from) || from < 1 || from > entries.length) throw new BadRequest(`from must be a step between 1 and ${entries.length}`);
  const slice = entries.slice(from - 1, from - 1 + CALLS_PER_PAGE);
  const records = await sessionTimeline(ctx, id);
  const timeline = placeEvents(entries, records, from - 1, slice.length);
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
    page.push({ ...summarise(ctx, entry), step: from + k, diffs, eventsAfter: timeline.after.get(from - 1 + k) ?? [] });
    await yieldToLoop(); // other requests are answered between the calls of a long session
  }
  const shownTo = from - 1 + page.length; // steps shown: from .. shownTo
  const allCalls = await listCalls(ctx.store, { session: id });
  return {
    id,
    calls: entries.length,
    logOnly: false,
    ...fromTheLogs(allCalls, records),
    first: summarise(ctx, entries[0]),
    last: summarise(ctx, entries[entries.length - 1]),
    before: entries[0].parent,
    page,
    from,
    nextFrom: shownTo < entries.length ? shownTo + 1 : null,
    prevFrom: from > 1 ? Math.max(1, from - CALLS_PER_PAGE) : null,
    combined,
    combinedTruncated: truncated,
    eventsBefore: timeline.before,
    eventsOmitted: timeline.omitted,
    flags: flagsOf(ctx, page.map((c) => c.commit)),
  };
}

/** What a session page shows from the call log and the timeline, whether or not the session committed. */
function fromTheLogs(allCalls: Awaited<ReturnType<typeof listCalls>>, records: TimelineRecord[]) {
  return {
    reads: allCalls.filter((c) => c.kind === 'read').length,
    failed: allCalls.filter((c) => c.kind === 'failed').length,
    compactions: records.filter((r) => r.kind === 'compaction').length,
    clears: records.filter((r) => r.kind === 'context_cleared').length,
    allCalls: allCalls.slice(0, MAX_ALL_CALLS),
    allCallsTruncated: allCalls.length > MAX_ALL_CALLS,
  };
}

/**
 * A session with no commit — it only read, or every call failed — known from the call log alone: its
 * calls in order, marked read / failed, and its timeline events; no diffs, nothing to roll back.
 */
async function logOnlySessionPage(ctx: AuditContext, id: string, from: number): Promise<SessionPage> {
  // Calls whose session id the store refused (they failed for it) name no session: see sessionStats.
  const allCalls = isNewId(id) ? await listCalls(ctx.store, { session: id }) : [];
  if (allCalls.length === 0) throw new NotFound(`no session ${JSON.stringify(id)} in this store`);
  if (from !== 1) throw new BadRequest('a session without commits has one page: from must be 1');
  const records = await sessionTimeline(ctx, id);
  const timeline = placeEvents([], records, 0, 0);
  return {
    id,
    calls: 0,
    logOnly: true,
    ...fromTheLogs(allCalls, records),
    first: null,
    last: null,
    before: null,
    page: [],
    from: 1,
    nextFrom: null,
    prevFrom: null,
    combined: [],
    combinedTruncated: false,
    eventsBefore: timeline.before,
    eventsOmitted: timeline.omitted,
    flags: {}, // no commits, so nothing a write flagged
  };
}

/**
 * Put the session's timeline events among its calls: each after the call whose commit it names
 * (`afterCommit`), or by time when that commit is not one of the session's (commit times have one-second
 * resolution, which is why events carry their place). Only the events of calls `start..start+count-1`
 * (0-based) are returned, those from before the first call with the first page.
 */
function placeEvents(
  entries: HistoryEntry[],
  records: TimelineRecord[],
  start: number,
  count: number,
): { before: SessionEvent[]; after: Map<number, SessionEvent[]>; omitted: number } {
  const positions = new Map(entries.map((entry, i) => [entry.commit, i]));
  const before: SessionEvent[] = [];
  const after = new Map<number, SessionEvent[]>();
  let shown = 0;
  let omitted = 0;
  for (const record of records) {
    const position = record.afterCommit === null ? -1 : positions.get(record.afterCommit) ?? positionByTime(entries, record.time);
    const onPage = position === -1 ? start === 0 : position >= start && position < start + count;
    if (!onPage) continue;
    if (shown === MAX_EVENTS_PER_PAGE) {
      omitted += 1;
      continue;
    }
    shown += 1;
    const event = toSessionEvent(record);
    if (position === -1) before.push(event);
    else after.set(position, [...(after.get(position) ?? []), event]);
  }
  return { before, after, omitted };
}

/** The last call committed no later than `timeMs` (-1: none). */
function positionByTime(entries: HistoryEntry[], timeMs: number): number {
  let position = -1;
  for (const [i, entry] of entries.entries()) if (entry.time * 1000 <= timeMs) position = i;
  return position;
}

function toSessionEvent(record: TimelineRecord): SessionEvent {
  const { v: _version, session: _session, ...fields } = record;
  const event: SessionEvent = { ...fields, at: Math.floor(record.time / 1000) };
  if (record.kind === 'compaction') {
    const summary = record.summary;
    event.summaryPreview = summary === null ? null : summary.slice(0, SUMMARY_PREVIEW_CHARS);
    event.summaryHidden = summary === null ? 0 : Math.max(0, record.summaryChars - SUMMARY_PREVIEW_CHARS);
    event.failed = summary === null;
  } else {
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
    const parts = [
      record.clearedToolUses !== undefined ? plural(record.clearedToolUses, 'tool use') : null,
      record.clearedThinkingTurns !== undefined ? plural(record.clearedThinkingTurns, 'thinking turn') : null,
      plural(record.clearedInputTokens, 'input token'),
    ];
    event.detail = `${record.edit}: ${parts.filter(Boolean).join(', ')}`;
  }
  return event;
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
  const { diffs, truncated } = sessionChanges(ctx, entries, MAX_COMBINED_FILES);
  const combined: FileDiffView[] = [];
  for (const d of diffs) {
    combined.push(await diffView(ctx, d));
    await yieldToLoop();
  }
  return { combined, truncated };
}
