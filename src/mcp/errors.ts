import { type ErrorCode, MemgitError } from '../store';

/**
 * MCP's one table from error code to what the client is told: a tool call's error result reads
 * `Error: <message> <after>`, a resource read's JSON-RPC error carries `<message>`. Every text names no
 * host path (the error itself may: it goes to the server's log, never to the model). `absent`: the store
 * does not exist (yet), so a listing of its resources is empty rather than an error.
 *
 * `null` is the documented default: the error goes to the log and the model is told that the store could
 * not be opened for the call (nothing was written), or, once the call had started, that memgit failed and
 * the call may or may not have been applied.
 */
export interface McpRefusal {
  message: string;
  absent?: boolean;
  /** What follows the message in a tool result (default "Nothing was written."). */
  after?: string;
}

type Fields = MemgitError & Record<string, unknown>;
const SHUTTING_DOWN = (): McpRefusal => ({ message: 'the memory store is shutting down.' });

export const MCP_ANSWERS: Record<ErrorCode, ((error: Fields) => McpRefusal) | null> = {
  memgit_error: null,
  invalid_tool_use: null,
  store_closed: SHUTTING_DOWN,
  commit_not_found: null,
  ambiguous_ref: null,
  not_a_store: () => ({ message: 'the folder of this memory store holds something that is not a memgit store.' }),
  store_corrupt: null,
  lock_timeout: () => ({ message: 'the memory store is busy (another writer held it too long).', after: 'Nothing was written; try again.' }),
  read_only_store: () => ({ message: 'the memory store is a read-only clone for auditing; it takes no writes.' }),
  session_key_conflict: () => ({ message: 'this session was begun with another key; only that key may add to it.' }),
  rollback_refused: null,
  stale_head: null,
  redaction_refused: null,
  replication_refused: null,
  replication_stopped: null,
  point_not_found: null,
  invalid_point: null,
  ambiguous_point: null,
  path_not_found: null,
  invalid_review_policy: null,
  review_not_found: null,
  review_refused: null,
  invalid_dream: null,
  dream_not_found: null,
  dream_running: null,
  invalid_filter: null,
  import_refused: null,
  import_failed: null,
  store_in_use: null,
  invalid_request: null,
  unknown_action: null,
  store_not_found: () => ({ message: 'the memory store does not exist.', absent: true }),
  invalid_store_id: (error) => ({ message: `the memory store cannot be created: ${error.detail}.`, absent: true }),
  store_id_taken: (error) => ({
    message: `the memory store cannot be created: store ${JSON.stringify(error.existing)} exists, and ids that differ only in case name one folder on some file systems.`,
    absent: true,
  }),
  queue_full: (error) => ({ message: `the memory store is busy (too many calls in flight); try again in ${String(error.retryAfterSeconds)} s.` }),
  store_full: (error) => ({
    message: `this memory store is full (${String(error.bytes)} bytes on disk; the server allows ${String(error.limit)}).`,
    after: 'Nothing was written; view still works.',
  }),
  quota_exceeded: (error) => ({
    message: `the memory store does not exist, and this key may not create it: it has created ${String(error.limit)} stores, the most one key may (--max-stores-per-key ${String(error.limit)}).`,
    absent: true,
  }),
  registry_closed: SHUTTING_DOWN,
  key_invalid: null,
  unsafe_root: null,
  store_fenced: () => ({ message: 'this node of the fleet lost the memory store to another node and is catching up.', after: 'Nothing was acknowledged; try again.' }),
  store_syncing: () => ({ message: 'this node of the fleet is bringing the memory store up to date from its git server.', after: 'Nothing was written; try again.' }),
  not_replicated: () => ({
    message: 'the call was written on this node but its git server did not take it, so it is not acknowledged.',
    after: 'Retry the same call (the same tool_use id); it is not applied twice.',
  }),
  http_tool_failed: null,
  client_request_failed: null,
};

/** What the client is told about `error`, or null for the default (logged, said generically). */
export function mcpRefusal(error: unknown): McpRefusal | null {
  if (!(error instanceof MemgitError)) return null;
  return MCP_ANSWERS[error.code]?.(error as Fields) ?? null;
}

/** A tool call's error text for a refusal. */
export function refusalText(refusal: McpRefusal): string {
  return `Error: ${refusal.message} ${refusal.after ?? 'Nothing was written.'}`;
}

/**
 * MCP's own refusals (the transport's and the server's, not MemgitErrors) by their stable code, each with
 * its JSON-RPC error code and, for the HTTP transport's answers, the HTTP status: one table. Every JSON-RPC
 * error memgit sends carries its code, or the MemgitError's, in `error.data.code`.
 */
export const MCP_REFUSALS = {
  unknown_tool: { rpc: -32602, status: null },
  invalid_cursor: { rpc: -32602, status: null },
  resource_not_found: { rpc: -32002, status: null },
  bad_request: { rpc: -32000, status: 400 },
  invalid_jsonrpc: { rpc: -32600, status: 400 },
  forbidden: { rpc: -32000, status: 403 },
  not_found: { rpc: -32000, status: 404 },
  not_acceptable: { rpc: -32000, status: 406 },
  stream_conflict: { rpc: -32000, status: 409 },
  unsupported_media_type: { rpc: -32000, status: 415 },
  session_not_found: { rpc: -32001, status: 404 },
  session_required: { rpc: -32000, status: 400 },
  invalid_json: { rpc: -32700, status: 400 },
  body_timeout: { rpc: -32000, status: 408 },
  body_too_large: { rpc: -32000, status: 413 },
  too_many_sessions_per_key: { rpc: -32000, status: 429 },
  internal_error: { rpc: -32603, status: 500 },
  too_many_sessions: { rpc: -32000, status: 503 },
  shutting_down: { rpc: -32000, status: 503 },
} as const satisfies Record<string, { rpc: number; status: number | null }>;

export type McpRefusalCode = keyof typeof MCP_REFUSALS;
/** The refusals the HTTP transport answers itself, with a status. */
export type McpHttpRefusalCode = { [C in McpRefusalCode]: (typeof MCP_REFUSALS)[C]['status'] extends number ? C : never }[McpRefusalCode];

/**
 * The code of a refusal the MCP SDK's transport answers itself (a wrong Accept header, a missing session,
 * a JSON-RPC message that is not one, ...), from its HTTP status and JSON-RPC code: MCP_REFUSALS' code of
 * that status (and JSON-RPC code, where one status has several), so that these errors carry one too.
 */
export function transportRefusalCode(status: number, rpc: number): McpHttpRefusalCode {
  const codes = Object.keys(MCP_REFUSALS) as McpRefusalCode[];
  const exact = codes.find((code) => MCP_REFUSALS[code].status === status && MCP_REFUSALS[code].rpc === rpc);
  const byStatus = codes.find((code) => MCP_REFUSALS[code].status === status);
  return (exact ?? byStatus ?? (status >= 500 ? 'internal_error' : 'bad_request')) as McpHttpRefusalCode;
}
