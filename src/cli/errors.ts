import type { ErrorCode } from '../store';
import { EXIT_CONFLICT, EXIT_ERROR, EXIT_USAGE } from './options';

/**
 * The CLI's one table from error code to exit code, for an error no command handled itself (main prints
 * `memgit: <message>` and exits with this). `null` is the documented default: EXIT_ERROR (1), "not found or
 * another error a user can act on". A malformed point is a usage error. (A rollback conflict is an
 * outcome, not an error: its exit code 2 comes from the outcome, rollback-output.ts.)
 */
export const EXIT_CODES: Record<ErrorCode, number | null> = {
  memgit_error: null,
  invalid_tool_use: null,
  store_closed: null,
  commit_not_found: null,
  ambiguous_ref: null,
  not_a_store: null,
  store_corrupt: null,
  lock_timeout: null,
  read_only_store: null,
  session_key_conflict: null,
  rollback_refused: null,
  stale_head: null,
  redaction_refused: null,
  replication_refused: null,
  replication_stopped: null,
  point_not_found: null,
  invalid_point: EXIT_USAGE,
  ambiguous_point: null,
  path_not_found: null,
  invalid_review_policy: EXIT_USAGE,
  review_not_found: null,
  review_refused: EXIT_CONFLICT,
  invalid_dream: EXIT_USAGE,
  dream_not_found: null,
  dream_running: EXIT_CONFLICT,
  invalid_filter: EXIT_USAGE,
  import_refused: null,
  import_failed: null,
  store_in_use: null,
  invalid_request: null,
  unknown_action: null,
  store_not_found: null,
  invalid_store_id: null,
  store_id_taken: null,
  queue_full: null,
  store_full: null,
  quota_exceeded: null,
  registry_closed: null,
  key_invalid: null,
  unsafe_root: null,
  store_fenced: null,
  store_syncing: null,
  not_replicated: null,
  http_tool_failed: null,
  client_request_failed: null,
};

/** The exit code for a coded error. */
export function exitCodeOf(code: ErrorCode): number {
  return EXIT_CODES[code] ?? EXIT_ERROR;
}
