import { isValidId } from './paths';

/**
 * Which ids a new call or session may take. Ids are written in commit messages and name calls in links,
 * the CLI and the API, next to commit ids; an id that could be read as a commit id (4-40 hex digits: a
 * full or abbreviated object id) would let one call stand in for another call's commit, and an id of
 * only dots is normalised away by browsers and shells. Older stores may still hold such ids; lookups
 * then refuse to guess (see src/store/resolve-ref.ts).
 */

/** What git accepts as a full or abbreviated object id. */
export const OBJECT_ID_LIKE = /^[0-9a-fA-F]{4,40}$/;

/** Prefixes that name an id's kind in a lookup (`commit:<sha>`, `call:<tool_use id>`). */
export const KIND_PREFIXES = ['commit:', 'call:'] as const;

/** Why `id` cannot name a new call or session, or null when it can. */
export function newIdProblem(id: unknown): string | null {
  if (!isValidId(id)) return 'use 1-128 of A-Z a-z 0-9 _ . : -';
  if (/^\.+$/.test(id)) return 'an id of only dots is not allowed';
  if (OBJECT_ID_LIKE.test(id)) return 'it could be read as a commit id (4-40 hex digits); add a prefix such as toolu_';
  if (KIND_PREFIXES.some((p) => id.startsWith(p))) return `it starts with ${id.slice(0, id.indexOf(':') + 1)}, which names a kind of id in lookups`;
  return null;
}

export function isNewId(id: unknown): id is string {
  return newIdProblem(id) === null;
}
