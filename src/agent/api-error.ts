import Anthropic from '@anthropic-ai/sdk';
import { logField } from '../terminal/escape';

/**
 * One plain line for an error from the Messages API (or from reaching it), without a stack: what happened,
 * the API's own words, and what to do about it. `null` when the error did not come from the SDK.
 */
export function describeApiError(error: unknown, baseURL: string): string | null {
  if (error instanceof Anthropic.APIConnectionTimeoutError) {
    return `could not reach the Messages API at ${baseURL}: the request timed out; check your network and try again`;
  }
  if (error instanceof Anthropic.APIConnectionError) {
    return `could not reach the Messages API at ${baseURL}: ${connectionCause(error)}; check your network (and ANTHROPIC_BASE_URL)`;
  }
  if (!(error instanceof Anthropic.APIError)) {
    // Not an HTTP error but the SDK's own, e.g. a stream that ended before its reply was complete.
    return error instanceof Anthropic.AnthropicError ? `the reply from the Messages API failed: ${logField(error.message, 300)}` : null;
  }
  const said = logField(
    [error.type, error.apiMessage ?? error.message].filter(Boolean).join(': ') || `status ${error.status}`,
    300,
  );
  const requestId = error.requestID ? ` [request-id ${logField(error.requestID, 80)}]` : '';
  const what = `${error.status ?? ''} ${said}${requestId}`.trim();
  // An error event in the middle of a stream carries no HTTP status, only the error type.
  switch (error.status ?? STATUS_OF_TYPE[error.type ?? '']) {
    case 401:
      return `the Messages API refused the API key (${what}); check ANTHROPIC_API_KEY`;
    case 403:
      return `the API key may not use this (${what})`;
    case 404:
      return `the Messages API does not know this (${what}); check --model and ANTHROPIC_BASE_URL`;
    case 429:
      return `rate limited by the Messages API (${what}); wait a little and try again`;
    case 529:
      return `the Messages API is overloaded (${what}); try again in a moment`;
    default:
      return `the Messages API answered ${what}`;
  }
}

const STATUS_OF_TYPE: Record<string, number> = {
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  rate_limit_error: 429,
  overloaded_error: 529,
};

/** The innermost useful reason of a failed connection, e.g. `connect ECONNREFUSED 127.0.0.1:9`. */
function connectionCause(error: Error): string {
  let reason = error.message;
  let cause: unknown = error.cause;
  for (let depth = 0; depth < 5 && cause instanceof Error; depth += 1) {
    reason = cause.message || reason;
    cause = cause.cause;
  }
  return logField(reason, 200);
}
