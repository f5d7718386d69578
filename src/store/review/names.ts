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

/**
 * Dreams (issue 28, src/store/dream): a dream writes on `refs/heads/dream/<id>`, forked from main when it
 * starts, as session `dream-<id>`. Once the dream completed, the branch is a pending review like a held
 * session's; its review id hashes `dream/<id>` (a `/` no session id may hold, so no session's review
 * shares it) with the fork.
 */
export const DREAM_BRANCH_PREFIX = 'refs/heads/dream/';
export const DREAM_ID_PATTERN = /^drm_[0-9a-f]{24}$/;

export function dreamRef(dream: string): string {
  return `${DREAM_BRANCH_PREFIX}${dream}`;
}

export function dreamSession(dream: string): string {
  return `dream-${dream}`;
}

export function dreamReviewId(dream: string, fork: string): string {
  return reviewId(`dream/${dream}`, fork);
}
