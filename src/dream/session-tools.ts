import { commitPatches } from '../history/commit';
import { historyContext, type HistoryContext } from '../history/context';
import { listCalls } from '../history/calls';
import { entryOf } from '../history/points';
import { listSessions, sessionTimeline } from '../history/sessions';
import type { MemoryStore } from '../store';

/**
 * The dream's two read-only tools over memgit's own records (src/history): `session_list` (the sessions the
 * dream was given, a page at a time) and `session_read` (one session's calls in order — writes with their
 * diffs, reads, failures — and its compaction summaries, a page at a time). Bounded: a page holds at most
 * SESSION_PAGE_CALLS calls, each diff at most DIFF_CHARS characters, a page at most PAGE_CHARS. Only the
 * dream's input sessions can be read.
 */

export const SESSION_LIST_PAGE = 50;
export const SESSION_PAGE_CALLS = 20;
export const DIFF_CHARS = 4000;
export const PAGE_CHARS = 24_000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters not shown)`;
}

function pageOf(value: unknown): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 100_000 ? value : 1;
}

export async function sessionListText(store: MemoryStore, sessions: readonly string[], page: unknown): Promise<string> {
  const ctx = historyContext(store);
  const records = new Map((await listSessions(ctx)).map((s) => [s.id, s]));
  const pages = Math.max(1, Math.ceil(sessions.length / SESSION_LIST_PAGE));
  const p = Math.min(pageOf(page), pages);
  const slice = sessions.slice((p - 1) * SESSION_LIST_PAGE, p * SESSION_LIST_PAGE);
  const lines = [`${sessions.length} session(s) to consolidate; page ${p} of ${pages}.`];
  for (const id of slice) {
    const s = records.get(id);
    lines.push(s
      ? `- ${id}: first ${s.first}, last ${s.last}; ${s.calls} write(s), ${s.reads ?? 0} read(s), ${s.failed ?? 0} failed; ${s.files} file(s) changed`
      : `- ${id}: no record left`);
  }
  if (p < pages) lines.push(`More: session_list with page ${p + 1}.`);
  return lines.join('\n');
}

export async function sessionReadText(store: MemoryStore, sessions: readonly string[], sessionId: unknown, page: unknown): Promise<string> {
  if (typeof sessionId !== 'string' || !sessions.includes(sessionId)) {
    return `Error: ${JSON.stringify(String(sessionId)).slice(0, 140)} is not one of this dream's sessions (see session_list)`;
  }
  const ctx: HistoryContext = historyContext(store);
  const calls = await listCalls(store, { session: sessionId });
  const events = await sessionTimeline(ctx, sessionId);
  const pages = Math.max(1, Math.ceil(calls.length / SESSION_PAGE_CALLS));
  const p = Math.min(pageOf(page), pages);
  const start = (p - 1) * SESSION_PAGE_CALLS;
  const slice = calls.slice(start, start + SESSION_PAGE_CALLS);
  const out: string[] = [`Session ${sessionId}: ${calls.length} call(s); page ${p} of ${pages} (calls ${calls.length ? start + 1 : 0}-${start + slice.length}).`];
  const summaries = (afterToolUseId: string | null) =>
    events
      .filter((e) => e.kind === 'compaction' && (e.afterToolUseId ?? null) === afterToolUseId)
      .map((e) => `[compaction summary${afterToolUseId ? ` after ${afterToolUseId}` : ''}] ${'summary' in e && typeof e.summary === 'string' ? clip(e.summary, DIFF_CHARS) : '(no summary text)'}`);
  if (p === 1) out.push(...summaries(null));
  let size = out.join('\n').length;
  for (const [i, call] of slice.entries()) {
    const head = `[${start + i + 1}] ${call.time} ${call.kind} ${call.command ?? 'memory'} ${call.paths.join(' -> ')} (${call.id})`;
    const body: string[] = [head];
    if (call.kind === 'failed') body.push(`  failed: ${clip(call.error ?? 'error', 500)}`);
    if (call.kind === 'write') {
      const entry = call.commit ? entryOf(ctx, call.commit) : undefined;
      if (call.review && call.review.state !== 'approved') body.push(`  held for review (${call.review.state}); not in memory`);
      else if (entry) body.push(clip((await commitPatches(ctx, entry)).join('\n'), DIFF_CHARS));
      else if (call.review?.approvedAs) {
        const approved = entryOf(ctx, call.review.approvedAs);
        if (approved) body.push(clip((await commitPatches(ctx, approved)).join('\n'), DIFF_CHARS));
      }
    }
    body.push(...summaries(call.id));
    const text = body.join('\n');
    if (size + text.length > PAGE_CHARS) {
      out.push(`… the rest of this page is over ${PAGE_CHARS} characters; calls ${start + i + 1}-${start + slice.length} not shown here.`);
      break;
    }
    size += text.length + 1;
    out.push(text);
  }
  if (p < pages) out.push(`More: session_read with session_id ${JSON.stringify(sessionId)} and page ${p + 1}.`);
  return out.join('\n');
}
