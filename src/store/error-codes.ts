/**
 * Every code a memgit error may carry: one stable snake_case name per failure mode (docs/library.md#errors
 * lists them). Edges branch on the code, never on message text: each keeps one table from code to its own
 * answer (an HTTP status, a JSON-RPC error or tool text, an exit code), typed over this list so that a new
 * code cannot be added without each edge saying what it answers.
 */
export const ERROR_CODES = [
  // memgit's own base class, for an error no narrower code describes
  'memgit_error',
  // a store (src/store)
  'invalid_tool_use',
  'store_closed',
  'commit_not_found',
  'ambiguous_ref',
  'not_a_store',
  'store_corrupt',
  'lock_timeout',
  'read_only_store',
  'session_key_conflict',
  'rollback_refused',
  'stale_head',
  'redaction_refused',
  'replication_refused',
  'replication_stopped',
  'point_not_found',
  'invalid_point',
  'ambiguous_point',
  'path_not_found',
  // review before trust (src/store/review)
  'invalid_review_policy',
  'review_not_found',
  'review_refused',
  // dreams: consolidation on a branch (src/store/dream, src/dream)
  'invalid_dream',
  'dream_not_found',
  'dream_running',
  // a question to the read model (src/history)
  'invalid_filter',
  'import_refused',
  'import_failed',
  'store_in_use',
  // an operator's request (src/operator): rollback and redaction as the UI and the server take them
  'invalid_request',
  'unknown_action',
  // many stores under one root (src/tenancy)
  'store_not_found',
  'invalid_store_id',
  'store_id_taken',
  'queue_full',
  'store_full',
  'quota_exceeded',
  'registry_closed',
  'key_invalid',
  'unsafe_root',
  // a node of a fleet (src/tenancy/fleet.ts)
  'store_fenced',
  'store_syncing',
  'not_replicated',
  // the HTTP client of a memgit server (src/client)
  'http_tool_failed',
  'client_request_failed',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
