import type { HistoryIndex } from '../store/history-index';
import type { HistoryEntry } from '../store/history-index/entry';
import { HistoryContext, textOf } from './context';
import { advance, BlameState } from '../store/history-index/blame-step';
import { splitLines } from '../store/history-index/line-stats';
import { Revision, revisionsOf } from './revisions';

export { advance, BLAME_MAX_EDIT_LENGTH } from '../store/history-index/blame-step';
export type { BlameState } from '../store/history-index/blame-step';

/**
 * Blame: for each line of a file at a commit, the commit that wrote it. Computed by replaying the file's
 * revisions forward (diffing each against the previous), starting from the newest state already known:
 * the persisted per-file blame at the file's latest revision (src/store/history-index/blame-index.ts,
 * extended by every write), or a checkpoint the caller keeps. Blame at HEAD is therefore one lookup; an old revision may walk.
 */

const BLAME_CHECKPOINT_EVERY = 64;
const READ_BATCH = 32;

export interface BlameSource {
  /** A blob's text by oid (the caller may cache). */
  readText(oid: string): Promise<string>;
  /** Blame states after revisions, keyed by `${commit}\0${repoPath}` (a commit fixes its whole chain). */
  checkpoints?: { get(key: string): BlameState | undefined; set(key: string, state: BlameState): void };
}

export interface FileBlame {
  revisions: Revision[];
  state: BlameState;
}

const EMPTY: BlameState = { lines: [], origins: [] };

/** Blame of the file at `repoPath` as of history position `position` (empty if it does not exist then). */
export async function blameFile(history: HistoryIndex, repoPath: string, position: number, source: BlameSource): Promise<FileBlame> {
  const revisions = revisionsOf(history, repoPath, position);
  const last = revisions[revisions.length - 1];
  if (!last || !last.oid) return { revisions, state: EMPTY };
  return { revisions, state: await blameRevisions(history, revisions, source) };
}

/** Blame after the last of `revisions` (one chain, oldest first, as revisionsOf gives it). */
export async function blameRevisions(history: HistoryIndex, revisions: Revision[], source: BlameSource): Promise<BlameState> {
  const key = (r: Revision) => `${r.entry.commit}\0${r.repoPath}`;
  const lastIndex = revisions.length - 1;
  let start = -1;
  let state: BlameState = EMPTY;
  for (let k = lastIndex; k >= 0; k--) {
    const cached = source.checkpoints?.get(key(revisions[k]));
    if (cached) {
      start = k;
      state = cached;
      break;
    }
  }
  const persisted = await persistedStart(history, revisions, source);
  if (persisted && persisted.index > start) ({ index: start, state } = persisted);
  const texts = await readAll(source, revisions.slice(start + 1).map((r) => r.oid));
  let sliceStart = performance.now();
  for (let k = start + 1; k <= lastIndex; k++) {
    const revision = revisions[k];
    state = advance(state, splitLines(texts[k - start - 1]), revision.entry.commit);
    if (k === lastIndex || k % BLAME_CHECKPOINT_EVERY === 0) source.checkpoints?.set(key(revision), state);
    // A replay of a large file costs tens of milliseconds a revision: a server answers others in between.
    if (performance.now() - sliceStart >= 10) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  // Remember the blame of the file's latest revision, so the next look (any process) is one lookup.
  const last = revisions[lastIndex];
  if (last.oid && (!persisted || persisted.index < lastIndex) && history.lastChange(last.repoPath, history.size - 1)?.commit === last.entry.commit) {
    await history.blame.put({ path: last.repoPath, rev: last.entry.commit, oid: last.oid, origins: state.origins });
  }
  return state;
}

/** The persisted blame of this file, if it is one of these revisions: where the replay can start. */
async function persistedStart(history: HistoryIndex, revisions: Revision[], source: BlameSource): Promise<{ index: number; state: BlameState } | null> {
  const last = revisions[revisions.length - 1];
  const record = await history.blame.get(last.repoPath);
  if (!record) return null;
  const position = history.position(record.rev);
  if (position === undefined) return null;
  // Revisions are in history order: find the one the record was taken at.
  let lo = 0;
  let hi = revisions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (revisions[mid].position < position) lo = mid + 1;
    else hi = mid;
  }
  const at = revisions[lo];
  if (!at || at.position !== position || at.repoPath !== record.path || at.oid !== record.oid) return null;
  const lines = splitLines(await source.readText(record.oid));
  if (lines.length !== record.origins.length) return null;
  return { index: lo, state: { lines, origins: record.origins } };
}

/** Blob texts in order, read a batch at a time so the object reads overlap. */
async function readAll(source: BlameSource, oids: (string | null)[]): Promise<string[]> {
  const texts: string[] = [];
  for (let k = 0; k < oids.length; k += READ_BATCH) {
    texts.push(...(await Promise.all(oids.slice(k, k + READ_BATCH).map((oid) => (oid ? source.readText(oid) : '')))));
  }
  return texts;
}

/**
 * Blame of the file at a virtual path as of a point (`memgit blame`, the UI's file page), through the
 * context's caches: blob texts, and blame states after revisions as checkpoints for later replays.
 */
export function blameAt(ctx: HistoryContext, virtualPath: string, at: HistoryEntry): Promise<FileBlame> {
  const history = ctx.store.history;
  return blameFile(history, virtualPath.slice(1), history.position(at.commit) ?? -1, { readText: (oid) => textOf(ctx, oid), checkpoints: ctx.blames });
}
