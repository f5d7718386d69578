/**
 * One file's revisions through time, following renames back (as `git log --follow` does), from the
 * history index's commits-by-path: the store's own walker (src/store/history/revisions.ts), under the
 * name `memgit log --follow` and the read model use.
 */
export { revisionsOf as fileRevisions } from '../store/history/revisions';
export type { Revision } from '../store/history/revisions';
