import { diffArrays } from 'diff';
import { fileDiffs } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import { hasHidden } from '../filters';
import { yieldToLoop } from './budget';
import { MAX_LINE_CHARS } from './diff-view';
import { AuditContext, BlameState, CommitSummary, entryFor, NotFound, repoPathOf, summarise, textOf } from './context';

/**
 * One memory file through time: its content at a commit, its revisions following renames, and blame.
 * Everything comes from the history index (commits by path) plus the blobs of those commits — never from
 * a walk of all commits. Blame replays the file's revisions forward, diffing each against the previous,
 * and caches the state after a revision by (commit, path): a commit fixes the whole chain before it.
 */

export const MAX_SHOWN_LINES = 5000;
/** Characters of file content one page shows at most (long lines are cut at MAX_LINE_CHARS, as in diffs). */
export const MAX_SHOWN_CHARS = 512 * 1024;
const BLAME_MAX_EDIT_LENGTH = 2000;
const BLAME_CHECKPOINT_EVERY = 64;
const READ_BATCH = 32;

export interface Revision {
  entry: HistoryEntry;
  position: number;
  /** Repository path of the file in this revision. */
  repoPath: string;
  /** The file's blob after this commit (null: the commit deleted it). */
  oid: string | null;
  kind: 'created' | 'modified' | 'renamed' | 'deleted';
  /** For a rename: the repository path it came from. */
  from?: string;
}

/** Revisions of the file at `repoPath` up to `position` (inclusive), oldest first, following renames back. */
export function revisionsOf(ctx: AuditContext, repoPath: string, position: number): Revision[] {
  const history = ctx.store.history;
  const newestFirst: Revision[] = [];
  let path: string | null = repoPath;
  let limit = position;
  while (path !== null) {
    const list = history.byPath(path);
    let i = upperBoundBy(list, limit, (e) => history.position(e.commit)!) - 1;
    const current: string = path;
    path = null;
    for (; i >= 0; i--) {
      const entry = list[i];
      const entryPosition = history.position(entry.commit)!;
      const change = entry.changes.find((c) => c.path === current)!;
      if (change.oldOid) {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: change.newOid ? 'modified' : 'deleted' });
        continue;
      }
      // The file came into being here: by a rename (follow it back) or by a create (its first revision).
      const renamed = fileDiffs(entry).find((d) => d.status === 'renamed' && d.newPath === `/${current}`);
      if (renamed) {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: 'renamed', from: renamed.oldPath!.slice(1) });
        path = renamed.oldPath!.slice(1);
        limit = entryPosition - 1;
      } else {
        newestFirst.push({ entry, position: entryPosition, repoPath: current, oid: change.newOid, kind: 'created' });
      }
      break;
    }
  }
  // Walking back stops at the newest creation, so an earlier life of a reused path is not mixed in.
  return newestFirst.reverse();
}

function upperBoundBy<T>(sorted: T[], value: number, key: (item: T) => number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (key(sorted[mid]) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Blame after the last of `revisions` (which must be one chain, oldest first). */
export async function blame(ctx: AuditContext, revisions: Revision[]): Promise<BlameState> {
  const key = (r: Revision) => `${r.entry.commit}\0${r.repoPath}`;
  let start = revisions.length - 1;
  let state: BlameState | undefined;
  for (; start >= 0; start--) {
    state = ctx.blames.get(key(revisions[start]));
    if (state) break;
  }
  state ??= { lines: [], origins: [] };
  const texts = await readAll(ctx, revisions.slice(start + 1).map((r) => r.oid));
  for (let k = start + 1; k < revisions.length; k++) {
    const revision = revisions[k];
    const lines = splitLines(texts[k - start - 1]);
    state = advance(state, lines, revision.entry.commit);
    await yieldToLoop(); // one revision at a time: other requests are answered in between
    if (k === revisions.length - 1 || k % BLAME_CHECKPOINT_EVERY === 0) ctx.blames.set(key(revision), state);
  }
  return state;
}

/** Blob texts in order, read a batch at a time so the object reads overlap. */
async function readAll(ctx: AuditContext, oids: (string | null)[]): Promise<string[]> {
  const texts: string[] = [];
  for (let k = 0; k < oids.length; k += READ_BATCH) {
    texts.push(...(await Promise.all(oids.slice(k, k + READ_BATCH).map((oid) => textOf(ctx, oid)))));
  }
  return texts;
}

/** Pure: carry unchanged lines' origins over, attribute added lines to `commit`. */
export function advance(previous: BlameState, lines: string[], commit: string): BlameState {
  // Lines shared at both ends keep their origins without going through the diff: a one-line change
  // of a half-million-line file costs one scan instead of a diff of the whole file.
  const old = previous.lines;
  let head = 0;
  while (head < old.length && head < lines.length && old[head] === lines[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < lines.length - head && old[old.length - 1 - tail] === lines[lines.length - 1 - tail]) tail++;
  const changes = diffArrays(old.slice(head, old.length - tail), lines.slice(head, lines.length - tail), { maxEditLength: BLAME_MAX_EDIT_LENGTH });
  const origins: string[] = previous.origins.slice(0, head);
  if (!changes) {
    for (let k = head; k < lines.length - tail; k++) origins.push(commit);
    for (let k = old.length - tail; k < old.length; k++) origins.push(previous.origins[k]);
    return { lines, origins };
  }
  let oldIndex = head;
  for (const change of changes) {
    if (change.removed) {
      oldIndex += change.count;
    } else if (change.added) {
      for (let k = 0; k < change.count; k++) origins.push(commit);
    } else {
      for (let k = 0; k < change.count; k++) origins.push(previous.origins[oldIndex + k]);
      oldIndex += change.count;
    }
  }
  for (let k = old.length - tail; k < old.length; k++) origins.push(previous.origins[k]);
  return { lines, origins };
}

export interface BlameLine {
  no: number;
  text: string;
  /** The line was longer than MAX_LINE_CHARS and was cut. */
  cut: boolean;
  origin: string;
  /** First line of a run written by the same call: the gutter shows the call there. */
  runStart: boolean;
}

export interface FilePage {
  rel: string;
  path: string;
  at: CommitSummary;
  /** Whether `at` was asked for (false: HEAD). */
  pinned: boolean;
  exists: boolean;
  /** The file's revision in effect at `at`. */
  current: (CommitSummary & { kind: Revision['kind']; path: string }) | null;
  size: number;
  lineCount: number;
  lines: BlameLine[];
  truncated: boolean;
  /** Some lines shown were cut at MAX_LINE_CHARS. */
  linesCut: boolean;
  /** Calls that wrote the lines shown, by commit. */
  origins: Record<string, CommitSummary>;
  /** Whether `lines` carry blame (origins); false for ?blame=0 and when blame was over budget. */
  blamed: boolean;
  /** Blame was asked for but would cost more than BLAME_MAX_LINE_STEPS: the sizes that decided it. */
  blameSkipped: { lines: number; revisions: number; budget: number } | null;
  /** The newest MAX_HISTORY_ROWS revisions, newest first. */
  history: (CommitSummary & { kind: Revision['kind']; path: string; from: string | null })[];
  revisionCount: number;
  deletedBy: CommitSummary | null;
  /** The content holds invisible or bidirectional control characters (shown marked). */
  hidden: boolean;
}

/**
 * Blame replays every revision not covered by a cached state, and each step costs about one pass over
 * the file's lines; beyond this many line-steps a page shows the plain content instead (and says why).
 */
export const BLAME_MAX_LINE_STEPS = 4_000_000;
/** Revisions listed on a file page at most (newest first); the commits list filtered by path has all. */
export const MAX_HISTORY_ROWS = 500;

/** Index of the newest revision whose blame state is cached (-1: none). */
function newestCached(ctx: AuditContext, revisions: Revision[]): number {
  for (let k = revisions.length - 1; k >= 0; k--) {
    if (ctx.blames.get(`${revisions[k].entry.commit}\0${revisions[k].repoPath}`)) return k;
  }
  return -1;
}

export async function filePage(ctx: AuditContext, rel: string, at: string | undefined, options: { blame?: boolean } = {}): Promise<FilePage> {
  const atEntry = await entryFor(ctx, at);
  const position = ctx.store.history.position(atEntry.commit)!;
  const repoPath = repoPathOf(rel);
  const revisions = revisionsOf(ctx, repoPath, position);
  if (revisions.length === 0) throw new NotFound(`/${repoPath} has no history up to this commit`);
  const last = revisions[revisions.length - 1];
  const exists = last.oid !== null;
  const text = exists ? await textOf(ctx, last.oid) : '';
  let blameSkipped: FilePage['blameSkipped'] = null;
  let state: BlameState;
  if (!exists) {
    state = { lines: [], origins: [] };
  } else if (options.blame === false) {
    state = { lines: splitLines(text), origins: [] };
  } else {
    const lineCount = splitLines(text).length;
    const steps = (revisions.length - 1 - newestCached(ctx, revisions)) * Math.max(1, lineCount);
    if (steps > BLAME_MAX_LINE_STEPS) {
      blameSkipped = { lines: lineCount, revisions: revisions.length, budget: BLAME_MAX_LINE_STEPS };
      state = { lines: splitLines(text), origins: [] };
    } else {
      state = await blame(ctx, revisions);
    }
  }
  const withBlame = state.origins.length > 0 || state.lines.length === 0;
  const limit = Math.min(state.lines.length, MAX_SHOWN_LINES);
  const lines: BlameLine[] = [];
  const origins: Record<string, CommitSummary> = {};
  let chars = 0;
  for (let k = 0; k < limit && chars < MAX_SHOWN_CHARS; k++) {
    const origin = withBlame ? state.origins[k] : '';
    if (withBlame && !origins[origin]) origins[origin] = summarise(ctx, ctx.store.history.get(origin)!);
    const full = state.lines[k];
    const cut = full.length > MAX_LINE_CHARS;
    const text = cut ? full.slice(0, MAX_LINE_CHARS) : full;
    chars += text.length;
    lines.push({ no: k + 1, text, cut, origin, runStart: k === 0 || state.origins[k - 1] !== origin });
  }
  const describe = (r: Revision) => ({ ...summarise(ctx, r.entry), kind: r.kind, path: `/${r.repoPath}`, from: r.from ? `/${r.from}` : null });
  return {
    rel,
    path: `/${repoPath}`,
    at: summarise(ctx, atEntry),
    pinned: at !== undefined && at !== '',
    exists,
    current: exists ? describe(last) : null,
    size: exists ? Buffer.byteLength(text, 'utf8') : 0,
    lineCount: state.lines.length,
    lines,
    truncated: state.lines.length > lines.length,
    linesCut: lines.some((l) => l.cut),
    origins,
    blamed: withBlame && exists,
    blameSkipped,
    history: revisions.slice(-MAX_HISTORY_ROWS).map(describe).reverse(),
    revisionCount: revisions.length,
    deletedBy: exists ? null : summarise(ctx, last.entry),
    hidden: exists && hasHidden(text),
  };
}

/** The file's text at a commit (HEAD by default), for raw downloads. */
export async function rawFile(ctx: AuditContext, rel: string, at: string | undefined): Promise<{ name: string; text: string }> {
  const atEntry = await entryFor(ctx, at);
  const tree = await ctx.store.commitTree(atEntry.commit);
  const entry = await ctx.store.objects.entryAt(tree, repoPathOf(rel));
  if (!entry || entry.type !== 'blob' || rel === '') throw new NotFound(`/memories/${rel} does not exist at this commit`);
  return { name: rel.split('/').pop()!, text: await textOf(ctx, entry.oid) };
}
