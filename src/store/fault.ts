import { InvalidToolUseError, SessionKeyError, LockTimeoutError, StoreClosedError } from './errors';

/**
 * What the model is told when the store itself fails (a full disk, an I/O error, ...): one short, fixed
 * text per kind of failure that names no path, so that a prompt never learns where the store lives. The
 * operator's log gets the whole error. A store failure only ever reaches the model for a call that was
 * NOT applied — a failure after the commit became durable is repaired and logged instead — so the text
 * can say that nothing was changed.
 */

export type FaultKind = 'disk-full' | 'io' | 'permission' | 'busy' | 'other';

const REASONS: Record<FaultKind, string> = {
  'disk-full': 'the disk is full',
  io: 'an I/O error occurred',
  permission: 'permission was denied',
  busy: 'another writer holds the store',
  other: 'an internal error occurred',
};

const CODES: Record<string, FaultKind> = {
  ENOSPC: 'disk-full',
  EDQUOT: 'disk-full',
  EFBIG: 'disk-full',
  EIO: 'io',
  EROFS: 'permission',
  EACCES: 'permission',
  EPERM: 'permission',
};

/** The kind of a store failure, from the first errno code found along the error's `cause` chain. */
export function classifyFault(error: unknown): FaultKind {
  for (let current: unknown = error, depth = 0; current && depth < 8; depth++) {
    if (current instanceof LockTimeoutError) return 'busy';
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CODES[code]) return CODES[code];
    current = (current as { cause?: unknown }).cause;
  }
  return 'other';
}

/** The tool_result text for a call that the store could not complete (and did not apply). */
export function faultText(kind: FaultKind): string {
  return `Error: The memory store could not complete this command (${REASONS[kind]}). Nothing was changed.`;
}

/** Errors that are the caller's mistake, not the store's: these are thrown, never turned into a result. */
export function isApiMisuse(error: unknown): boolean {
  return error instanceof StoreClosedError || error instanceof InvalidToolUseError || error instanceof SessionKeyError;
}

/** One line for the operator's log: the error's own message (with its paths) and its code. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (cause: ${describeError(error.cause)})` : '';
  return `${error.message}${code && !error.message.includes(code) ? ` [${code}]` : ''}${cause}`;
}
