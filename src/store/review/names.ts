import { createHash } from 'node:crypto';

/**
 * The names of review refs. A held session's branch is `refs/heads/review/<session>`, the session
 * percent-encoded (every character but ASCII letters, digits, `_` and `-` becomes `%XX`, so `.` and `:` of
 * a session id never make a ref name git refuses). A decided review is archived on
 * `refs/memgit/reviews/<id>`; its id is `rv_` and the first 16 hex digits of sha256(session "\n" fork).
 */

export const REVIEW_BRANCH_PREFIX = 'refs/heads/review/';
export const REVIEW_ARCHIVE_PREFIX = 'refs/memgit/reviews/';
export const REVIEW_ID_PATTERN = /^rv_[0-9a-f]{16}$/;

export function encodeSession(session: string): string {
  return session.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

export function decodeSession(encoded: string): string {
  return encoded.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export function branchRef(session: string): string {
  return `${REVIEW_BRANCH_PREFIX}${encodeSession(session)}`;
}

export function archiveRef(id: string): string {
  return `${REVIEW_ARCHIVE_PREFIX}${id}`;
}

export function reviewId(session: string, fork: string): string {
  return `rv_${createHash('sha256').update(`${session}\n${fork}`).digest('hex').slice(0, 16)}`;
}
