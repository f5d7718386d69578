import { blobText } from '../history-index/file-diffs';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import type { HistoryEntry, HistoryIndex } from '../history-index';
import { FILE_MODE, FileChange, ObjectStore } from '../objects';
import { PlanSteps } from './budget';
import { baseFootprint, changedLines, overlaps, threeWayMerge } from './merge';
import { isKeep, MemoryFiles } from './memory-state';

/**
 * Planning a rollback: edits to a flat copy of the memory (MemoryFiles), computed from the history
 * index and the objects. Nothing here writes to the repository.
 */

const EMPTY_BLOB_OID = 'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391';

/** A later call whose change stands in the way of an undo. */
export interface ConflictingCall {
  commit: string;
  toolUseId: string | null;
  session: string | null;
  title: string;
  /** The lines that call wrote, in the file as that call left it (1-based, inclusive). */
  lines: { from: number; to: number }[];
}

export interface RollbackConflict {
  /** The commit being undone when the conflict was found. */
  reverting: string;
  /** Virtual path of the file now (`/memories/...`). */
  path: string;
  kind: 'lines' | 'deleted' | 're-created' | 'modified' | 'moved' | 'path-taken' | 'too-large';
  /** The conflicting lines of the current file (1-based, inclusive), for `lines` conflicts. */
  lines?: { from: number; to: number };
  calls: ConflictingCall[];
  message: string;
}

interface Move {
  from: string;
  to: string;
  oid: string;
}

interface Touch {
  entry: HistoryEntry;
  path: string;
  oldOid: string | null;
  newOid: string | null;
  movedTo?: string;
}

function isMemoryPath(repoPath: string): boolean {
  return repoPath.startsWith(`${MEMORY_REPO_ROOT}/`);
}

function virtualToRepo(virtual: string): string {
  return virtual.replace(/^\//, '');
}

/**
 * Files a commit moved without changing them. An agent `rename` names its paths in trailers (a directory
 * rename moves everything below); for operator commits a file that vanished and one that appeared with
 * the same (non-empty) content, when that pairing is unambiguous, count as a move too — so reverting
 * the revert of a rename moves the file back, later edits and all.
 */
export function movesOf(entry: HistoryEntry): Move[] {
  let moves = movesCache.get(entry);
  if (!moves) movesCache.set(entry, (moves = findMoves(entry)));
  return moves;
}

/** Entries never change once indexed: their moves are worked out once (a plan asks for each many times). */
const movesCache = new WeakMap<HistoryEntry, Move[]>();

function findMoves(entry: HistoryEntry): Move[] {
  const removed = entry.changes.filter((c) => c.oldOid && !c.newOid && isMemoryPath(c.path) && !isKeep(c.path));
  const added = entry.changes.filter((c) => !c.oldOid && c.newOid && isMemoryPath(c.path) && !isKeep(c.path));
  const moves: Move[] = [];
  if (entry.command === 'rename' && entry.path && entry.newPath) {
    const from = virtualToRepo(entry.path);
    const to = virtualToRepo(entry.newPath);
    for (const r of removed) {
      const suffix = r.path === from ? '' : r.path.startsWith(`${from}/`) ? r.path.slice(from.length) : null;
      if (suffix === null) continue;
      const twin = added.find((a) => a.path === to + suffix && a.newOid === r.oldOid);
      if (twin) moves.push({ from: r.path, to: twin.path, oid: r.oldOid! });
    }
  } else if (!entry.command) {
    for (const r of removed) {
      if (r.oldOid === EMPTY_BLOB_OID) continue;
      const twins = added.filter((a) => a.newOid === r.oldOid);
      const sameContent = removed.filter((x) => x.oldOid === r.oldOid);
      if (twins.length === 1 && sameContent.length === 1) moves.push({ from: r.path, to: twins[0].path, oid: r.oldOid! });
    }
  }
  return moves;
}

export function describeCall(entry: HistoryEntry): string {
  return entry.toolUseId ?? entry.commit.slice(0, 12);
}

export class RollbackPlanner {
  readonly conflicts: RollbackConflict[] = [];

  constructor(
    private readonly objects: ObjectStore,
    private readonly history: HistoryIndex,
    /** The memory being edited; starts as HEAD's. */
    readonly files: MemoryFiles,
    /** Pacing (and, for a budgeted dry run, the budget) of the plan's steps. */
    private readonly steps: PlanSteps = new PlanSteps(undefined),
  ) {}

  /**
   * Undo one commit's change to the memory in `files`. `skip` holds commits already undone in this plan
   * (newer calls of the same session), which therefore neither move files nor count as later changes.
   */
  async revert(target: HistoryEntry, skip: ReadonlySet<string> = new Set()): Promise<void> {
    const moves = movesOf(target);
    const moved = new Set(moves.flatMap((m) => [m.from, m.to]));
    for (const move of moves) await this.revertMove(target, move, skip);
    for (const change of target.changes) {
      if (!isMemoryPath(change.path) || moved.has(change.path)) continue;
      await this.steps.step(); // a commit may change thousands of files (a reset, an import)
      if (isKeep(change.path)) this.set(change.path, change.oldOid); // placeholders are re-normalised at the end
      else await this.revertFile(target, change, skip);
    }
  }

  /** Replace the memory at `repoPath` (a file, a directory or nothing) by what `source` holds there. */
  replaceSubtree(repoPath: string, source: MemoryFiles): void {
    const within = (p: string) => p === repoPath || p.startsWith(`${repoPath}/`);
    for (const p of [...this.files.keys()]) if (within(p)) this.files.delete(p);
    for (const [p, value] of source) if (within(p)) this.files.set(p, value);
  }

  private position(entry: HistoryEntry): number {
    const position = this.history.position(entry.commit);
    if (position === undefined) throw new Error(`rollback: ${entry.commit} is not in the history index`);
    return position;
  }

  private set(repoPath: string, oid: string | null, mode = FILE_MODE): void {
    if (oid === null) this.files.delete(repoPath);
    else this.files.set(repoPath, { oid, mode });
  }

  /**
   * Follow a file from just after `after` to HEAD through later renames: where it is now, and (asked for
   * only when a conflict is reported) the calls that touched it on the way.
   */
  private track(repoPath: string, after: HistoryEntry, skip: ReadonlySet<string>): { path: string; touches: () => Touch[] } {
    let touches: Touch[] | undefined;
    return {
      path: this.walk(repoPath, after, skip, null),
      touches: () => {
        if (!touches) this.walk(repoPath, after, skip, (touches = []));
        return touches;
      },
    };
  }

  private walk(repoPath: string, after: HistoryEntry, skip: ReadonlySet<string>, touches: Touch[] | null): string {
    let current = repoPath;
    let since = this.position(after);
    follow: for (;;) {
      for (const entry of this.history.byPathAfter(current, since)) {
        if (skip.has(entry.commit)) continue;
        // Only renames and operator commits move files (movesOf); every other entry is a plain touch.
        const move = entry.command === 'rename' || !entry.command ? movesOf(entry).find((m) => m.from === current) : undefined;
        if (touches) {
          const change = entry.changes.find((c) => c.path === current)!;
          touches.push({ entry, path: current, oldOid: change.oldOid, newOid: change.newOid, movedTo: move?.to });
        }
        if (move) {
          current = move.to;
          since = this.position(entry);
          continue follow;
        }
      }
      return current;
    }
  }

  private async conflict(
    target: HistoryEntry,
    repoPath: string,
    kind: RollbackConflict['kind'],
    touches: Touch[],
    message: string,
    lines?: RollbackConflict['lines'],
  ): Promise<void> {
    const calls = await this.describeCalls(touches);
    this.conflicts.push({ reverting: target.commit, path: `/${repoPath}`, kind, lines, calls, message });
  }

  private async describeCalls(touches: Touch[]): Promise<ConflictingCall[]> {
    const calls: ConflictingCall[] = [];
    for (const t of touches) {
      await this.steps.step();
      const lines = t.oldOid && t.newOid ? changedLines(await this.text(t.oldOid), await this.text(t.newOid)) : [];
      calls.push({ commit: t.entry.commit, toolUseId: t.entry.toolUseId ?? null, session: t.entry.session ?? null, title: t.entry.title, lines });
    }
    return calls;
  }

  /** The last few texts read: a conflict reads each later version of a file up to four times. */
  private readonly recentTexts = new Map<string, string>();

  private async text(oid: string): Promise<string> {
    const known = this.recentTexts.get(oid);
    if (known !== undefined) return known;
    const text = await blobText(this.objects, oid);
    this.recentTexts.set(oid, text);
    if (this.recentTexts.size > 8) this.recentTexts.delete(this.recentTexts.keys().next().value as string);
    return text;
  }

  private async revertMove(target: HistoryEntry, move: Move, skip: ReadonlySet<string>): Promise<void> {
    const { path: now, touches: touchesOf } = this.track(move.to, target, skip);
    const current = this.files.get(now);
    const who = describeCall(target);
    if (!current) {
      if (this.files.get(move.from)?.oid === move.oid) return; // already moved back
      const deleters = touchesOf().filter((t) => t.newOid === null && !t.movedTo);
      await this.conflict(target, move.to, 'deleted', deleters, `/${move.to} (moved there by ${who}) was deleted later; nothing to move back to /${move.from}`);
    } else if (now !== move.to) {
      await this.conflict(target, now, 'moved', touchesOf().filter((t) => t.movedTo), `/${move.to} (moved there by ${who}) was renamed again later, to /${now}`);
    } else if (this.files.has(move.from)) {
      const takers = this.track(move.from, target, skip).touches();
      await this.conflict(target, move.from, 'path-taken', takers, `cannot move /${move.to} back to /${move.from}: a later call wrote a file there`);
    } else {
      this.files.delete(now);
      this.files.set(move.from, current);
    }
  }

  private async revertFile(target: HistoryEntry, change: FileChange, skip: ReadonlySet<string>): Promise<void> {
    const { path: now, touches } = this.track(change.path, target, skip);
    const current = this.files.get(now) ?? null;
    const currentOid = current?.oid ?? null;
    const who = describeCall(target);
    if (currentOid === change.newOid) return this.set(now, change.oldOid, current?.mode);
    if (currentOid === change.oldOid) return; // already undone
    const contentTouches = () => touches().filter((t) => !t.movedTo);
    if (change.newOid === null) {
      return this.conflict(target, now, 're-created', contentTouches(), `${who} deleted /${change.path}, and later calls wrote a new file there`);
    }
    if (current === null) {
      const deleters = contentTouches().filter((t) => t.newOid === null);
      return this.conflict(target, now, 'deleted', deleters, `${who} changed /${change.path}, and later calls deleted it`);
    }
    if (change.oldOid === null) {
      return this.conflict(target, now, 'modified', contentTouches(), `${who} created /${change.path}, and later calls changed it; deleting it would lose their changes`);
    }
    const base = await this.text(change.newOid);
    const ours = current.text ?? (await this.text(current.oid));
    const merged = threeWayMerge(base, ours, await this.text(change.oldOid));
    if (!merged.clean && merged.tooLarge) {
      const message = `${who} changed /${change.path}, and later calls changed it too; the versions differ in ${merged.lines} lines around the changes, too many to merge line by line. Restore the file at a point instead, or revert the later calls first`;
      return this.conflict(target, now, 'too-large', contentTouches(), message);
    }
    if (merged.clean) {
      if (merged.text !== ours) {
        const oid = await this.objects.hashBlob(Buffer.from(merged.text, 'utf8'));
        this.files.set(now, { oid, mode: current.mode, text: merged.text });
      }
      return;
    }
    const later = contentTouches();
    for (const region of merged.conflicts) {
      const culprits: Touch[] = [];
      for (const t of later) {
        if (!t.oldOid || !t.newOid) continue;
        await this.steps.step();
        const footprint = baseFootprint(base, await this.text(t.oldOid), await this.text(t.newOid));
        if (footprint.some((range) => overlaps(range, region.base))) culprits.push(t);
      }
      // An empty region (both sides inserted at one place) is reported as the line it sits before.
      const from = region.ours.start + 1;
      const to = Math.max(region.ours.end, from);
      const message = `later calls changed the lines that ${who} changed (${to > from ? `lines ${from}-${to}` : `line ${from}`} of the file now)`;
      await this.conflict(target, now, 'lines', culprits.length ? culprits : later, message, { from, to });
    }
  }
}
