import { ERROR_CODES, type ErrorCode, MemgitError } from '../store';

/**
 * The audit UI's one table from error code to HTTP status, for its pages and their JSON twins alike
 * (`{"error": message, "status": n}`). `null` is the documented default: 500, "Something went wrong while
 * reading the store.", the error itself only in the log (internal failures name host paths).
 */
export const WEB_STATUS: Record<ErrorCode, number | null> = {
  memgit_error: null,
  invalid_tool_use: null,
  store_closed: null,
  commit_not_found: 404,
  ambiguous_ref: 400,
  not_a_store: null,
  store_corrupt: null,
  lock_timeout: null,
  // A write to a store memgit may not write is a conflict with the store's state, said as such.
  read_only_store: 409,
  session_key_conflict: null,
  rollback_refused: 400,
  stale_head: 409,
  redaction_refused: 400,
  replication_refused: null,
  replication_stopped: null,
  point_not_found: 404,
  invalid_point: 400,
  ambiguous_point: 400,
  path_not_found: 404,
  invalid_review_policy: 400,
  review_not_found: 404,
  review_refused: 409,
  invalid_dream: 400,
  dream_not_found: 404,
  dream_running: 409,
  invalid_filter: 400,
  import_refused: null,
  import_failed: null,
  store_in_use: null,
  invalid_request: 400,
  unknown_action: 404,
  store_not_found: null,
  invalid_store_id: null,
  store_id_taken: null,
  queue_full: null,
  store_full: null,
  quota_exceeded: null,
  registry_closed: null,
  key_invalid: null,
  unsafe_root: null,
  store_fenced: 503,
  store_syncing: 503,
  not_replicated: 503,
  http_tool_failed: null,
  client_request_failed: null,
};

/** The status, message and code a coded error answers with, or null for the default (500, logged). */
export function webAnswer(error: unknown): { status: number; message: string; code: ErrorCode } | null {
  if (!(error instanceof MemgitError)) return null;
  const status = WEB_STATUS[error.code];
  return status === null ? null : { status, message: error.detail, code: error.code };
}

/**
 * The UI's own refusals (a bad parameter, nothing here, a wrong operator token, ...) by their stable code
 * and status, in one table: a JSON answer carries either this code or a MemgitError's in `code`
 * (`{"error": message, "status": n, "code": "..."}`).
 */
export const WEB_REFUSALS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  rate_limited: 429,
  internal_error: 500,
} as const satisfies Record<string, number>;

export type WebRefusalCode = keyof typeof WEB_REFUSALS;

/** The code of one of the UI's own refusals by its status (other statuses: bad_request, or internal_error from 500 up). */
export function webRefusalCode(status: number): WebRefusalCode {
  const found = (Object.keys(WEB_REFUSALS) as WebRefusalCode[]).find((code) => WEB_REFUSALS[code] === status);
  return found ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

export { ERROR_CODES };
