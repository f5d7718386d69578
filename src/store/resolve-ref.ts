import { OBJECT_ID_LIKE } from '../contract/ids';
import { AmbiguousRefError, CommitNotFoundError } from './errors';
import type { HistoryEntry, HistoryIndex } from './history-index';

/**
 * What a ref names: a commit (full or abbreviated id), a call (its tool_use id), or either. Links and
 * forms name the kind; a ref of unknown kind (the CLI's `show`, `revert`, `reset --to`) may also say it
 * with `commit:` or `call:`. When a ref still names two things — a call whose id spells another commit's
 * id, in a store written before such ids were refused, or a short prefix of two commits — nothing is
 * guessed: AmbiguousRefError lists the candidates.
 */
export type RefKind = 'commit' | 'call' | 'any';

export function resolveRef(history: HistoryIndex, ref: string, kind: RefKind = 'any'): HistoryEntry {
  if (kind === 'any' && !history.byToolUseId(ref)) {
    if (ref.startsWith('commit:')) return resolveRef(history, ref.slice('commit:'.length), 'commit');
    if (ref.startsWith('call:')) return resolveRef(history, ref.slice('call:'.length), 'call');
  }
  const found = new Map<string, { kind: 'commit' | 'call'; entry: HistoryEntry }>();
  if (kind !== 'commit') {
    const call = history.byToolUseId(ref);
    if (call) found.set(call.commit, { kind: 'call', entry: call });
  }
  if (kind !== 'call' && OBJECT_ID_LIKE.test(ref)) {
    const lower = ref.toLowerCase();
    const exact = history.get(lower);
    const commits = exact ? [exact] : history.all().filter((e) => e.commit.startsWith(lower));
    for (const entry of commits) if (!found.has(entry.commit)) found.set(entry.commit, { kind: 'commit', entry });
  }
  const matches = [...found.values()];
  if (matches.length === 1) return matches[0].entry;
  if (matches.length === 0) throw new CommitNotFoundError(ref);
  throw new AmbiguousRefError(
    ref,
    matches.map(({ kind: k, entry }) => ({ kind: k, commit: entry.commit, ...(k === 'call' && entry.toolUseId ? { toolUseId: entry.toolUseId } : {}) })),
  );
}
