import { diffArrays } from 'diff';
import { fileRevisions, Revision } from '../../history/revisions';
import { hasHidden } from '../filters';
import { AuditContext, BlameState, CommitSummary, entryFor, NotFound, repoPathOf, summarise, textOf } from './context';

/**
 * One memory file through time: its content at a commit, its revisions following renames, and blame.
 * Everything comes from the history index (commits by path) plus the blobs of those commits — never from
 * a walk of all commits. Blame replays the file's revisions forward, diffing each against the previous,
 * and caches the state after a revision by (commit, path): a commit fixes the whole chain before it.
 */

export const MAX_SHOWN_LINES = 5000;
const BLAME_MAX_EDIT_LENGTH = 2000;
const BLAME_CHECKPOINT_EVERY = 64;
const READ_BATCH = 32;

export type { Revision } from '../../history/revisions';

/** Revisions of the file at `repoPath` up to `position` (inclusive), oldest first, following renames back. */
export function revisionsOf(ctx: AuditContext, repoPath: string, position: number): Revision[] {
  return fileRevisions(ctx.store.history, repoPath, position);
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
  const changes = diffArrays(previous.lines, lines, { maxEditLength: BLAME_MAX_EDIT_LENGTH });
  if (!changes) return { lines, origins: lines.map(() => commit) };
  const origins: string[] = [];
  let oldIndex = 0;
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
  return { lines, origins };
}

export interface BlameLine {
  no: number;
  text: string;
  origin: string;
  /** First line of a run written by the same call: the gutter shows the call there. */
  runStart: boolean;
}

export interface BlameOrigin extends CommitSummary {
  /** The file (its path then) and the commit just before this call: "blame before this change"; null when the call created it. */
  beforePath: string | null;
  beforeAt: string | null;
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
  /** Calls that wrote the lines shown, by commit, with where to see the blame just before that call. */
  origins: Record<string, BlameOrigin>;
  history: (CommitSummary & { kind: Revision['kind']; path: string; from: string | null })[];
  deletedBy: CommitSummary | null;
  /** The content holds invisible or bidirectional control characters (shown marked). */
  hidden: boolean;
}

export async function filePage(ctx: AuditContext, rel: string, at: string | undefined): Promise<FilePage> {
  const atEntry = await entryFor(ctx, at);
  const position = ctx.store.history.position(atEntry.commit)!;
  const repoPath = repoPathOf(rel);
  const revisions = revisionsOf(ctx, repoPath, position);
  if (revisions.length === 0) throw new NotFound(`/${repoPath} has no history up to this commit`);
  const last = revisions[revisions.length - 1];
  const exists = last.oid !== null;
  const state = exists ? await blame(ctx, revisions) : { lines: [], origins: [] };
  const shown = Math.min(state.lines.length, MAX_SHOWN_LINES);
  const lines: BlameLine[] = [];
  const origins: Record<string, BlameOrigin> = {};
  const revisionOf = new Map(revisions.map((r) => [r.entry.commit, r]));
  for (let k = 0; k < shown; k++) {
    const origin = state.origins[k];
    if (!origins[origin]) {
      const revision = revisionOf.get(origin);
      const before = revision && revision.kind !== 'created' ? revision : undefined;
      origins[origin] = {
        ...summarise(ctx, ctx.store.history.get(origin)!),
        beforePath: before ? `/${before.kind === 'renamed' ? before.from! : before.repoPath}` : null,
        beforeAt: before?.entry.parent ?? null,
      };
    }
    lines.push({ no: k + 1, text: state.lines[k], origin, runStart: k === 0 || state.origins[k - 1] !== origin });
  }
  const describe = (r: Revision) => ({ ...summarise(ctx, r.entry), kind: r.kind, path: `/${r.repoPath}`, from: r.from ? `/${r.from}` : null });
  return {
    rel,
    path: `/${repoPath}`,
    at: summarise(ctx, atEntry),
    pinned: at !== undefined && at !== '',
    exists,
    current: exists ? describe(last) : null,
    size: exists ? Buffer.byteLength(await textOf(ctx, last.oid), 'utf8') : 0,
    lineCount: state.lines.length,
    lines,
    truncated: state.lines.length > shown,
    origins,
    history: revisions.map(describe).reverse(),
    deletedBy: exists ? null : summarise(ctx, last.entry),
    hidden: exists && hasHidden(await textOf(ctx, last.oid)),
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
