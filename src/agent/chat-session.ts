import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaCompact20260112Edit,
  BetaContextManagementConfig,
  BetaMessage,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { isValidId } from '../contract/paths';
import { historyContext } from '../history/context';
import { sessionCommits } from '../history/sessions';
import type { ContextClearedEvent, EventAnchor, ExecutionReport, MemoryStore, NewTimelineEvent } from '../store';
import { type ContextEvent, formatContextEvent, formatMemoryCall, type MemoryCall } from '../terminal/calls';

// The lines a terminal shows for calls and context events are the terminal floor's (the CLI prints them too).
export { formatContextEvent, formatMemoryCall };
export type { ContextEvent, MemoryCall };

import { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, MIN_COMPACTION_TRIGGER } from './chat-defaults';
export { DEFAULT_MAX_TOKENS, DEFAULT_MODEL, MIN_COMPACTION_TRIGGER };
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';
export const COMPACTION_BETA = 'compact-2026-01-12';

/**
 * Context editing as the memory-tool documentation pairs it: once the prompt grows past the trigger, old
 * tool results are cleared (keeping the latest few), but never the memory tool's own calls — what the
 * model wrote to memory is exactly what it must be able to rely on after the clearing.
 */
export const CONTEXT_EDITING: BetaContextManagementConfig = {
  edits: [
    {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: 100_000 },
      keep: { type: 'tool_uses', value: 3 },
      clear_at_least: { type: 'input_tokens', value: 5_000 },
      exclude_tools: ['memory'],
    },
  ],
};

/** Server-side compaction (`compact_20260112`): the API's defaults apply to what is left out. */
export interface CompactionOptions {
  /** Compact once the prompt reaches this many input tokens (the API's default is 150,000; at least 50,000). */
  trigger?: number;
  /** Instructions for the summary, sent as the edit's `instructions`. */
  instructions?: string;
}

/**
 * The `compact_20260112` edit. Compaction replaces older context with a summary the API writes; the memory
 * files stay as they are, so what the agent knows afterwards is that summary plus its memory.
 */
export function compactionEdit(options: CompactionOptions = {}): BetaCompact20260112Edit {
  const edit: BetaCompact20260112Edit = { type: 'compact_20260112' };
  if (options.trigger !== undefined) edit.trigger = { type: 'input_tokens', value: options.trigger };
  if (options.instructions !== undefined) edit.instructions = options.instructions;
  return edit;
}

/**
 * The `context_management` parameter and betas for a choice of context editing and compaction, or null for
 * neither (then no beta is requested at all). The clearing edit is listed first, so that bulky old tool
 * results can go before anything is summarised.
 */
export function contextManagement(options: { contextEditing?: boolean; compaction?: boolean | CompactionOptions }): {
  context_management: BetaContextManagementConfig;
  betas: string[];
} | null {
  const edits: NonNullable<BetaContextManagementConfig['edits']> = [];
  const betas: string[] = [];
  if (options.contextEditing) {
    edits.push(...(CONTEXT_EDITING.edits ?? []));
    betas.push(CONTEXT_MANAGEMENT_BETA);
  }
  if (options.compaction) {
    edits.push(compactionEdit(options.compaction === true ? {} : options.compaction));
    betas.push(COMPACTION_BETA);
  }
  return edits.length ? { context_management: { edits }, betas } : null;
}

/** Most context events recorded for one reply. */
export const MAX_CONTEXT_EVENTS_PER_REPLY = 16;


export interface ChatSessionOptions {
  client: Anthropic;
  store: MemoryStore;
  session: string;
  model: string;
  maxTokens?: number;
  system?: string;
  contextEditing?: boolean;
  /** Server-side compaction (`true` for the API's defaults). */
  compaction?: boolean | CompactionOptions;
  /** Stream each reply (default true); false waits for whole messages. */
  stream?: boolean;
  /** Receives the assistant's text as it arrives. */
  onText?: (text: string) => void;
  /** Receives each memory call once it has been executed. */
  onMemoryCall?: (call: MemoryCall) => void;
  /** Receives each compaction summary and context clear once it is on the session's timeline. */
  onContextEvent?: (event: ContextEvent) => void;
}

/**
 * One conversation with Claude over a memgit store: every user turn runs the SDK's tool runner to the end,
 * with memgit's memory tool, and the conversation's history carries over to the next turn. The memory is
 * shared by every conversation that uses the same store; the session id only labels the commits.
 */
export class ChatSession {
  private history: BetaMessageParam[] = [];
  private readonly options: ChatSessionOptions;
  private lastTextEndedLine = true;
  /** The session's last commit and last memory call, so that timeline events fall in place among the calls. */
  private anchor: EventAnchor | null = null;

  constructor(options: ChatSessionOptions) {
    this.options = options;
  }

  /** The conversation so far, in Messages API form. */
  get messages(): readonly BetaMessageParam[] {
    return this.history;
  }

  /**
   * Send one user message and run the turn to the end (through every tool call). Resolves to the final
   * assistant message. On an API error the history stays as it was before the call, and every memory write
   * made during the turn stays committed.
   */
  async send(prompt: string): Promise<BetaMessage> {
    const { client, store, session } = this.options;
    const stream = this.options.stream ?? true;
    // A continued session (--session) already has calls: later events come after its last one.
    const earlier = sessionCommits(historyContext(store), session).at(-1);
    const anchor = (this.anchor ??= { afterCommit: earlier?.commit ?? null, afterToolUseId: earlier?.toolUseId ?? null });
    const tool = store.memoryTool({ session }, (report, input) => {
      const call = describeCall(report, input);
      if (call.commit) anchor.afterCommit = call.commit;
      if (isValidId(call.toolUseId)) anchor.afterToolUseId = call.toolUseId;
      this.options.onMemoryCall?.(call);
    });
    const management = contextManagement(this.options);
    const runner = client.beta.messages.toolRunner({
      model: this.options.model,
      max_tokens: this.options.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(this.options.system ? { system: this.options.system } : {}),
      messages: [...this.history, { role: 'user', content: prompt }],
      tools: [tool],
      // A message thread would request its own beta; memgit sends the whole history each turn so that
      // without --context-editing or --compaction no beta is requested at all.
      thread: false,
      stream,
      ...(management ?? {}),
    });
    let last: BetaMessage | undefined;
    for await (const item of runner) {
      // Before this reply's tool calls run (a stream starts them as their blocks arrive): whatever the API
      // did to the context for this request happened after the calls so far and before those.
      const before = { ...anchor };
      if ('finalMessage' in item) {
        item.on('text', (text) => this.emit(text));
        last = await item.finalMessage();
      } else {
        last = item;
        for (const block of item.content) if (block.type === 'text') this.emit(block.text);
      }
      this.endLine();
      await this.recordContextEvents(last, before);
    }
    if (!last) throw new Error('the tool runner ended without a reply');
    this.history = [...runner.params.messages];
    if (!isSameReply(this.history.at(-1), last)) this.history.push({ role: 'assistant', content: last.content });
    return last;
  }

  /**
   * Put on the session's timeline what the API reports having done to the context for one request: the
   * clears of context editing first (applied before the prompt reached the model), then each compaction
   * summary. The blocks themselves stay in the conversation exactly as received; the SDK sends them back.
   */
  private async recordContextEvents(message: BetaMessage, anchor: EventAnchor): Promise<void> {
    const { store, session } = this.options;
    const events: NewTimelineEvent[] = [];
    for (const edit of message.context_management?.applied_edits ?? []) {
      const cleared = clearedEvent(edit);
      if (cleared) events.push(cleared);
    }
    for (const block of message.content) {
      if (block.type !== 'compaction') continue;
      events.push({
        kind: 'compaction',
        summary: typeof block.content === 'string' ? block.content : null,
        encryptedContent: typeof block.encrypted_content === 'string' && block.encrypted_content.length > 0,
      });
    }
    // A reply holds one compaction block and one report per strategy; a flood is not the API, and the
    // timeline's size stays bounded by what a reply can plausibly carry.
    for (const event of events.slice(0, MAX_CONTEXT_EVENTS_PER_REPLY)) {
      // Dated by the store's clock (a replay such as the demo records the conversation's own times).
      const record = await store.recordEvent(session, { ...event, ...anchor });
      this.options.onContextEvent?.(record);
    }
  }

  private emit(text: string): void {
    if (!text) return;
    this.options.onText?.(text);
    this.lastTextEndedLine = text.endsWith('\n');
  }

  /** Each assistant message ends on its own line, so tool-call lines and the next prompt start cleanly. */
  private endLine(): void {
    if (!this.lastTextEndedLine) this.options.onText?.('\n');
    this.lastTextEndedLine = true;
  }
}

/** A reported clear as a timeline event; an entry this version does not understand is left out. */
function clearedEvent(edit: unknown): NewTimelineEvent | null {
  if (typeof edit !== 'object' || edit === null) return null;
  const fields = edit as Record<string, unknown>;
  const countOf = (value: unknown) => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined);
  const type = fields.type;
  const tokens = countOf(fields.cleared_input_tokens);
  if (typeof type !== 'string' || !/^clear_[a-z0-9_]{1,58}$/.test(type) || tokens === undefined) return null;
  const event: ContextClearedEvent = { kind: 'context_cleared', edit: type, clearedInputTokens: tokens };
  const toolUses = countOf(fields.cleared_tool_uses);
  const thinkingTurns = countOf(fields.cleared_thinking_turns);
  if (toolUses !== undefined) event.clearedToolUses = toolUses;
  if (thinkingTurns !== undefined) event.clearedThinkingTurns = thinkingTurns;
  return event;
}

function isSameReply(message: BetaMessageParam | undefined, reply: BetaMessage): boolean {
  return message?.role === 'assistant' && JSON.stringify(message.content) === JSON.stringify(reply.content);
}

function describeCall(report: ExecutionReport, input: unknown): MemoryCall {
  const fields = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const call: MemoryCall = {
    toolUseId: report.result.tool_use_id,
    command: report.outcome?.command ?? text(fields.command) ?? '?',
    path: report.outcome?.path ?? text(fields.path) ?? text(fields.old_path),
    newPath: report.outcome?.newPath ?? text(fields.new_path),
    ok: !report.result.is_error,
  };
  if (report.result.is_error) call.error = report.result.content;
  if (report.commit) call.commit = report.commit;
  return call;
}
