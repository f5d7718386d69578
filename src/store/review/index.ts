import * as fs from 'node:fs';
import type { Detection, ProposedWrite } from '../../detect';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import type { CommandOutcome } from '../../contract/types';
import { CommitMeta, oneLine, parseCommitMessage } from '../commit-message';
import { ReadOnlyStoreError, ReviewNotFoundError, ReviewRefusedError, StoreCorruptError } from '../errors';
import { repoPathToVirtual } from '../git-reader';
import { makeEntry, type HistoryEntry } from '../history-index';
import { diffTrees } from '../objects';
import { threeWayMerge } from '../rollback/merge';
import { isKeep, normaliseKeeps, readMemoryFiles, writeMemoryTree, type MemoryFiles } from '../rollback/memory-state';
import { withMemoryTree } from '../tree-draft';
import type { ChainStep } from '../write-protocol';
import { dreamCompleted } from '../dream/records';
import { archiveRef, branchRef, dreamRef, dreamReviewId, dreamSession, REVIEW_ID_PATTERN, reviewId } from './names';
import { DEFAULT_POLICY, policyFile, readPolicyRecord, updatedRecord, writePolicyRecord, type PolicyRecord, type PolicyUpdate, type ReviewPolicy } from './policy';
import type { ReviewPort } from './port';
import { dreamBranches, readRef, reviewArchives, reviewBranches } from './refs';

/**
 * The detectors, loaded on first use: only a store whose review policy is `flagged` runs them, on a write
 * or a review's page, and every `memgit` command would otherwise pay for loading their rules at start.
 */
let loadedDetectors: typeof import('../../detect') | undefined;
const detectors = (): typeof import('../../detect') => (loadedDetectors ??= require('../../detect') as typeof import('../../detect'));

/**
 * Review before trust (issue 27). A write the store's policy holds is committed, through the one write
 * protocol, to its session's branch `refs/heads/review/<session>` (forked from main at the session's first
 * held write) instead of main; the session's later writes follow it there and its reads see it, every
 * other session and HEAD read main. An operator approves a review (each call replayed onto main as its own
 * commit, all in one write, or nothing when any call conflicts with main now) or rejects it; either way
 * the branch is archived on `refs/memgit/reviews/<id>` (a decision commit on top of its tip) and removed.
 */

export { REVIEW_MODES, DEFAULT_POLICY, policyFile } from './policy';
export type { ReviewMode, ReviewPolicy, PolicyChange, PolicyRecord, PolicyUpdate } from './policy';
export { branchRef, archiveRef, encodeSession, decodeSession, reviewId, REVIEW_BRANCH_PREFIX, REVIEW_ARCHIVE_PREFIX, REVIEW_ID_PATTERN } from './names';
export { dreamRef, dreamSession, dreamReviewId, DREAM_BRANCH_PREFIX, DREAM_ID_PATTERN } from './names';
export type { ReviewPort } from './port';
export { reviewBranches, reviewArchives } from './refs';

export type ReviewState = 'pending' | 'approved' | 'rejected';

/** One held call: the commit it made on its review branch. */
export interface ReviewCall {
  toolUseId: string;
  commit: string;
  parent: string;
  /** Commit time, seconds since the epoch. */
  time: number;
  command: string | null;
  path: string | null;
  newPath: string | null;
  session: string | null;
  key: string | null;
  /** A decided review: the commit on main this call was approved as (null: not approved). */
  approvedAs?: string | null;
}

export interface ReviewDecision {
  state: 'approved' | 'rejected';
  /** Seconds since the epoch. */
  time: number;
  operator: string | null;
  reason: string | null;
  /** The archive's decision commit. */
  commit: string;
}

export interface ReviewSummary {
  id: string;
  session: string;
  state: ReviewState;
  /** The commit of main the branch forked from. */
  fork: string;
  /** The last held call's commit. */
  tip: string;
  /** `refs/heads/review/<session>` while pending, else null. */
  branch: string | null;
  /** `refs/memgit/reviews/<id>` once decided, else null. */
  archive: string | null;
  calls: ReviewCall[];
  decision: ReviewDecision | null;
  /** A dream's review (issue 28): the dream whose branch `refs/heads/dream/<id>` it is. */
  dream?: string;
}

export interface ReviewCallDetail extends ReviewCall {
  /** The files the call changed, with their text before and after it. */
  files: ProposedWrite['files'];
  /** What the detectors say of the call (recomputed: they are pure). */
  detection: Detection;
  /** Pending reviews: whether the call, after those before it, still applies cleanly to main now. */
  applies: boolean | null;
}

export interface ReviewDetail extends Omit<ReviewSummary, 'calls'> {
  calls: ReviewCallDetail[];
}

export interface DecideOptions {
  operator?: string;
  reason?: string;
  /** approve only: the tool_use ids of the calls to approve (default all); the others are rejected with the review. */
  calls?: string[];
}

export interface ApproveOutcome {
  review: ReviewSummary;
  /** The commits written on main, one per approved call, oldest first. */
  commits: string[];
}

/** What the write path learns of a session before a write: its pending review branch, if any. */
export interface PendingBranch {
  ref: string;
  tip: string;
}

function metaOf(message: string): CommitMeta {
  return parseCommitMessage(message);
}

/** The calls of a branch from `tip` back to the commit of main it forked from (oldest first). */
async function walkBranch(port: ReviewPort, tip: string): Promise<{ fork: string; calls: ReviewCall[] }> {
  const calls: ReviewCall[] = [];
  let cursor = tip;
  for (let guard = 0; port.history.position(cursor) === undefined; guard++) {
    const { commit } = await port.objects.readCommit(cursor);
    const parent = commit.parent[0];
    if (!parent || guard > 1_000_000) throw new StoreCorruptError(`review commit ${cursor.slice(0, 12)} does not descend from main`);
    const meta = metaOf(commit.message);
    calls.push({
      toolUseId: meta.title,
      commit: cursor,
      parent,
      time: commit.committer.timestamp,
      command: meta.command ?? null,
      path: meta.path ?? null,
      newPath: meta.newPath ?? null,
      session: meta.session ?? null,
      key: meta.key ?? null,
    });
    cursor = parent;
  }
  return { fork: cursor, calls: calls.reverse() };
}

/** The entry a held call would have in the history index (for a retry of its tool_use id). */
async function entryOf(port: ReviewPort, call: ReviewCall): Promise<HistoryEntry> {
  const { commit } = await port.objects.readCommit(call.commit);
  const changes = await diffTrees(port.objects, await port.commitTree(call.parent), commit.tree);
  return makeEntry(call.commit, call.parent, call.time, metaOf(commit.message), changes, commit.tree);
}

/** A pending review (a branch) as a summary. */
async function pendingSummary(port: ReviewPort, branch: { ref: string; session: string; tip: string; dream?: string }): Promise<ReviewSummary> {
  const { fork, calls } = await walkBranch(port, branch.tip);
  const id = branch.dream !== undefined ? dreamReviewId(branch.dream, fork) : reviewId(branch.session, fork);
  return { id, session: branch.session, state: 'pending', fork, tip: branch.tip, branch: branch.ref, archive: null, calls, decision: null, ...(branch.dream !== undefined ? { dream: branch.dream } : {}) };
}

/** A decided review (an archive ref on its decision commit) as a summary. */
async function archivedSummary(port: ReviewPort, archive: { ref: string; id: string; commit: string }): Promise<ReviewSummary | null> {
  const { commit } = await port.objects.readCommit(archive.commit);
  const meta = metaOf(commit.message);
  const tip = commit.parent[0];
  if (!tip || (meta.reviewState !== 'approved' && meta.reviewState !== 'rejected')) return null;
  const { fork, calls } = await walkBranch(port, tip);
  for (const call of calls) {
    const onMain = port.history.byToolUseId(call.toolUseId);
    call.approvedAs = onMain && onMain.review === archive.id ? onMain.commit : null;
  }
  return {
    id: archive.id,
    session: meta.session ?? '',
    state: meta.reviewState,
    fork,
    tip,
    branch: null,
    archive: archive.ref,
    calls,
    decision: { state: meta.reviewState, time: commit.committer.timestamp, operator: meta.actor ?? null, reason: meta.reason ?? null, commit: archive.commit },
    ...(meta.dream !== undefined ? { dream: meta.dream } : {}),
  };
}

/** Every review of the store, pending first (oldest call first), then decided (newest decision first). */
export async function listReviews(port: ReviewPort): Promise<ReviewSummary[]> {
  await port.refreshHead();
  const pending: ReviewSummary[] = [];
  for (const branch of await reviewBranches(port.durableFs, port.gitdir)) pending.push(await pendingSummary(port, branch));
  // A dream's branch is a review once its dream completed, with at least one call (src/store/dream).
  for (const branch of await dreamBranches(port.durableFs, port.gitdir)) {
    if (!dreamCompleted(port.gitdir, branch.dream)) continue;
    const summary = await pendingSummary(port, { ...branch, session: dreamSession(branch.dream) });
    if (summary.calls.length) pending.push(summary);
  }
  const decided: ReviewSummary[] = [];
  const pendingIds = new Set(pending.map((r) => r.id));
  for (const archive of await reviewArchives(port.durableFs, port.gitdir)) {
    if (pendingIds.has(archive.id)) continue; // an approval interrupted before its branch went: still pending
    const summary = await archivedSummary(port, archive);
    if (summary) decided.push(summary);
  }
  pending.sort((a, b) => (a.calls[0]?.time ?? 0) - (b.calls[0]?.time ?? 0));
  decided.sort((a, b) => (b.decision?.time ?? 0) - (a.decision?.time ?? 0));
  return [...pending, ...decided];
}

async function findReview(port: ReviewPort, id: string): Promise<ReviewSummary> {
  if (typeof id !== 'string' || !REVIEW_ID_PATTERN.test(id)) throw new ReviewNotFoundError(String(id).slice(0, 40));
  const found = (await listReviews(port)).find((r) => r.id === id);
  if (!found) throw new ReviewNotFoundError(id);
  return found;
}

async function textOf(port: ReviewPort, oid: string | null): Promise<string | null> {
  return oid === null ? null : Buffer.from(await port.objects.readBlob(oid)).toString('utf8');
}

/** The files a call changed (memory files only, placeholders left out), with text before and after. */
async function callFiles(port: ReviewPort, call: ReviewCall): Promise<ProposedWrite['files']> {
  const changes = await diffTrees(port.objects, await port.commitTree(call.parent), await port.commitTree(call.commit));
  const files: ProposedWrite['files'] = [];
  for (const c of changes) {
    if (!c.path.startsWith(`${MEMORY_REPO_ROOT}/`) || isKeep(c.path)) continue;
    files.push({ path: repoPathToVirtual(c.path), before: await textOf(port, c.oldOid), after: await textOf(port, c.newOid) });
  }
  return files;
}

/** One review with each call's files, findings and, while pending, whether it still applies to main. */
export async function showReview(port: ReviewPort, id: string): Promise<ReviewDetail> {
  const review = await findReview(port, id);
  const policy = readPolicyRecord(port.gitdir).policy;
  let applies: Map<string, boolean> | null = null;
  if (review.state === 'pending') {
    const head = await port.refreshHead();
    applies = (await planApproval(port, head, review.calls)).applies;
  }
  const calls: ReviewCallDetail[] = [];
  for (const call of review.calls) {
    const files = await callFiles(port, call);
    const write: ProposedWrite = { command: (call.command ?? 'create') as ProposedWrite['command'], path: call.path ?? '/memories', ...(call.newPath ? { newPath: call.newPath } : {}), files };
    const detection = await detectors().detectWriteWithSecrets(write, (text) => port.scanSecrets(text), { secretsHold: policy.secretsHold, personalData: policy.personalData });
    calls.push({ ...call, files, detection, applies: applies ? (applies.get(call.commit) ?? false) : null });
  }
  return { ...review, calls };
}

interface ApprovalPlan {
  /** Each call's memory tree on main, in order (only for calls that apply). */
  steps: Array<{ call: ReviewCall; memoryTree: string | null }>;
  applies: Map<string, boolean>;
  conflicts: Array<{ toolUseId: string; commit: string; paths: string[] }>;
}

/**
 * Replay `calls` in order onto main's memory at `head`, file by file with the line-level three-way merge
 * revert uses (base: the file before the call; theirs: after it; ours: main now, with the calls before
 * it). A file main changed in a way that does not merge is a conflict of that call.
 */
async function planApproval(port: ReviewPort, head: string, calls: ReviewCall[], write = false): Promise<ApprovalPlan> {
  const { objects } = port;
  const headTree = await port.commitTree(head);
  const files: MemoryFiles = await readMemoryFiles(objects, headTree);
  const keepOid = write ? await objects.writeBlob(new Uint8Array(0)) : await objects.hashBlob(new Uint8Array(0));
  let previousMemory = (await objects.entryAt(headTree, MEMORY_REPO_ROOT))?.oid ?? null;
  const plan: ApprovalPlan = { steps: [], applies: new Map(), conflicts: [] };
  for (const call of calls) {
    const changes = await diffTrees(objects, await port.commitTree(call.parent), await port.commitTree(call.commit));
    const conflicted: string[] = [];
    const next: MemoryFiles = new Map(files);
    for (const c of changes) {
      if (!c.path.startsWith(`${MEMORY_REPO_ROOT}/`) || isKeep(c.path)) continue;
      const current = files.get(c.path);
      // A text merged for an earlier call of a dry run has no blob: its hash stands for it.
      const ours = current ? (current.text !== undefined ? await objects.hashBlob(Buffer.from(current.text, 'utf8')) : current.oid) : null;
      if (ours === c.newOid) continue; // main already has what the call wrote
      if (ours === c.oldOid) {
        if (c.newOid === null) next.delete(c.path);
        else next.set(c.path, { oid: c.newOid, mode: '100644' });
        continue;
      }
      if (ours !== null && c.oldOid !== null && c.newOid !== null) {
        const mine = current?.text ?? (await textOf(port, ours));
        const [base, theirs] = await Promise.all([textOf(port, c.oldOid), textOf(port, c.newOid)]);
        const merged = threeWayMerge(base!, mine!, theirs!);
        if (merged.clean) {
          next.set(c.path, { oid: '', mode: '100644', text: merged.text });
          continue;
        }
      }
      conflicted.push(repoPathToVirtual(c.path));
    }
    plan.applies.set(call.commit, conflicted.length === 0);
    if (conflicted.length) {
      plan.conflicts.push({ toolUseId: call.toolUseId, commit: call.commit, paths: conflicted });
      continue;
    }
    files.clear();
    for (const [p, v] of next) files.set(p, v);
    if (!write) continue; // a dry run (showReview) writes no object
    // Merged texts are written once, so the next call merges against blobs.
    for (const [p, v] of files) {
      if (v.text !== undefined) files.set(p, { oid: await objects.writeBlob(Buffer.from(v.text, 'utf8')), mode: v.mode });
    }
    normaliseKeeps(files, keepOid);
    const memoryTree = await writeMemoryTree(objects, files, previousMemory);
    previousMemory = memoryTree;
    plan.steps.push({ call, memoryTree });
  }
  return plan;
}

/**
 * Finish an approval or rejection a crash interrupted after main moved (or after the archive was
 * written) but before the branch went: under the lock, for the reviews whose decision is already on
 * record. Returns true when something was finished.
 */
async function finishInterrupted(port: ReviewPort, review: ReviewSummary): Promise<boolean> {
  const archived = readRef(port.gitdir, archiveRef(review.id));
  if (archived) {
    const { commit } = await port.objects.readCommit(archived);
    if (commit.parent[0] === review.tip) {
      await port.deleteRef(review.branch!);
      return true;
    }
  }
  const approved = review.calls.some((c) => port.history.byToolUseId(c.toolUseId)?.review === review.id);
  if (!approved) return false;
  await archive(port, review, 'approved', { operator: 'memgit', reason: 'an approval interrupted after main moved, finished' });
  return true;
}

async function archive(port: ReviewPort, review: ReviewSummary, state: 'approved' | 'rejected', options: DecideOptions): Promise<string> {
  const tipTree = await port.commitTree(review.tip);
  const meta: CommitMeta = {
    title: `review ${review.id} ${state}`,
    review: review.id,
    reviewState: state,
    session: review.session,
    actor: oneLine(options.operator ?? 'operator', 100) || 'operator',
    ...(options.reason && oneLine(options.reason) ? { reason: oneLine(options.reason) } : {}),
    ...(review.dream !== undefined ? { dream: review.dream } : {}),
  };
  const { commits } = await port.commitOn(archiveRef(review.id), review.tip, async () => ({ chain: [{ tree: tipTree, meta }], value: null }));
  await port.deleteRef(review.branch!);
  return commits[0];
}

/** The pending review `id`, current and under the lock, or a refusal (decided, unknown, or just finished). */
async function pendingUnderLock(port: ReviewPort, id: string): Promise<ReviewSummary> {
  const review = await findReview(port, id);
  if (review.state !== 'pending') throw new ReviewRefusedError(`review ${id} was already ${review.state}; nothing was changed`);
  if (await finishInterrupted(port, review)) throw new ReviewRefusedError(`review ${id} was already decided (an interrupted decision was finished now); nothing else was changed`);
  return review;
}

/**
 * Approve a pending review: each (selected) call becomes its own commit on main, subject its tool_use id,
 * with `Memory-Review`, `Memory-Approved-By` and `Memory-Original` trailers — all in one write, the branch
 * moving once. A call that no longer applies refuses the whole approval (ReviewRefusedError, nothing
 * written). Then the branch is archived (approved) and removed; calls not selected stay only there.
 */
export async function approveReview(port: ReviewPort, id: string, options: DecideOptions = {}): Promise<ApproveOutcome> {
  if (port.readOnly) throw new ReadOnlyStoreError();
  return port.exclusive(async () => {
    const review = await pendingUnderLock(port, id);
    let calls = review.calls;
    if (options.calls !== undefined) {
      const wanted = new Set(options.calls);
      const unknown = [...wanted].filter((c) => !review.calls.some((call) => call.toolUseId === c));
      if (unknown.length) throw new ReviewRefusedError(`review ${id} has no call ${JSON.stringify(unknown[0]).slice(0, 140)}; nothing was changed`);
      if (wanted.size === 0) throw new ReviewRefusedError('no calls selected; nothing was changed (reject the review instead)');
      calls = review.calls.filter((c) => wanted.has(c.toolUseId));
    }
    const head = await port.refreshHead();
    const operator = oneLine(options.operator ?? 'operator', 100) || 'operator';
    const { commits } = await port.commitOn(`refs/heads/main`, head, async () => {
      const plan = await planApproval(port, head, calls, true);
      if (plan.conflicts.length) {
        const first = plan.conflicts[0];
        throw new ReviewRefusedError(
          `review ${id} cannot be approved: call ${first.toolUseId} no longer applies to main (${first.paths.join(', ')} changed since)` +
            `${plan.conflicts.length > 1 ? ` and ${plan.conflicts.length - 1} more call(s) conflict` : ''}; nothing was written`,
          plan.conflicts,
        );
      }
      const chain: ChainStep[] = [];
      let tree = await port.commitTree(head);
      for (const { call, memoryTree } of plan.steps) {
        const { commit } = await port.objects.readCommit(call.commit);
        const original = metaOf(commit.message);
        tree = await withMemoryTree(port.objects, tree, memoryTree);
        chain.push({ tree, meta: { ...original, review: id, approvedBy: operator, original: call.commit } });
      }
      return { chain, value: null };
    });
    const decided = await archive(port, review, 'approved', { ...options, operator });
    const summary = await archivedSummary(port, { ref: archiveRef(id), id, commit: decided });
    return { review: summary!, commits };
  });
}

/** Reject a pending review: archive its branch (rejected) and remove it. Main does not change. */
export async function rejectReview(port: ReviewPort, id: string, options: DecideOptions = {}): Promise<ReviewSummary> {
  if (port.readOnly) throw new ReadOnlyStoreError();
  return port.exclusive(async () => {
    const review = await pendingUnderLock(port, id);
    const decided = await archive(port, review, 'rejected', options);
    return (await archivedSummary(port, { ref: archiveRef(id), id, commit: decided }))!;
  });
}

/** The store's review policy and its audit trail. */
export function reviewPolicy(port: Pick<ReviewPort, 'gitdir'>): PolicyRecord {
  return readPolicyRecord(port.gitdir);
}

/** Change the policy (checked first: bad input changes nothing), with an audit record, under the write lock. */
export async function setReviewPolicy(port: ReviewPort, update: PolicyUpdate): Promise<{ record: PolicyRecord; changed: boolean }> {
  if (port.readOnly) throw new ReadOnlyStoreError();
  updatedRecord(readPolicyRecord(port.gitdir), update, port.now()); // refuse bad input before taking the lock
  return port.exclusive(async () => {
    const result = updatedRecord(readPolicyRecord(port.gitdir), update, port.now());
    if (result.changed) await writePolicyRecord(port.durableFs, port.gitdir, result.record);
    return result;
  });
}

/**
 * The write path's side of review (execute.ts), run under the write lock: where a session's writes go,
 * whether a new write is held, and a retried tool_use id among held calls.
 */
export class ReviewGate {
  constructor(private readonly port: ReviewPort) {}

  /** The session's pending branch (read-your-writes: its calls read and write there), or null. */
  pendingBranch(session: string): PendingBranch | null {
    const ref = branchRef(session);
    const tip = readRef(this.port.gitdir, ref);
    return tip ? { ref, tip } : null;
  }

  /**
   * Under the lock, before a write: the session's pending branch, with its review id and the held call
   * of `toolUseId` (a retry), or null. A branch whose decision a crash left unfinished is finished first.
   */
  async branchForWrite(session: string, toolUseId: string): Promise<{ ref: string; tip: string; id: string; previous: HistoryEntry | null } | null> {
    const pending = this.pendingBranch(session);
    if (!pending) return null;
    const { fork, calls } = await walkBranch(this.port, pending.tip);
    const id = reviewId(session, fork);
    const summary: ReviewSummary = { id, session, state: 'pending', fork, tip: pending.tip, branch: pending.ref, archive: null, calls, decision: null };
    if (await finishInterrupted(this.port, summary)) return null;
    const held = calls.find((c) => c.toolUseId === toolUseId);
    return { ref: pending.ref, tip: pending.tip, id, previous: held ? await entryOf(this.port, held) : null };
  }

  /** The server key of a pending branch's calls (its tip's `Memory-Key`; a session keeps one key). */
  async keyOf(tip: string): Promise<string | undefined> {
    const { commit } = await this.port.objects.readCommit(tip);
    return metaOf(commit.message).key;
  }

  /**
   * A dream's call (src/store/dream), under the lock: the dream's branch (forked from main when the
   * dream began), its review id, and the call of `toolUseId` already on it (a retry), or null when the
   * branch is gone (its review decided).
   */
  async dreamBranchForWrite(dream: string, toolUseId: string): Promise<{ ref: string; tip: string; id: string; previous: HistoryEntry | null } | null> {
    const ref = dreamRef(dream);
    const tip = readRef(this.port.gitdir, ref);
    if (!tip) return null;
    const { fork, calls } = await walkBranch(this.port, tip);
    const held = calls.find((c) => c.toolUseId === toolUseId);
    return { ref, tip, id: dreamReviewId(dream, fork), previous: held ? await entryOf(this.port, held) : null };
  }

  /** The tip of a dream's branch (what its calls read), or null. */
  dreamTip(dream: string): string | null {
    return readRef(this.port.gitdir, dreamRef(dream));
  }

  /** The review id of a session's pending branch (for a read's report), or null. */
  async reviewIdOf(session: string, tip: string): Promise<string> {
    return reviewId(session, (await walkBranch(this.port, tip)).fork);
  }

  /**
   * The store's policy, as another process may have just set it (`memgit policy` while a server runs). Every
   * write asks: a stat answers, and the file is read and parsed again only when it changed (a write of it
   * is a rename, so a new inode).
   */
  policy(): ReviewPolicy {
    const stat = fs.statSync(policyFile(this.port.gitdir), { throwIfNoEntry: false });
    if (!stat) return { ...DEFAULT_POLICY };
    const version = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    if (this.policyRead?.version !== version) this.policyRead = { version, policy: readPolicyRecord(this.port.gitdir).policy };
    return { ...this.policyRead.policy };
  }

  private policyRead: { version: string; policy: ReviewPolicy } | null = null;

  /**
   * Should this write (the contract's outcome, `before` reading the memory before it) be held? `all`
   * holds every write; `flagged` runs the detectors (the rules, and the secret scanner when secrets hold).
   */
  async holds(policy: ReviewPolicy, outcome: CommandOutcome, before: Parameters<typeof import('../../detect').proposedWrite>[1]): Promise<Detection | true | null> {
    if (policy.review === 'off') return null;
    if (policy.review === 'all') return true;
    const { proposedWrite, detectWrite, detectWriteWithSecrets } = detectors();
    const write = await proposedWrite(outcome, before);
    const detection = policy.secretsHold
      ? await detectWriteWithSecrets(write, (text) => this.port.scanSecrets(text), { secretsHold: true, personalData: policy.personalData })
      : detectWrite(write, { personalData: policy.personalData });
    return detection.verdict === 'hold' ? detection : null;
  }
}
