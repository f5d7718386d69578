import { errorMessage } from '../contract/format';
import type { TimelineRecord } from '../store';
import { logField } from './escape';

/**
 * The one-line reports of a conversation's memory calls and context events, as `memgit chat` and
 * `memgit demo` print them: terminal-safe (escape.ts) and bounded, since everything in them may come from
 * the model or from a document that injected instructions.
 */

/** One memory tool call as `memgit chat` reports it. */
export interface MemoryCall {
  toolUseId: string;
  command: string;
  path?: string;
  newPath?: string;
  ok: boolean;
  /** The tool_result text when the call failed. */
  error?: string;
  /** The commit the call made (or, for a retried id, made the first time). */
  commit?: string;
}

/** Something the API did to the agent's context, as recorded on the session's timeline. */
export type ContextEvent = TimelineRecord;

/** One short, terminal-safe line for a timeline event (the summary itself may come from a hostile context). */
export function formatContextEvent(event: ContextEvent): string {
  if (event.kind === 'compaction') {
    if (event.summary === null) return 'context: compaction failed (no summary; the block is passed back as received)';
    return `context: compacted into a ${event.summaryChars}-character summary: ${logField(event.summary, 80)}`;
  }
  const parts = [
    event.clearedToolUses !== undefined ? `${event.clearedToolUses} tool use${event.clearedToolUses === 1 ? '' : 's'}` : null,
    event.clearedThinkingTurns !== undefined ? `${event.clearedThinkingTurns} thinking turn${event.clearedThinkingTurns === 1 ? '' : 's'}` : null,
    `${event.clearedInputTokens} input tokens`,
  ].filter(Boolean);
  return `context: ${event.edit} cleared ${parts.join(', ')}`;
}

/**
 * One short, terminal-safe line for a memory call: everything in it may come from the model (or from a
 * document that injected instructions), so control and format characters are escaped and the length is bounded.
 */
export function formatMemoryCall(call: MemoryCall): string {
  const target = call.newPath !== undefined ? `${call.path ?? '?'} to ${call.newPath}` : (call.path ?? '');
  const head = logField(`${call.command} ${target}`.trim());
  const outcome = call.ok ? 'ok' : `error: ${logField(errorMessage(call.error ?? ''))}`;
  const commit = call.commit ? `, commit ${call.commit.slice(0, 12)}` : '';
  return `memory ${head}: ${outcome}${commit} (${logField(call.toolUseId, 64)})`;
}
