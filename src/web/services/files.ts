import { blameFile } from '../../store/history/blame';
import { Revision, revisionsOf as revisionsInIndex } from '../../store/history/revisions';
import { diffArrays } from 'diff';
import { fileDiffs } from '../../store/commit-diff';
import type { HistoryEntry } from '../../store/history-index';
import { fileRevisionRecord, FileRevisionRecord } from '../../history/records';
import { hasHidden } from '../filters';
import { AuditContext, CommitSummary, entryFor, NotFound, repoPathOf, summarise, textOf } from './context';

export { splitLines } from '../../store/history/line-stats';
export { advance } from '../../store/history/blame';
export type { Revision } from '../../store/history/revisions';

/**
 * One memory file through time: its content at a commit, its revisions following renames, and blame.
 * Everything comes from the history index (commits by path) and the store's incremental blame
 * (src/store/history/blame.ts): blame at HEAD is a lookup, at an older commit a replay of the file's
 * revisions from the nearest known state, with checkpoints kept in the UI's cache.
 */

export const MAX_SHOWN_LINES = 5000;

/** Revisions of the file at `repoPath` up to `position` (inclusive), oldest first, following renames back. */
export function revisionsOf(ctx: AuditContext, repoPath: string, position: number): Revision[] {
  return revisionsInIndex(ctx.store.history, repoPath, position);
}

export interface BlameLine {
  no: number;
  text: string;
  origin: string;
  /** First line of a run written by the same call: the gutter shows the call there. */
  runStart: boolean;
}

/** A revision as pages and JSON twins show it: the file revision record plus its position in history. */
export type FileRevision = FileRevisionRecord & { position: number };

export interface FilePage {
  rel: string;
  path: string;
  at: CommitSummary;
  /** Whether `at` was asked for (false: HEAD). */
  pinned: boolean;
  exists: boolean;
  /** The file's revision in effect at `at`. */
  current: FileRevision | null;
  size: number;
  lineCount: number;
  lines: BlameLine[];
  truncated: boolean;
  /** Calls that wrote the lines shown, by commit. */
  origins: Record<string, CommitSummary>;
  history: FileRevision[];
  deletedBy: CommitSummary | null;
  /** The content holds invisible or bidirectional control characters (shown marked). */
  hidden: boolean;
}

export async function filePage(ctx: AuditContext, rel: string, at: string | undefined): Promise<FilePage> {
  const atEntry = await entryFor(ctx, at);
  const position = ctx.store.history.position(atEntry.commit)!;
  const repoPath = repoPathOf(rel);
  const { revisions, state } = await blameFile(ctx.store.history, repoPath, position, {
    readText: (oid) => textOf(ctx, oid),
    checkpoints: ctx.blames,
  });
  if (revisions.length === 0) throw new NotFound(`/${repoPath} has no history up to this commit`);
  const last = revisions[revisions.length - 1];
  const exists = last.oid !== null;
  const shown = Math.min(state.lines.length, MAX_SHOWN_LINES);
  const lines: BlameLine[] = [];
  const origins: Record<string, CommitSummary> = {};
  for (let k = 0; k < shown; k++) {
    const origin = state.origins[k];
    if (!origins[origin]) origins[origin] = summarise(ctx, ctx.store.history.get(origin)!);
    lines.push({ no: k + 1, text: state.lines[k], origin, runStart: k === 0 || state.origins[k - 1] !== origin });
  }
  const describe = (r: Revision): FileRevision => ({
    ...fileRevisionRecord(r.entry, { kind: r.kind, path: `/${r.repoPath}`, from: r.from ? `/${r.from}` : null }),
    position: r.position,
  });
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
