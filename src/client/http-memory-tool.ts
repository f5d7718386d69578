import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { type ErrorCode, MemgitError, runnableMemoryTool, type RunnableMemoryTool, type ToolErrorClass, type ToolResult } from '../store';

/**
 * The memory tool of a remote store, over `memgit server`'s HTTP API: the same runnable tool as
 * `store.memoryTool()`, so `client.beta.messages.toolRunner({ tools: [createHttpMemoryTool(...)] })`
 * works unchanged. Error results throw the SDK's ToolError (the copy of the caller's module system, as
 * store.memoryTool() does), so the model receives the exact text.
 *
 * Calls are retried (same tool_use id, so the server answers a retry of an applied call with the same
 * result and no second commit) on connection errors and on 503/429, honouring Retry-After.
 */

export interface HttpMemoryToolOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** A key from `memgit keys create` with scope write (or operator). */
  key: string;
  /** The store id, e.g. acme-1. */
  store: string;
  /** The session id recorded on every commit. */
  session: string;
  /** Attempts after the first on connection errors, 503 and 429 (default 4). */
  retries?: number;
  /** Longest wait before a retry, in ms (default 5,000). */
  maxRetryDelayMs?: number;
  /** fetch to use (default: the global fetch of Node 20). */
  fetch?: typeof fetch;
}

/** The server refused the request itself (bad key, unknown store, bad request) or could not be reached. */
export class HttpMemoryToolError extends MemgitError {
  static override readonly code: ErrorCode = 'http_tool_failed';

  constructor(
    message: string,
    readonly status: number | null,
    readonly type: string | null,
  ) {
    super(message);
  }
}

export interface HttpToolCallAnswer {
  tool_result: ToolResult;
  commit: string | null;
}

export function createHttpMemoryTool(options: HttpMemoryToolOptions): RunnableMemoryTool {
  return httpMemoryTool(options, ToolError);
}

/**
 * createHttpMemoryTool throwing `toolError`: the CommonJS entry passes the SDK's CommonJS ToolError, the
 * ES module entry (index.mts) its ESM copy, the class an ES module's runner checks (as store.memoryTool()).
 */
export function httpMemoryTool(options: HttpMemoryToolOptions, toolError: ToolErrorClass): RunnableMemoryTool {
  const call = httpToolCaller(options);
  return runnableMemoryTool(async (toolUse) => (await call(toolUse)).tool_result, {}, toolError);
}

/** One tool_use block to the server, answered with `{ tool_result, commit }` (for loops without the runner). */
export function httpToolCaller(options: HttpMemoryToolOptions): (toolUse: unknown) => Promise<HttpToolCallAnswer> {
  for (const name of ['url', 'key', 'store', 'session'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw new TypeError(`createHttpMemoryTool: ${name} must be a non-empty string`);
  }
  const endpoint = `${options.url.replace(/\/+$/, '')}/api/v1/stores/${encodeURIComponent(options.store)}/tool-calls`;
  const doFetch = options.fetch ?? fetch;
  const retries = options.retries ?? 4;
  const maxDelay = options.maxRetryDelayMs ?? 5000;
  // One session's calls are sent one after the other, in the order they were made: a runner starts a
  // turn's tool calls together, and over HTTP a later one could otherwise overtake an earlier one (a view
  // answered before the delete the model asked for first), which a local memory tool never does.
  let previous: Promise<unknown> = Promise.resolve();
  return (toolUse) => {
    const answer = previous.catch(() => undefined).then(() => send(toolUse));
    previous = answer;
    return answer;
  };

  async function send(toolUse: unknown): Promise<HttpToolCallAnswer> {
    const body = JSON.stringify({ tool_use: toolUse, session: options.session });
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(endpoint, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.key}`, 'content-type': 'application/json', accept: 'application/json' },
          body,
        });
      } catch (error) {
        if (attempt < retries) {
          await sleep(Math.min(maxDelay, 200 * 2 ** attempt));
          continue;
        }
        throw new HttpMemoryToolError(
          `memgit server at ${options.url} could not be reached (${(error as Error).message}); the call may or may not have been applied — retrying the same tool_use id is safe`,
          null,
          null,
        );
      }
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as HttpToolCallAnswer;
      if ((response.status === 503 || response.status === 429) && attempt < retries) {
        const after = Number(response.headers.get('retry-after'));
        await sleep(Math.min(maxDelay, Number.isFinite(after) && after > 0 ? after * 1000 : 200 * 2 ** attempt));
        continue;
      }
      let type: string | null = null;
      let message = text.slice(0, 500);
      try {
        const parsed = JSON.parse(text) as { error?: { type?: string; message?: string } };
        type = parsed.error?.type ?? null;
        message = parsed.error?.message ?? message;
      } catch {
        // not JSON (a proxy's error page): keep the start of the text
      }
      const applied = response.status >= 500 ? "the call may or may not have been applied; retrying the same tool_use id is safe" : "nothing was applied";
      throw new HttpMemoryToolError(`memgit server answered ${response.status}: ${message} (${applied})`, response.status, type);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
