import { AmbiguousRefError, CommitNotFoundError } from './errors';
import type { HistoryEntry, HistoryIndex } from './history-index';
import { resolvePoint } from './points';
import { rewrittenCommit } from './redaction';
import type { RedactionPort } from './redaction';
import { RefKind, resolveRef } from './resolve-ref';

/**
 * Finding the commit a ref or a point in history names: by the rules of resolve-ref.ts and points.ts, in
 * the history index; and a commit id from before a redaction (a bookmark, a link) as the commit that
 * replaced it, from the redaction audit log.
 */

/** Where the audit log of redactions is read from. */
export type RewriteSource = Pick<RedactionPort, 'objects' | 'durableFs' | 'gitdir'>;

/** A commit id (full or at least 4 hex digits) or a tool_use id; `kind` restricts it to one of the two. */
export async function lookupRef(history: HistoryIndex, rewrites: RewriteSource, ref: string, kind: RefKind): Promise<HistoryEntry> {
  try {
    return resolveRef(history, ref, kind);
  } catch (error) {
    if (error instanceof AmbiguousRefError || !(error instanceof CommitNotFoundError) || kind === 'call') throw error;
    return (await rewrittenEntry(history, rewrites, ref)) ?? Promise.reject(error);
  }
}

/** Any point in history: tool_use id, commit or prefix, `commit:`/`call:`, HEAD, HEAD~N, ISO time. */
export async function lookupPoint(history: HistoryIndex, rewrites: RewriteSource, ref: string): Promise<HistoryEntry> {
  try {
    return resolvePoint(history, ref);
  } catch (error) {
    if (!(error instanceof CommitNotFoundError)) throw error;
    return (await rewrittenEntry(history, rewrites, ref)) ?? Promise.reject(error);
  }
}

/** A commit id from before a redaction: the commit that replaced it, if any. */
async function rewrittenEntry(history: HistoryIndex, rewrites: RewriteSource, ref: string): Promise<HistoryEntry | undefined> {
  const id = ref.replace(/^commit:/, '').toLowerCase();
  if (!/^[0-9a-f]{7,40}$/.test(id)) return undefined;
  const moved = await rewrittenCommit(rewrites, id);
  return moved ? history.get(moved.commit) : undefined;
}
