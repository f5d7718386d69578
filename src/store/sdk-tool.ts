import type { BetaMemoryTool20250818 } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { CommandOutcome } from '../contract/types';
import { InvalidToolUseError } from './errors';
import type { ExecutionReport, ToolResult } from './types';

/**
 * The store in the SDK's terms: the tool_use block a call arrives as, the tool_result it answers with,
 * and the runnable `memory_20250818` tool for the SDK's tool runner (`store.memoryTool()`; memgit server's
 * client uses the same shape over HTTP).
 */

/** Sees every call's report and input before the result goes back to the runner (for logging). */
export type MemoryToolCallHook = (report: ExecutionReport, input: unknown) => void;

/**
 * Options of `store.memoryTool(context, options)`: `onCall`, plus any property of the API's memory tool
 * definition (`cache_control`, `defer_loading`, `allowed_callers`, …), sent with the tool as the SDK's
 * own `betaMemoryTool(handlers, extraProps)` sends them.
 */
export type MemoryToolOptions = Omit<BetaMemoryTool20250818, 'type' | 'name'> & { onCall?: MemoryToolCallHook };

/**
 * The SDK's ToolError class, the only error its tool runner turns into a verbatim `is_error` result (it
 * tests `instanceof`). The SDK ships one copy per module system, so the class must be the one the caller's
 * runner loaded: the CommonJS entry passes the CommonJS copy, the ES module entry (index.mts) the ESM copy.
 */
export type ToolErrorClass = new (content: string) => Error;

/** A runnable `memory_20250818` tool for the SDK's tool runner. */
export type RunnableMemoryTool = Omit<BetaMemoryTool20250818, 'type' | 'name'> & {
  type: 'memory_20250818';
  name: 'memory';
  parse: (input: unknown) => Record<string, unknown>;
  run: (input: unknown, runContext?: { toolUse?: { id?: string } }) => Promise<string>;
};

const TOOL_DEFINITION_KEYS = new Set(['type', 'name', 'parse', 'run', 'onCall']);

/** The tool_use block the runner's call becomes (its id from the runner's context, when it gives one). */
export type RunnerToolUse = { type: 'tool_use'; id: unknown; name: 'memory'; input: unknown };

/**
 * The runnable tool around `answer` (one call to its tool_result: a store's execute, or memgit server over
 * HTTP): an error result is thrown as `toolError`, so the runner sends its text verbatim with is_error.
 * `extra` are API properties of the tool definition (cache_control, …), sent as given.
 */
export function runnableMemoryTool(
  answer: (toolUse: RunnerToolUse) => Promise<{ is_error?: boolean; content: string }>,
  extra: Record<string, unknown>,
  toolError: ToolErrorClass,
): RunnableMemoryTool {
  return {
    ...extra,
    type: 'memory_20250818',
    name: 'memory',
    parse: (input: unknown) => input as Record<string, unknown>,
    run: async (input: unknown, runContext?: { toolUse?: { id?: string } }): Promise<string> => {
      const result = await answer({ type: 'tool_use', id: runContext?.toolUse?.id, name: 'memory', input });
      if (result.is_error) throw new toolError(result.content);
      return result.content;
    },
  };
}

/** `store.memoryTool(context, options)`: the runnable tool of a store's execute, with its onCall hook. */
export function createMemoryTool(
  execute: (toolUse: RunnerToolUse) => Promise<ExecutionReport>,
  options: MemoryToolOptions | MemoryToolCallHook | undefined,
  toolError: ToolErrorClass,
): RunnableMemoryTool {
  const normalised: MemoryToolOptions = typeof options === 'function' ? { onCall: options } : (options ?? {});
  if (typeof normalised !== 'object' || Array.isArray(normalised)) {
    throw new TypeError(`memoryTool options must be an object or an onCall function, got ${JSON.stringify(normalised)}`);
  }
  const { onCall } = normalised;
  if (onCall !== undefined && typeof onCall !== 'function') {
    throw new TypeError(`memoryTool's onCall must be a function, got ${JSON.stringify(onCall)}`);
  }
  // The API properties pass through; the tool's identity and behaviour are memgit's, whatever is passed.
  const extra = Object.fromEntries(Object.entries(normalised).filter(([key]) => !TOOL_DEFINITION_KEYS.has(key)));
  return runnableMemoryTool(
    async (toolUse) => {
      const report = await execute(toolUse);
      onCall?.(report, toolUse.input);
      return report.result;
    },
    extra,
    toolError,
  );
}

/** The tool_use block's id and input, or InvalidToolUseError (exported for edges that check before a store is touched). */
export function asMemoryToolUse(value: unknown): { id: unknown; input: unknown } {
  if (!isRecord(value)) throw new InvalidToolUseError('expected a tool_use block (an object)');
  if (value.type !== 'tool_use') throw new InvalidToolUseError(`expected type "tool_use", got ${JSON.stringify(value.type)}`);
  if (value.name !== 'memory') throw new InvalidToolUseError(`expected the memory tool (name "memory"), got ${JSON.stringify(value.name)}`);
  return { id: value.id, input: value.input };
}

/** The tool_result block of a command's outcome. */
export function toolResult(id: string, outcome: CommandOutcome): ToolResult {
  const result: ToolResult = { type: 'tool_result', tool_use_id: id, content: outcome.text };
  if (outcome.isError) result.is_error = true;
  return result;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
