import { MemgitError, type ErrorCode } from '../store';

/** A request an operator sent (a form, a JSON body) that is malformed: a missing or overlong field, a bad kind. */
export class InvalidRequestError extends MemgitError {
  static override readonly code: ErrorCode = 'invalid_request';
}

/** A request for an action that does not exist (`/rollback/explode`). */
export class UnknownActionError extends MemgitError {
  static override readonly code: ErrorCode = 'unknown_action';
}
