import { MEMORY_REPO_ROOT, MEMORY_ROOT } from '../../contract/paths';
import { blameAt } from '../../history/blame';
import { splitLines } from '../../history/diffs';
import type { HistoryEntry } from '../../history/entry';
import { directoryAt, readFileAt } from '../../history/memory-at';
import { currentPath, fileRevisions, Revision } from '../../history/revisions';
import { entryOf } from '../../history/points';
import { fileRevisionRecord, FileRevisionRecord } from '../../history/records';
import { PathNotFoundError } from '../../store';
import { hasHidden } from '../filters';
import { MAX_LINE_CHARS } from './diff-view';
import { AuditContext, CommitSummary, entryFor, NotFound, repoPathOf, summarise, textOf } from './context';

export { splitLines };
export { advance } from '../../history/blame';
export type { Revision } from '../../history/revisions';

/**
 * One memory file through time: its content at a commit, its revisions following renames, and blame.
 * Everything comes from the history index (commits by path) and the store's incremental blame
 * (src/history/blame.ts): blame at HEAD is a lookup, at an older commit a replay of the file's
 * revisions from the nearest known state, with checkpoints kept in the UI's cache.
 */

export const MAX_SHOWN_LINES = 5000;
/** Characters of file content one page shows at most (long lines are cut at MAX_LINE_CHARS, as in diffs). */
export const MAX_SHOWN_CHARS = 512 * 1024;
/**
 * Blame at HEAD is one lookup of the store's incremental blame; at an older commit it replays revisions.
 * Above this many line-steps (revisions to replay × lines) the page shows the plain content instead.
 */
export const BLAME_MAX_LINE_STEPS = 4_000_000;
/** Revisions listed on the page (newest first); the commit list has them all. */
export const MAX_HISTORY_ROWS = 500;


export interface BlameLine {
  no: number;
  text: string;
  origin: string;
  /** First line of a run written by the same call: the gutter shows the call there. */
  runStart: boolean;
  /** The line was longer than MAX_LINE_CHARS and is cut. */
  cut: boolean;
}

/** A revision as pages and JSON twins show it: the file revision record plus its position in history. */
export type FileRevision = FileRevisionRecord & { position: number };

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
  current: FileRevision | null;
  size: number;
  lineCount: number;
  lines: BlameLine[];
  truncated: boolean;
  linesCut: boolean;
  /** Calls that wrote the lines shown, by commit. */
  origins: Record<string, BlameOrigin>;
  /** Whether `lines` carry blame (origins); false for ?blame=0 and when blame was over budget. */
  blamed: boolean;
  /** Blame was asked for but would cost more than BLAME_MAX_LINE_STEPS: the sizes that decided it. */
  blameSkipped: { lines: number; revisions: number; budget: number } | null;
  /** The newest MAX_HISTORY_ROWS revisions, newest first. */
  history: FileRevision[];
  revisionCount: number;
  deletedBy: CommitSummary | null;
  /** The content holds invisible or bidirectional control characters (shown marked). */
  hidden: boolean;
  /**
   * Where a restore of any revision listed puts the file: its name now, followed forward through later
   * renames (the page's path at HEAD). A revision from before a rename is restored under this name, as
   * `memgit restore` does: the content it had then, under its former name, comes back as the current file.
   */
  restorePath: string;
}

export async function filePage(ctx: AuditContext, rel: string, at: string | undefined, options: { blame?: boolean } = {}): Promise<FilePage> {
  const atEntry = await entryFor(ctx, at);
  const repoPath = repoPathOf(rel);
  const pinned = at !== undefined && at !== '';
  let revisions = fileRevisions(ctx, `/${repoPath}`, atEntry);
  if (revisions.length === 0) throw new NotFound(`/${repoPath} has no history up to this commit`);
  const last = revisions[revisions.length - 1];
  const exists = last.oid !== null;
  const text = exists ? await textOf(ctx, last.oid) : '';
  let blameSkipped: FilePage['blameSkipped'] = null;
  let state: { lines: string[]; origins: string[] } = { lines: exists ? splitLines(text) : [], origins: [] };
  if (exists && options.blame !== false) {
    // A bound on the worst case (every revision replayed): a file that large is shown plain, whatever
    // the store's blame records would spare, so that no read request can cost the server that much.
    const steps = revisions.length * Math.max(1, state.lines.length);
    if (steps > BLAME_MAX_LINE_STEPS) {
      blameSkipped = { lines: state.lines.length, revisions: revisions.length, budget: BLAME_MAX_LINE_STEPS };
    } else {
      const blamed = await blameAt(ctx, `/${repoPath}`, atEntry);
      revisions = blamed.revisions;
      state = blamed.state;
    }
  }
  const withBlame = state.origins.length > 0 || state.lines.length === 0;
  const limit = Math.min(state.lines.length, MAX_SHOWN_LINES);
  const lines: BlameLine[] = [];
  const origins: Record<string, BlameOrigin> = {};
  const revisionOf = new Map(revisions.map((r) => [r.entry.commit, r]));
  let chars = 0;
  for (let k = 0; k < limit && chars < MAX_SHOWN_CHARS; k++) {
    const origin = withBlame ? state.origins[k] : '';
    if (withBlame && !origins[origin]) {
      const revision = revisionOf.get(origin);
      const before = revision && revision.kind !== 'created' ? revision : undefined;
      origins[origin] = {
        ...summarise(ctx, entryOf(ctx, origin)!),
        beforePath: before ? `/${before.kind === 'renamed' ? before.from! : before.repoPath}` : null,
        beforeAt: before?.entry.parent ?? null,
      };
    }
    const full = state.lines[k];
    const cut = full.length > MAX_LINE_CHARS;
    const shownText = cut ? full.slice(0, MAX_LINE_CHARS) : full;
    chars += shownText.length;
    lines.push({ no: k + 1, text: shownText, cut, origin, runStart: k === 0 || state.origins[k - 1] !== origin });
  }
  const describe = (r: Revision): FileRevision => ({
    ...fileRevisionRecord(r.entry, { kind: r.kind, path: `/${r.repoPath}`, from: r.from ? `/${r.from}` : null }),
    position: r.position,
  });
  return {
    rel,
    path: `/${repoPath}`,
    at: summarise(ctx, atEntry),
    pinned,
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
    restorePath: currentPath(ctx, `/${repoPath}`, atEntry),
  };
}

/** The file's text at a commit (HEAD by default), for raw downloads. */
export async function rawFile(ctx: AuditContext, rel: string, at: string | undefined): Promise<{ name: string; text: string }> {
  const atEntry = await entryFor(ctx, at);
  if (rel === '') throw new NotFound(`${MEMORY_ROOT}/ does not exist at this commit`);
  try {
    return { name: rel.split('/').pop()!, text: (await readFileAt(ctx, `/${repoPathOf(rel)}`, atEntry)).text };
  } catch (error) {
    if (error instanceof PathNotFoundError) throw new NotFound(`${MEMORY_ROOT}/${rel} does not exist at this commit`);
    throw error;
  }
}

/**
 * Where a file URL written with the /memories prefix meant to go (`/files/memories/a.md`: the path as
 * pages show it, typed or pasted into the URL): the file without the prefix (`a.md`), or the folder for
 * a folder. Null when the path names something as it is (a folder that is itself called `memories`), or
 * nothing either way, or the point in history is not one: the page then says what is wrong.
 */
export async function unprefixedTarget(ctx: AuditContext, rel: string, at: string | undefined): Promise<{ kind: 'file' | 'dir'; rel: string } | null> {
  if (rel !== MEMORY_REPO_ROOT && !rel.startsWith(`${MEMORY_REPO_ROOT}/`)) return null;
  let atEntry: HistoryEntry;
  try {
    atEntry = await entryFor(ctx, at);
  } catch {
    return null;
  }
  if (fileRevisions(ctx, `/${repoPathOf(rel)}`, atEntry).length > 0) return null;
  const stripped = rel.slice(MEMORY_REPO_ROOT.length).replace(/^\//, '');
  if (stripped !== '' && fileRevisions(ctx, `/${repoPathOf(stripped)}`, atEntry).length > 0) return { kind: 'file', rel: stripped };
  return (await directoryAt(ctx, `/${repoPathOf(stripped)}`, atEntry)) ? { kind: 'dir', rel: stripped } : null;
}
