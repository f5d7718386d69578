import { type ErrorCode, MemgitError } from '../store';
import type { components, paths } from './openapi-types';

/**
 * A typed client of `memgit server`'s HTTP API: the read API (the audit UI's JSON twins: commits, calls,
 * sessions, files, the tree, search, compare, redactions), memory tool calls and rollbacks. Its types are
 * generated from the server's OpenAPI document (docs/openapi.json, `npm run openapi`), the same document
 * every response of the server tests is validated against. Beside `createHttpMemoryTool` (the runnable
 * tool); this one reads history:
 *
 *     const memgit = createMemgitClient({ url: 'http://127.0.0.1:8080', key: process.env.MEMGIT_KEY! });
 *     const { rows } = await memgit.store('acme-1').commits({ session: 'sess_1' });
 *
 * A refusal throws MemgitClientError with the server's status, type and stable code (`serverCode`, e.g.
 * `commit_not_found`, `unauthorized`). Reads and tool calls are retried on connection errors, 429 and 503
 * (honouring Retry-After; a tool call keeps its tool_use id, so a retry never commits twice).
 */

/** The schemas of the API (docs/openapi.json's components), by name: `MemgitApi['CommitList']`, ... */
export type MemgitApi = components['schemas'];

type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } } ? NonNullable<Q> : never;

/** The Messages API tool_use block of the memory tool, as the model sent it (the SDK's ToolUseBlock fits). */
export interface ToolUseBlock {
  type: string;
  id: string;
  name: string;
  input: unknown;
}

export type CommitsQuery = QueryOf<'/api/v1/stores/{store}/commits'>;

export interface MemgitClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8080 */
  url: string;
  /** A key from `memgit keys create` (scope read for reads, write for tool calls, operator for rollbacks). */
  key: string;
  /** Attempts after the first on connection errors, 429 and 503 (default 4). */
  retries?: number;
  /** Longest wait before a retry, in ms (default 5,000). */
  maxRetryDelayMs?: number;
  /** fetch to use (default: the global fetch of Node 20). */
  fetch?: typeof fetch;
}

/** The server refused a request (`status`, `type`, its stable `serverCode`), or could not be reached (all null). */
export class MemgitClientError extends MemgitError {
  static override readonly code: ErrorCode = 'client_request_failed';

  constructor(
    message: string,
    /** The HTTP status, or null when the server could not be reached. */
    readonly status: number | null,
    /** The server's error type (`not_found_error`, ...), when it answered in its own error form. */
    readonly type: string | null,
    /** The server's stable code (a MemgitError code such as `commit_not_found`, or a refusal such as `unauthorized`). */
    readonly serverCode: string | null,
  ) {
    super(message);
  }
}

export interface MemgitClient {
  readonly url: string;
  /** GET /healthz */
  health(): Promise<MemgitApi['Health']>;
  /** The server's OpenAPI document (GET /api/v1/openapi.json). */
  openapi(): Promise<Record<string, unknown>>;
  /** The ids of the stores this key can see. */
  stores(): Promise<string[]>;
  /** One store's API. */
  store(id: string): MemgitStoreClient;
}

export interface MemgitStoreClient {
  readonly id: string;
  /** One memory tool call (a Messages API tool_use block) under a session: the tool_result and the commit. */
  toolCall(toolUse: ToolUseBlock, session: string): Promise<MemgitApi['ToolCallResponse']>;
  overview(): Promise<MemgitApi['Overview']>;
  /** Commits, newest first: filtered (session, path, command, since, until, text, ...) and paged (before/after). */
  commits(query?: CommitsQuery): Promise<MemgitApi['CommitList']>;
  /** One commit by commit id (full or abbreviated) or tool_use id. */
  commit(ref: string): Promise<MemgitApi['CommitPage']>;
  /** One call by its tool_use id. */
  call(toolUseId: string): Promise<MemgitApi['CommitPage']>;
  sessions(): Promise<MemgitApi['SessionRecord'][]>;
  session(id: string, options?: { from?: number }): Promise<MemgitApi['SessionPage']>;
  /** A memory file (a path below /memories, or the full /memories/... path), at HEAD or at a point. */
  file(path: string, options?: { at?: string; blame?: boolean }): Promise<MemgitApi['FilePage']>;
  tree(options?: { at?: string; dir?: string }): Promise<MemgitApi['TreePage']>;
  search(q: string, options?: { from?: number }): Promise<MemgitApi['SearchPage']>;
  compare(from: string, to?: string, options?: { path?: string }): Promise<MemgitApi['ComparePage']>;
  redactions(): Promise<MemgitApi['RedactionList']>;
  redaction(id: string, options?: { from?: number }): Promise<MemgitApi['RedactionPage']>;
  /**
   * A rollback as the operator key: the outcome (status committed, preview, conflict, unchanged or stopped);
   * a conflict is an outcome, not an error.
   */
  rollback(kind: 'revert' | 'restore' | 'session' | 'reset', request: MemgitApi['RollbackRequest']): Promise<MemgitApi['RollbackOutcome']>;
}

type Query = Record<string, string | number | boolean | undefined>;

export function createMemgitClient(options: MemgitClientOptions): MemgitClient {
  for (const name of ['url', 'key'] as const) {
    if (typeof options[name] !== 'string' || options[name] === '') throw new TypeError(`createMemgitClient: ${name} must be a non-empty string`);
  }
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));
  const retries = options.retries ?? 4;
  const maxDelay = options.maxRetryDelayMs ?? 5000;

  async function request<T>(method: 'GET' | 'POST', path: string, query: Query = {}, body?: unknown, answer: (status: number, parsed: unknown) => boolean = (s) => s >= 200 && s < 300): Promise<T> {
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
    const url = `${base}${path}${search.size > 0 ? `?${search}` : ''}`;
    const init: RequestInit = {
      method,
      headers: { authorization: `Bearer ${options.key}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    };
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await doFetch(url, init);
      } catch (error) {
        if (attempt < retries) {
          await sleep(Math.min(maxDelay, 200 * 2 ** attempt));
          continue;
        }
        throw new MemgitClientError(`memgit server at ${base} could not be reached (${(error as Error).message})`, null, null, null);
      }
      const text = await response.text();
      if ((response.status === 503 || response.status === 429) && attempt < retries) {
        const after = Number(response.headers.get('retry-after'));
        await sleep(Math.min(maxDelay, Number.isFinite(after) && after > 0 ? after * 1000 : 200 * 2 ** attempt));
        continue;
      }
      let parsed: unknown = undefined;
      try {
        parsed = JSON.parse(text);
      } catch {
        // not JSON (a proxy's error page): reported below
      }
      if (answer(response.status, parsed) && parsed !== undefined) return parsed as T;
      throw refusalOf(response.status, parsed, text, `${method} ${path}`);
    }
  }

  const storeClient = (id: string): MemgitStoreClient => {
    if (typeof id !== 'string' || id === '') throw new TypeError('createMemgitClient: a store id must be a non-empty string');
    const at = `/api/v1/stores/${encodeURIComponent(id)}`;
    const get = <T>(path: string, query?: Query) => request<T>('GET', `${at}${path}`, query);
    return {
      id,
      toolCall: (toolUse, session) => request('POST', `${at}/tool-calls`, {}, { tool_use: toolUse, session }),
      overview: () => get(''),
      commits: (query = {}) => get('/commits', query as Query),
      commit: (ref) => get(`/commits/${encodeURIComponent(ref)}`),
      call: (toolUseId) => get(`/calls/${encodeURIComponent(toolUseId)}`),
      sessions: async () => (await get<MemgitApi['SessionList']>('/sessions')).sessions,
      session: (sessionId, opts = {}) => get('/sessions', { id: sessionId, from: opts.from }),
      file: (path, opts = {}) => get(`/files/${memoryPath(path)}`, { at: opts.at, blame: opts.blame === false ? 0 : undefined }),
      tree: (opts = {}) => get('/tree', { at: opts.at, dir: opts.dir }),
      search: (q, opts = {}) => get('/search', { q, from: opts.from }),
      compare: (from, to, opts = {}) => get('/compare', { from, to, path: opts.path }),
      redactions: () => get('/redactions'),
      redaction: (redactionId, opts = {}) => get(`/redactions/${encodeURIComponent(redactionId)}`, { from: opts.from }),
      rollback: (kind, body) =>
        request('POST', `${at}/rollback/${encodeURIComponent(kind)}`, {}, body, (status, parsed) => (status >= 200 && status < 300) || (status === 409 && isOutcome(parsed))),
    };
  };

  return {
    url: base,
    health: () => request('GET', '/healthz'),
    openapi: () => request('GET', '/api/v1/openapi.json'),
    stores: async () => (await request<MemgitApi['StoreList']>('GET', '/api/v1/stores')).stores,
    store: storeClient,
  };
}

/** A path below /memories for the URL: each segment percent-encoded, `/memories/` taken off if given. */
function memoryPath(path: string): string {
  const rel = path.replace(/^\/?memories(\/|$)/, '').replace(/^\/+/, '');
  if (rel === '') throw new TypeError('createMemgitClient: file() needs the path of a file below /memories');
  return rel.split('/').map(encodeURIComponent).join('/');
}

function isOutcome(parsed: unknown): boolean {
  return typeof parsed === 'object' && parsed !== null && 'operation' in parsed && 'status' in parsed;
}

/** The error of a refusal, in either of the server's error forms (docs/openapi.json: ServerError, ReadError). */
function refusalOf(status: number, parsed: unknown, text: string, what: string): MemgitClientError {
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { error?: unknown; code?: unknown };
  let message = text.slice(0, 500);
  let type: string | null = null;
  let code: string | null = null;
  if (typeof body.error === 'object' && body.error !== null) {
    const error = body.error as { type?: unknown; message?: unknown; code?: unknown };
    if (typeof error.message === 'string') message = error.message;
    if (typeof error.type === 'string') type = error.type;
    if (typeof error.code === 'string') code = error.code;
  } else if (typeof body.error === 'string') {
    message = body.error;
    if (typeof body.code === 'string') code = body.code;
  }
  return new MemgitClientError(`memgit server answered ${status} to ${what}: ${message}`, status, type, code);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
