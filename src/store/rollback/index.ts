import { resolvePath, isValidId } from '../../contract/paths';
import { blobText, FileDiff, isMemoryFile, unifiedTextDiffWithin } from '../history-index/file-diffs';
import { oneLine, CommitMeta, KEY_ID_PATTERN } from '../commit-message';
import { RollbackRefusedError, StaleHeadError } from '../errors';
import { isIsoTime } from '../points';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import { toRepoPath } from '../git-reader';
import type { HistoryEntry, HistoryIndex } from '../history-index';
import { PlanStopped, PlanSteps, RollbackBudget, RollbackStop } from './budget';
import { describeCall, movesOf, RollbackConflict, RollbackPlanner } from './plan';
import { isKeep, MemoryFiles, normaliseKeeps, readMemoryFiles, writeMemoryTree } from './memory-state';
import type { RollbackPort } from './port';

export type { RollbackConflict, ConflictingCall } from './plan';
export type { RollbackBudget, RollbackStop } from './budget';
export type { RollbackPort } from './port';

/**
 * Operator rollbacks: revert one call, restore a path, roll back a session, reset to a point. Each is
 * planned against HEAD as an edit of the memory and written as ONE new commit through the store's
 * `writeCommit` (reached through the port the store hands this folder, port.ts), under the store's write
 * lock, so agent calls and rollbacks are serialised and the agent's next `view` sees the result. History
 * is never rewritten. A plan with a conflict writes nothing.
 */

export type RollbackOperation = 'revert' | 'restore' | 'rollback-session' | 'reset';

export interface RollbackOptions {
  /** Who asks; recorded as `Memory-Actor: operator:<name>` (same alphabet as ids). */
  operator: string;
  /** Why, as one line (`Memory-Reason`); control characters are flattened. */
  reason?: string;
  /** Plan and return the diff without writing anything. */
  dryRun?: boolean;
  /** Refuse (StaleHeadError) unless HEAD is still this commit — what the operator previewed. */
  expectHead?: string;
  /**
   * Limits of the work (the audit UI's previews pass one): a dry run stops when it is spent (status
   * `stopped`); patches beyond `patchChars` are left out of any outcome (`cut`). Without one, no limit.
   */
  budget?: RollbackBudget;
  /** The id of the server key that asked (`memgit server`), recorded as `Memory-Key`. */
  key?: string;
}

export interface RollbackFileDiff extends FileDiff {
  /** Unified diff of this file (git style `a/…` `b/…` names); '' when `cut`. */
  patch: string;
  /** The patch was left out: the outcome had spent its budget (`RollbackOptions.budget`) before this file. */
  cut?: boolean;
  /** ... or, with `cut`, the two versions differ by more than the budget's `maxEditLength` lines. */
  tooLarge?: boolean;
}

export interface RollbackOutcome {
  operation: RollbackOperation;
  /**
   * committed: written; preview: a dry run with no conflict; conflict: nothing written; unchanged: nothing
   * to do; stopped: a dry run that reached its budget before the plan was complete (see `stopped`).
   */
  status: 'committed' | 'preview' | 'conflict' | 'unchanged' | 'stopped';
  /** The first line of the commit (e.g. `revert toolu_01…`). */
  title: string;
  /** The HEAD the plan was made against. */
  head: string;
  /** The new commit, when status is committed. */
  commit: string | null;
  /** Commits undone, newest first (one `Memory-Reverts` trailer each). */
  reverts: string[];
  actor: string;
  reason: string | null;
  conflicts: RollbackConflict[];
  files: RollbackFileDiff[];
  /** All file patches, joined: exactly the change the commit makes (or would make), unless `patchCut`. */
  patch: string;
  /** Some files' patches were left out (the budget's `patchChars`, or its time). */
  patchCut: boolean;
  /** For status `stopped`: which budget stopped the plan, and how far it got. */
  stopped: RollbackStop | null;
}

interface Plan {
  title: string;
  reverts: string[];
  conflicts: RollbackConflict[];
  before: MemoryFiles;
  after: MemoryFiles;
}

type Planner = (store: RollbackPort, head: string, steps: PlanSteps) => Promise<Plan>;

/** Undo one call (tool_use id or commit): a line-level three-way merge with what came after it. */
export function revert(store: RollbackPort, ref: string, options: RollbackOptions): Promise<RollbackOutcome> {
  return run(store, 'revert', options, async (s, head, steps) => {
    const target = await resolveTarget(s, ref);
    if (target.parent === null) throw new RollbackRefusedError('the first commit initialises the store and cannot be reverted; use reset');
    if (!target.changes.some((c) => c.path.startsWith(`${MEMORY_REPO_ROOT}/`))) {
      throw new RollbackRefusedError(`${describeCall(target)} changed no memory file; nothing to revert`);
    }
    return planReverts(s, head, `revert ${describeCall(target)}`, [target], steps);
  });
}

/** Undo every call of a session, newest first, as one commit. */
export function rollbackSession(store: RollbackPort, session: string, options: RollbackOptions): Promise<RollbackOutcome> {
  return run(store, 'rollback-session', options, async (s, head, steps) => {
    if (!isValidId(session)) throw new RollbackRefusedError(`invalid session id ${JSON.stringify(session)}`);
    const calls = s.history.bySession(session).filter((e) => e.toolUseId !== undefined);
    if (calls.length === 0) throw new RollbackRefusedError(`no calls of session ${session} in this store`);
    return planReverts(s, head, `rollback-session ${session}`, calls.reverse(), steps);
  });
}

export interface RestoreOptions extends RollbackOptions {
  /** Allow the restore to delete files that are there now but were not at the point (default false). */
  delete?: boolean;
}

/**
 * Put a file or directory back as it was right after a call. The path is followed back through later
 * renames (of it or of a directory above it): restoring `/memories/b.md`, renamed from `a.md` since,
 * brings back what `a.md` held then, as `b.md`. Deleting a file (a path absent then) needs `delete`.
 */
export function restore(store: RollbackPort, virtualPath: string, at: string, options: RestoreOptions): Promise<RollbackOutcome> {
  return run(store, 'restore', options, async (s, head) => {
    const resolved = resolvePath(virtualPath);
    if (!resolved.ok) throw new RollbackRefusedError(resolved.error.replace(/^Error: /, ''));
    const repoPath = toRepoPath(resolved.rel);
    const point = await resolveTarget(s, at);
    const { formerPath, touched } = followBack(repoPath, laterCommits(s, point));
    const before = await readMemoryFiles(s.objects, await s.commitTree(head));
    const then = rebase(await readMemoryFiles(s.objects, await s.commitTree(point.commit)), formerPath, repoPath);
    if (![...then.keys(), ...before.keys()].some(within(repoPath))) {
      throw new RollbackRefusedError(`nothing at ${resolved.virtual}, neither now nor after ${describeCall(point)}`);
    }
    for (let dir = repoPath.slice(0, repoPath.lastIndexOf('/')); dir.includes('/'); dir = dir.slice(0, dir.lastIndexOf('/'))) {
      if (before.has(dir)) throw new RollbackRefusedError(`cannot restore ${resolved.virtual}: /${dir} is a file now`);
    }
    const planner = new RollbackPlanner(s.objects, s.history, new Map(before));
    planner.replaceSubtree(repoPath, then);
    const renamed = formerPath !== repoPath ? ` (then /${formerPath})` : '';
    const title = `restore ${resolved.virtual} at ${describeCall(point)}${renamed}`;
    const deleted = [...before.keys()].filter((p) => within(repoPath)(p) && !isKeep(p) && !planner.files.has(p));
    if (deleted.length > 0 && options.delete !== true) {
      const names = deleted.slice(0, 5).map((p) => `/${p}`).join(', ') + (deleted.length > 5 ? ` and ${deleted.length - 5} more` : '');
      throw new RollbackRefusedError(
        `${title} would delete ${names} (not there after ${describeCall(point)}); nothing was written. ` +
          'Pass --delete (library: `delete: true`) to delete.',
      );
    }
    return { title, reverts: touched.map((e) => e.commit), conflicts: [], before, after: planner.files };
  });
}

const within = (repoPath: string) => (p: string) => p === repoPath || p.startsWith(`${repoPath}/`);

/**
 * The name `repoPath` had before `later` (newest first) renamed it or a directory above it, and the later
 * commits that touched it under any of its names.
 */
function followBack(repoPath: string, later: HistoryEntry[]): { formerPath: string; touched: HistoryEntry[] } {
  let name = repoPath;
  const touched: HistoryEntry[] = [];
  for (const entry of later) {
    const after = name;
    if (entry.command === 'rename' && entry.path && entry.newPath) {
      const from = toRepoPathOf(entry.path);
      const to = toRepoPathOf(entry.newPath);
      if (within(to)(name)) name = from + name.slice(to.length);
    } else {
      // An operator's move (a revert of a rename): a file that vanished where one with its bytes appeared.
      const move = movesOf(entry).find((m) => m.to === name);
      if (move) name = move.from;
    }
    if (entry.changes.some((c) => within(after)(c.path) || within(name)(c.path))) touched.push(entry);
  }
  return { formerPath: name, touched };
}

/**
 * The name the file at `repoPath` (as of history position `position`) has now: followed forward through
 * later renames (of it or of a directory above it) and operator moves, as `restore` follows a path back.
 * So restoring that name at any point of the file's history brings back what the file held then. A file
 * deleted since keeps the last name it had.
 */
export function currentPathOf(history: HistoryIndex, repoPath: string, position: number): string {
  let name = repoPath;
  let from = position;
  for (;;) {
    const current = name;
    // The first later commit that took the file away from this name: a rename, a move, or a deletion.
    const gone = history.byPath(current).find((e) => history.position(e.commit)! > from && e.changes.some((c) => c.path === current && !c.newOid));
    if (!gone) return current;
    let next: string | null = null;
    if (gone.command === 'rename' && gone.path && gone.newPath) {
      const moved = toRepoPathOf(gone.path);
      if (within(moved)(current)) next = toRepoPathOf(gone.newPath) + current.slice(moved.length);
    } else {
      next = movesOf(gone).find((m) => m.from === current)?.to ?? null;
    }
    if (next === null) return current; // deleted since: its last name
    name = next;
    from = history.position(gone.commit)!;
  }
}

function toRepoPathOf(virtual: string): string {
  return virtual.replace(/^\//, '');
}

/** `files` below `from`, moved to below `to` (everything else dropped: restore replaces only that subtree). */
function rebase(files: MemoryFiles, from: string, to: string): MemoryFiles {
  if (from === to) return files;
  const moved: MemoryFiles = new Map();
  for (const [p, value] of files) if (within(from)(p)) moved.set(to + p.slice(from.length), value);
  return moved;
}

/** One new commit whose memory equals the memory at a point: a tool_use id, a commit, or an ISO time. */
export function reset(store: RollbackPort, to: string, options: RollbackOptions): Promise<RollbackOutcome> {
  return run(store, 'reset', options, async (s, head) => {
    const point = await resolveTarget(s, to);
    const before = await readMemoryFiles(s.objects, await s.commitTree(head));
    const after = await readMemoryFiles(s.objects, await s.commitTree(point.commit));
    const label = isIsoTime(to) ? `${to} (${point.commit.slice(0, 12)})` : describeCall(point);
    return { title: `reset to ${label}`, reverts: laterCommits(s, point).map((e) => e.commit), conflicts: [], before, after };
  });
}

async function planReverts(store: RollbackPort, head: string, title: string, targets: HistoryEntry[], steps: PlanSteps): Promise<Plan> {
  steps.title = title;
  steps.expect(targets.length);
  const before = await readMemoryFiles(store.objects, await store.commitTree(head));
  const planner = new RollbackPlanner(store.objects, store.history, new Map(before), steps);
  const done = new Set<string>();
  for (const target of targets) {
    await steps.step();
    await planner.revert(target, done);
    done.add(target.commit);
    steps.planned++;
  }
  return { title, reverts: targets.map((t) => t.commit), conflicts: planner.conflicts, before, after: planner.files };
}

/** Commits after `point`, newest first. */
function laterCommits(store: RollbackPort, point: HistoryEntry): HistoryEntry[] {
  const from = store.history.position(point.commit)!;
  const commits: HistoryEntry[] = [];
  for (let i = store.history.size - 1; i > from; i--) commits.push(store.history.at(i)!);
  return commits;
}

/** Any point in history (see store/points.ts): a tool_use id, a commit or prefix, HEAD, HEAD~N, an ISO time. */
async function resolveTarget(store: RollbackPort, ref: string): Promise<HistoryEntry> {
  if (typeof ref !== 'string' || ref === '') throw new RollbackRefusedError('name a tool_use id, a commit, HEAD~N or an ISO time');
  return store.resolvePoint(ref);
}

async function run(store: RollbackPort, operation: RollbackOperation, options: RollbackOptions, plan: Planner): Promise<RollbackOutcome> {
  const operator = options?.operator;
  if (!isValidId(operator)) {
    throw new RollbackRefusedError(`invalid operator name ${JSON.stringify(operator)}: use 1-128 of A-Z a-z 0-9 _ . : -`);
  }
  const reason = options.reason !== undefined && oneLine(options.reason) !== '' ? oneLine(options.reason) : undefined;
  if (options.key !== undefined && !(typeof options.key === 'string' && KEY_ID_PATTERN.test(options.key))) {
    throw new RollbackRefusedError(`invalid key id ${JSON.stringify(options.key)}`);
  }
  const actor = `operator:${operator}`;
  const checkHead = (head: string) => {
    if (options.expectHead !== undefined && options.expectHead !== head) throw new StaleHeadError(options.expectHead, head);
  };
  if (options.dryRun) {
    const head = await store.refreshHead();
    checkHead(head);
    const steps = new PlanSteps(options.budget);
    try {
      const planned = await finish(store, plan, head, steps);
      return await outcome(store, operation, planned, head, null, actor, reason, 'preview', steps);
    } catch (error) {
      if (!(error instanceof PlanStopped)) throw error;
      return stoppedOutcome(operation, steps.title || operation, head, actor, reason, error.stop);
    }
  }
  // A commit is planned in full (paced, so the process keeps answering); only its patches are bounded.
  const steps = new PlanSteps(options.budget && { spent: false, patchChars: options.budget.patchChars, maxEditLength: options.budget.maxEditLength });
  // The plan made under the lock, against the HEAD the commit goes on (kept for the outcome).
  const made: { plan?: Plan; head?: string } = {};
  const { commit } = await store.writeCommit(async (head) => {
    checkHead(head);
    const p = await finish(store, plan, head, steps);
    Object.assign(made, { plan: p, head });
    if (p.conflicts.length || !changed(p)) return null;
    const meta: CommitMeta = { title: p.title, actor, reverts: p.reverts, reason, ...(options.key !== undefined ? { key: options.key } : {}) };
    const previousTree = (await store.objects.entryAt(await store.commitTree(head), MEMORY_REPO_ROOT))?.oid ?? null;
    return { memoryTree: await writeMemoryTree(store.objects, p.after, previousTree), meta, value: null };
  });
  return outcome(store, operation, made.plan!, made.head!, commit, actor, reason, 'committed', steps);
}

function stoppedOutcome(operation: RollbackOperation, title: string, head: string, actor: string, reason: string | undefined, stop: RollbackStop): RollbackOutcome {
  return { operation, status: 'stopped', title, head, commit: null, reverts: [], actor, reason: reason ?? null, conflicts: [], files: [], patch: '', patchCut: false, stopped: stop };
}

async function finish(store: RollbackPort, plan: Planner, head: string, steps: PlanSteps): Promise<Plan> {
  const p = await plan(store, head, steps);
  const keepOid = await store.objects.hashBlob(new Uint8Array(0));
  normaliseKeeps(p.after, keepOid);
  return p;
}

function changed(p: Plan): boolean {
  if (p.before.size !== p.after.size) return true;
  for (const [path, value] of p.after) {
    const old = p.before.get(path);
    if (!old || old.oid !== value.oid || old.mode !== value.mode) return true;
  }
  return false;
}

async function outcome(
  store: RollbackPort,
  operation: RollbackOperation,
  p: Plan,
  head: string,
  commit: string | null,
  actor: string,
  reason: string | undefined,
  success: 'committed' | 'preview',
  steps: PlanSteps,
): Promise<RollbackOutcome> {
  const status = p.conflicts.length ? 'conflict' : changed(p) ? success : 'unchanged';
  const files = status === 'conflict' ? [] : await fileDiffsOf(store, p, steps);
  return {
    operation,
    status,
    title: p.title,
    head,
    commit: status === 'committed' ? commit : null,
    reverts: p.reverts,
    actor,
    reason: reason ?? null,
    conflicts: p.conflicts,
    files,
    patch: files.map((f) => f.patch).join(''),
    patchCut: files.some((f) => f.cut === true),
    stopped: null,
  };
}

/** Both contents of each planned file change, for renderers (kept out of the outcome's JSON). */
const contents = new WeakMap<RollbackFileDiff, { before: string; after: string }>();

export function contentsOf(file: RollbackFileDiff): { before: string; after: string } | undefined {
  return contents.get(file);
}

/**
 * What the plan changes in memory files, with moves paired by content, as unified diffs. Patches stop
 * at the budget's `patchChars` (or, for a dry run, its time): the files after are listed without their
 * patch and their contents are not read.
 */
async function fileDiffsOf(store: RollbackPort, p: Plan, steps: PlanSteps): Promise<RollbackFileDiff[]> {
  const text = (files: MemoryFiles, path: string) => {
    const value = files.get(path);
    return value?.text ?? blobText(store.objects, value?.oid ?? null);
  };
  const paths = [...new Set([...p.before.keys(), ...p.after.keys()])].filter(isMemoryFile).sort();
  const removed = paths.filter((x) => p.before.has(x) && !p.after.has(x));
  const added = paths.filter((x) => !p.before.has(x) && p.after.has(x));
  // Files by content, so that pairing a removed file with an added twin costs no search of every file.
  const group = (list: string[], files: MemoryFiles) => {
    const byOid = new Map<string, string[]>();
    for (const x of list) {
      const oid = files.get(x)!.oid;
      const same = byOid.get(oid);
      if (same) same.push(x);
      else byOid.set(oid, [x]);
    }
    return byOid;
  };
  const removedByOid = group(removed, p.before);
  const addedByOid = group(added, p.after);
  const paired = new Set<string>();
  const diffs: FileDiff[] = [];
  for (const gone of removed) {
    const oid = p.before.get(gone)!.oid;
    const twins = (addedByOid.get(oid) ?? []).filter((a) => !paired.has(a));
    if (twins.length === 1 && removedByOid.get(oid)!.length === 1) {
      paired.add(twins[0]);
      diffs.push({ status: 'renamed', oldPath: `/${gone}`, newPath: `/${twins[0]}`, oldOid: oid, newOid: oid });
    } else {
      diffs.push({ status: 'deleted', oldPath: `/${gone}`, newPath: null, oldOid: oid, newOid: null });
    }
  }
  for (const path of paths) {
    const old = p.before.get(path);
    const now = p.after.get(path);
    if (old && now && old.oid !== now.oid) diffs.push({ status: 'modified', oldPath: `/${path}`, newPath: `/${path}`, oldOid: old.oid, newOid: now.oid });
    else if (!old && now && !paired.has(path)) diffs.push({ status: 'added', oldPath: null, newPath: `/${path}`, oldOid: null, newOid: now.oid });
  }
  diffs.sort((a, b) => ((a.newPath ?? a.oldPath)! < (b.newPath ?? b.oldPath)! ? -1 : 1));
  const result: RollbackFileDiff[] = [];
  let left = steps.patchChars;
  for (const d of diffs) {
    if (left <= 0 || steps.spent) {
      result.push({ ...d, patch: '', cut: true });
      continue;
    }
    await steps.pace();
    const before = d.oldPath ? await text(p.before, d.oldPath.slice(1)) : '';
    const after = d.newPath ? await text(p.after, d.newPath.slice(1)) : '';
    const patch = unifiedTextDiffWithin(d, before, after, steps.maxEditLength);
    if (patch === null) {
      result.push({ ...d, patch: '', cut: true, tooLarge: true });
      continue;
    }
    const file: RollbackFileDiff = { ...d, patch: patch.endsWith('\n') ? patch : `${patch}\n` };
    left -= file.patch.length;
    contents.set(file, { before, after });
    result.push(file);
  }
  return result;
}
