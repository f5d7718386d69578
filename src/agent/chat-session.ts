import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaContextManagementConfig,
  BetaMessage,
  BetaMessageParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ExecutionReport, MemoryStore } from '../store/memory-store';
import { logField } from './terminal';

/** The model `memgit chat` uses unless --model or MEMGIT_MODEL says otherwise. */
export const DEFAULT_MODEL = 'claude-sonnet-5-5';
export const DEFAULT_MAX_TOKENS = 4096;
export const CONTEXT_MANAGEMENT_BETA = 'context-management-2025-06-27';

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

export interface ChatSessionOptions {
  client: Anthropic;
  store: MemoryStore;
  session: string;
  model: string;
  maxTokens?: number;
  system?: string;
  contextEditing?: boolean;
  /** Stream each reply (default true); false waits for whole messages. */
  stream?: boolean;
  /** Receives the assistant's text as it arrives. */
  onText?: (text: string) => void;
  /** Receives each memory call once it has been executed. */
  onMemoryCall?: (call: MemoryCall) => void;
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
    const tool = store.memoryTool({ session }, (report, input) => this.options.onMemoryCall?.(describeCall(report, input)));
    const runner = client.beta.messages.toolRunner({
      model: this.options.model,
      max_tokens: this.options.maxTokens ?? DEFAULT_MAX_TOKENS,
      ...(this.options.system ? { system: this.options.system } : {}),
      messages: [...this.history, { role: 'user', content: prompt }],
      tools: [tool],
      // A message thread would request its own beta; memgit sends the whole history each turn so that
      // without --context-editing no beta is requested at all.
      thread: false,
      stream,
      ...(this.options.contextEditing
        ? { context_management: CONTEXT_EDITING, betas: [CONTEXT_MANAGEMENT_BETA] }
        : {}),
    });
    let last: BetaMessage | undefined;
    for await (const item of runner) {
      if ('finalMessage' in item) {
        item.on('text', (text) => this.emit(text));
        last = await item.finalMessage();
      } else {
        last = item;
        for (const block of item.content) if (block.type === 'text') this.emit(block.text);
      }
      this.endLine();
    }
    if (!last) throw new Error('the tool runner ended without a reply');
    this.history = [...runner.params.messages];
    if (!isSameReply(this.history.at(-1), last)) this.history.push({ role: 'assistant', content: last.content });
    return last;
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

/**
 * One short, terminal-safe line for a memory call: everything in it may come from the model (or from a
 * document that injected instructions), so control and format characters are escaped and the length is bounded.
 */
export function formatMemoryCall(call: MemoryCall): string {
  const target = call.newPath !== undefined ? `${call.path ?? '?'} to ${call.newPath}` : (call.path ?? '');
  const head = logField(`${call.command} ${target}`.trim());
  const outcome = call.ok ? 'ok' : `error: ${logField(call.error ?? '')}`;
  const commit = call.commit ? `, commit ${call.commit.slice(0, 12)}` : '';
  return `memory ${head}: ${outcome}${commit} (${logField(call.toolUseId, 64)})`;
}
