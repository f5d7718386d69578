import type { Request, Response } from 'express';
import { type ErrorCode, MemgitError } from '../store';

/**
 * The server's own refusals — what it answers before or beside any store (no key, a body too large, over
 * the rate limit, ...) — by their stable code, each with its status and type, in one table. The codes of
 * MemgitErrors (src/store/error-codes.ts) answer by HTTP_ANSWERS below; a body carries either kind in
 * `error.code` (docs/openapi.json's ErrorCode).
 */
export const SERVER_REFUSALS = {
  bad_request: { status: 400, type: 'invalid_request_error' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  unauthorized: { status: 401, type: 'authentication_error' },
  forbidden: { status: 403, type: 'permission_error' },
  not_found: { status: 404, type: 'not_found_error' },
  body_timeout: { status: 408, type: 'timeout_error' },
  body_too_large: { status: 413, type: 'request_too_large' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  key_bodies_in_flight: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  server_bodies_full: { status: 503, type: 'overloaded_error' },
  shutting_down: { status: 503, type: 'overloaded_error' },
} as const satisfies Record<string, { status: number; type: string }>;

export type RefusalCode = keyof typeof SERVER_REFUSALS;

/** The code an HttpError made without one gets: the server's refusal of that status. */
function defaultCode(status: number): string {
  const found = (Object.keys(SERVER_REFUSALS) as RefusalCode[]).find((code) => SERVER_REFUSALS[code].status === status);
  return found ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

/** An error answer of the API: a status, a stable type and code, and a message meant for people; never a stack. */
export class HttpError extends Error {
  readonly code: string;
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
    code?: string,
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = code ?? defaultCode(status);
  }
}

/** One of the server's own refusals (SERVER_REFUSALS), with its message. */
export function refusal(code: RefusalCode, message: string, headers: Record<string, string> = {}): HttpError {
  const { status, type } = SERVER_REFUSALS[code];
  return new HttpError(status, type, message, headers, code);
}

/** No such store, or one this key may not see: the same answer, code store_not_found (as StoreNotFoundError). */
export const notFoundStore = (storeId: string) => new HttpError(404, 'not_found_error', `no store ${JSON.stringify(storeId)}`, {}, 'store_not_found');

/** How the API answers one code: a status, a type, and the message (default: the error's `detail`). */
export interface HttpAnswer {
  status: number;
  type: string;
  message?: (error: MemgitError) => string;
  headers?: (error: MemgitError) => Record<string, string>;
}

const SHUTTING_DOWN: HttpAnswer = { status: 503, type: 'overloaded_error', message: () => 'the server is shutting down', headers: () => ({ 'Retry-After': '1' }) };
const invalid: HttpAnswer = { status: 400, type: 'invalid_request_error' };
const notFound: HttpAnswer = { status: 404, type: 'not_found_error' };
const conflict: HttpAnswer = { status: 409, type: 'conflict_error' };

/**
 * The server's one table from error code to answer, for every route (`{"error": {"type", "message", "code"}}`).
 * `null` is the documented default: 500 `api_error`, "internal error; nothing about it is sent to
 * clients, see the server log" — the error itself goes to the log only (it may name host paths).
 */
export const HTTP_ANSWERS: Record<ErrorCode, HttpAnswer | null> = {
  memgit_error: null,
  invalid_tool_use: invalid,
  store_closed: SHUTTING_DOWN,
  commit_not_found: notFound,
  ambiguous_ref: invalid,
  not_a_store: { ...conflict, message: () => 'the folder of this store holds something that is not a memgit store; nothing was changed' },
  store_corrupt: null,
  lock_timeout: { status: 503, type: 'overloaded_error', message: () => 'the store is busy (another process holds its write lock)', headers: () => ({ 'Retry-After': '5' }) },
  read_only_store: { ...conflict, message: (error) => `${error.detail}; nothing was changed` },
  session_key_conflict: conflict,
  rollback_refused: invalid,
  stale_head: conflict,
  redaction_refused: invalid,
  replication_refused: null,
  replication_stopped: null,
  point_not_found: notFound,
  invalid_point: invalid,
  ambiguous_point: invalid,
  path_not_found: notFound,
  invalid_review_policy: invalid,
  review_not_found: notFound,
  review_refused: conflict,
  invalid_dream: invalid,
  dream_not_found: notFound,
  dream_running: conflict,
  invalid_filter: invalid,
  import_refused: null,
  import_failed: null,
  store_in_use: null,
  invalid_request: invalid,
  unknown_action: notFound,
  store_not_found: { ...notFound, message: (error) => `no store ${JSON.stringify((error as MemgitError & { storeId: string }).storeId)}` },
  invalid_store_id: invalid,
  store_id_taken: conflict,
  queue_full: { status: 503, type: 'overloaded_error', headers: (error) => ({ 'Retry-After': String((error as MemgitError & { retryAfterSeconds: number }).retryAfterSeconds) }) },
  store_full: { status: 507, type: 'quota_exceeded_error' },
  quota_exceeded: { status: 403, type: 'quota_exceeded_error' },
  registry_closed: SHUTTING_DOWN,
  key_invalid: null,
  unsafe_root: null,
  store_fenced: { status: 503, type: 'overloaded_error', headers: () => ({ 'Retry-After': '1' }) },
  store_syncing: { status: 503, type: 'overloaded_error', headers: () => ({ 'Retry-After': '1' }) },
  not_replicated: { status: 503, type: 'api_error', headers: () => ({ 'Retry-After': '1' }) },
  http_tool_failed: null,
  client_request_failed: null,
};

/** The answer to a coded error, or null (the default: 500, logged). */
export function httpErrorOf(error: unknown): HttpError | null {
  if (!(error instanceof MemgitError)) return null;
  const answer = HTTP_ANSWERS[error.code];
  if (!answer) return null;
  return new HttpError(answer.status, answer.type, answer.message ? answer.message(error) : error.detail, answer.headers?.(error), error.code);
}

/**
 * The error as JSON, or as a small page to a browser opening the audit UI (a request outside the API
 * that prefers text/html): a browser that cancels the Basic-auth prompt shows the body of the 401, which
 * should tell a person what to do rather than print JSON.
 */
export function sendError(res: Response, error: HttpError): void {
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status);
  if (wantsPage(res.req)) {
    // Plain on purpose: without a key the stylesheet would be refused too.
    res.setHeader('Content-Security-Policy', "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.type('html').send(errorPage(error));
    return;
  }
  res.json({ error: { type: error.type, message: error.message, code: error.code } });
}

function wantsPage(req: Request | undefined): boolean {
  if (!req || req.path === '/api' || req.path.startsWith('/api/') || req.path === '/healthz') return false;
  return req.accepts(['json', 'html']) === 'html';
}

const HEADINGS: Record<number, string> = {
  400: 'Bad request',
  401: 'A key is needed',
  403: 'Not allowed with this key',
  404: 'Not found',
  413: 'Too large',
  429: 'Too many requests',
  503: 'Busy',
};

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (ch) => ENTITIES[ch]);

function errorPage(error: HttpError): string {
  const heading = HEADINGS[error.status] ?? 'Error';
  const help =
    error.status === 401
      ? '<p>This memgit server opens its audit UI with a key: when the browser asks, enter a key made with <code>memgit keys create</code> ' +
        '(scope read or above) as the password; the user name is not used. <a href="">Try again</a>.</p>'
      : error.status === 404 || error.status === 403
        ? '<p><a href="/">The stores this key can read</a></p>'
        : '';
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n  <meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `  <title>${escapeHtml(heading)} · memgit</title>\n</head>\n<body>\n` +
    `  <main>\n    <h1>${escapeHtml(heading)}</h1>\n    <p>${escapeHtml(error.message)}</p>\n    ${help}\n  </main>\n</body>\n</html>\n`
  );
}
