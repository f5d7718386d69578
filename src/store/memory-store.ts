import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import git from 'isomorphic-git';
import type { ContractOptions } from '../contract/types';
import { BackgroundJobs } from './background';
import type { CacheBudget } from './cache-budget';
import { CallLog, callEntry, DEFAULT_CALL_LOG_MAX_ENTRIES } from './call-log';
import type { CommitMeta } from './commit-message';
import { DIR_MODE, DurableFs } from './durable-fs';
import { ReadOnlyStoreError, StoreClosedError } from './errors';
import { CallExecutor } from './execute';
import { FlagIndex } from './flags';
import { GcOptions, GcReport, repack } from './gc';
import type { GitTreeReader } from './git-reader';
import { HistoryEntry, HistoryIndex } from './history-index';
import { lookupPoint, lookupRef } from './lookup';
import { ObjectStore } from './objects';
import {
  checkedClock,
  checkStoreOptions,
  DEFAULT_AUTHOR,
  DEFAULT_AUTO_GC_LOOSE_OBJECTS,
  DEFAULT_MAX_FILE_BYTES,
  DEFAULT_REPLICATION_FLUSH_MS,
  stderrLog,
} from './options';
import { PortParts, redactionPort, replicationPort, reviewPort, rollbackPort } from './ports';
import * as review from './review';
import * as dreams from './dream';
import type { DreamRecord, DreamRequest, DreamUsage } from './dream';
import type { ApproveOutcome, DecideOptions, PolicyRecord, PolicyUpdate, ReviewDetail, ReviewPort, ReviewSummary } from './review';
import * as redaction from './redaction';
import type { RedactionLog, RedactionOutcome, RedactionPort, RedactOptions } from './redaction';
import type { ReplicationPort } from './replication';
import { configFlag } from './repo-config';
import type { RefKind } from './resolve-ref';
import * as rollback from './rollback';
import type { RestoreOptions, RollbackOptions, RollbackOutcome, RollbackPort } from './rollback';
import { createMemoryTool, MemoryToolCallHook, MemoryToolOptions, RunnableMemoryTool, ToolErrorClass } from './sdk-tool';
import { inspectStoreDir, tightenPermissions, writeMarker } from './store-guard';
import { NewTimelineEvent, Timeline, TimelineRecord } from './timeline';
import { TreeCache } from './tree-cache';
import { withMemoryTree } from './tree-draft';
import type { Author, CommitStep, ExecuteContext, ExecuteOptions, ExecutionReport, StoreOptions, ToolResult } from './types';
import { Worktree } from './worktree';
import { WriteLock } from './write-lock';
import { ChainStep, WriteProtocol } from './write-protocol';

// The types of MemoryStore's own signatures and its defaults, for whoever imports the class from here
// (src/index.ts and the edges import them from the front door, index.ts).
export type { Author, CommitStep, ExecuteContext, ExecuteOptions, ExecutionReport, MemoryToolUse, StoreOptions, ToolResult } from './types';
export { DEFAULT_AUTHOR, DEFAULT_MAX_FILE_BYTES } from './options';

/**
 * A memory store: a git repository whose `memories/` tree is Claude's `/memories`.
 *
 * Writes are serialised (within the process and across processes), each successful mutation is one
 * commit written from objects, and the working tree is kept equal to HEAD. Reads come from HEAD's tree.
 *
 * This file is the hub: it opens a store and wires its parts, and each of its methods is a thin door to
 * one of them — the call path (execute.ts), the crash-safe write protocol and its recovery
 * (write-protocol.ts), option checks (options.ts), the SDK's tool (sdk-tool.ts), points in history
 * (lookup.ts), the ports of rollback, redaction and replication (ports.ts), and the work done after a call
 * is acknowledged (background.ts).
 */
export class MemoryStore {
  readonly dir: string;
  readonly gitdir: string;
  readonly objects: ObjectStore;
  readonly history: HistoryIndex;
  /** The memory budget this store's caches share with other stores (memgit server), if any; the read model's caches of the store draw on it too. */
  readonly cacheBudget: CacheBudget | undefined;
  /** What happened to the agent's context beside its memory calls (compaction summaries, clears): see timeline.ts. */
  readonly timeline: Timeline;
  /** Every answered call, reads and failures included (call-log.ts). */
  readonly callLog: CallLog;
  /** Calls flagged for likely secrets or personal data (src/store/flags). */
  readonly flags: FlagIndex;
  /** A clone made by `memgit clone` for auditing (config memgit.readonly): every write is refused. */
  readOnly = false;
  private readonly durableFs: DurableFs;
  private readonly worktree: Worktree;
  private readonly lock: WriteLock;
  private readonly trees: TreeCache;
  private readonly protocol: WriteProtocol;
  private readonly calls: CallExecutor;
  private readonly jobs: BackgroundJobs;
  private readonly author: Author;
  private readonly now: () => number;
  private readonly log: (message: string) => void;
  private readonly replicationFlushMs: number;
  private closed = false;

  /** The SDK ToolError copy the runnable tool throws (see sdk-tool.ts; the ESM entry overrides it). */
  protected static toolError: ToolErrorClass = ToolError;

  protected constructor(dir: string, options: StoreOptions) {
    this.dir = dir;
    this.gitdir = path.join(dir, '.git');
    this.author = options.author ?? DEFAULT_AUTHOR;
    this.now = checkedClock(options.clock);
    this.log = options.log ?? stderrLog;
    this.replicationFlushMs = options.replicationFlushMs ?? DEFAULT_REPLICATION_FLUSH_MS;
    this.durableFs = new DurableFs({ fsync: options.fsync ?? true });
    this.objects = new ObjectStore(this.durableFs, this.gitdir, options.cacheBudget);
    this.cacheBudget = options.cacheBudget;
    this.history = new HistoryIndex(this.objects, this.gitdir);
    this.timeline = new Timeline(this.gitdir, { fsync: options.fsync ?? true });
    this.callLog = new CallLog(this.gitdir, options.callLogMaxEntries ?? DEFAULT_CALL_LOG_MAX_ENTRIES);
    this.worktree = new Worktree(dir, this.gitdir, this.durableFs, this.objects);
    this.lock = new WriteLock(path.join(this.gitdir, 'memgit-write'), {
      staleMs: options.lockStaleMs,
      timeoutMs: options.lockTimeoutMs,
      log: (message) => this.log(message),
    });
    this.trees = new TreeCache(this.objects);
    this.jobs = new BackgroundJobs({
      gitdir: this.gitdir,
      gitFs: this.durableFs.gitFs,
      autoGcLooseObjects: options.autoGcLooseObjects ?? DEFAULT_AUTO_GC_LOOSE_OBJECTS,
      closed: () => this.closed,
      repack: () => this.lock.withLock(() => repack(this.objects, this.durableFs, this.dir, this.gitdir)),
      log: (message) => this.log(message),
    });
    this.flags = new FlagIndex(this.gitdir, this.objects, { personalData: () => this.jobs.personalData, log: (m) => this.log(m) });
    this.protocol = new WriteProtocol({
      dir,
      gitdir: this.gitdir,
      durableFs: this.durableFs,
      objects: this.objects,
      history: this.history,
      worktree: this.worktree,
      lock: this.lock,
      trees: this.trees,
      author: this.author,
      now: this.now,
      log: (message) => this.log(message),
      afterCommit: () => this.jobs.committed(),
    });
    const contractOptions: ContractOptions = {
      createMode: options.createMode ?? 'overwrite',
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    };
    this.calls = new CallExecutor({
      objects: this.objects,
      history: this.history,
      trees: this.trees,
      protocol: this.protocol,
      review: new review.ReviewGate(this.reviewPort()),
      contractOptions,
      readOnly: () => this.readOnly,
      log: (message) => this.log(message),
    });
  }

  /** Open the store in `repoDir`, creating and initialising it on first use and repairing a crash. */
  static async open(repoDir: string, options: StoreOptions = {}): Promise<MemoryStore> {
    checkStoreOptions(options);
    const dir = path.resolve(repoDir);
    const create = options.create ?? true;
    // Decided before anything is written: a folder that is not (or cannot become) a memgit store is
    // refused untouched, and one that is new is claimed with memgit's marker before anything else.
    const kind = await inspectStoreDir(dir, create);
    const store = new this(dir, options); // `this`: the ES module entry's subclass opens its own kind
    if (kind === 'new') {
      await fs.promises.mkdir(path.join(dir, '.git'), { recursive: true, mode: DIR_MODE });
      await writeMarker(store.durableFs, dir);
    }
    const tightened = await tightenPermissions(dir);
    if (tightened > 0) store.log(`tightened the permissions of ${tightened} file(s) and folder(s) in ${dir}: they were open to other users`);
    await store.lock.withLock(async () => {
      await store.protocol.initialiseIfNew(create);
      await store.protocol.recover({ scanWorktree: true });
      await redaction.recoverRedaction(store.redaction());
      const head = await store.protocol.readHead();
      await store.history.open(head);
      await store.callLog.compactIfNeeded();
    });
    store.readOnly = await configFlag(store.durableFs.gitFs, store.gitdir, 'memgit.readonly');
    await store.jobs.startReplication(() => store.replication(), options.replicate ?? true, store.readOnly);
    await store.jobs.startFlagging(store.flags, store.history, options);
    return store;
  }

  /** Execute one memory tool_use block and return the tool_result to send back. */
  async execute(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions = {}): Promise<ToolResult> {
    return (await this.executeWithReport(toolUse, context, options)).result;
  }

  async executeWithReport(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions = {}): Promise<ExecutionReport> {
    this.assertOpen();
    const report = await this.calls.execute(toolUse, context, options);
    // On the record (call-log.ts): a write's line before it is acknowledged, reads and failures buffered.
    // A log that cannot be written must not turn an applied call into an exception.
    await Promise.resolve()
      .then(() => this.callLog.record(callEntry(toolUse as { id: unknown; input: unknown }, context?.session, report, this.now(), context?.key)))
      .catch((error: Error) => this.log(`could not append to the call log (the call itself is unaffected): ${error.message}`));
    return report;
  }

  /**
   * A runnable tool for `client.beta.messages.toolRunner({ tools: [store.memoryTool({ session })] })`.
   * Failures throw the SDK's ToolError so the model receives the exact error text. `options` carries extra
   * tool properties (`cache_control`, …) and `onCall`, which sees each call's report (for logging).
   */
  memoryTool(context: ExecuteContext, options?: MemoryToolOptions | MemoryToolCallHook): RunnableMemoryTool {
    const { toolError } = this.constructor as typeof MemoryStore;
    return createMemoryTool((toolUse) => this.executeWithReport(toolUse, context), options, toolError);
  }

  /**
   * Record an event of a session's timeline (not a commit), serialised with this store's writes. The
   * ordering among the session's calls is the caller's `afterCommit` / `afterToolUseId`.
   */
  recordEvent(session: string, event: NewTimelineEvent): Promise<TimelineRecord> {
    this.assertOpen();
    return this.lock.withLock(() => this.timeline.append(session, { ...event, time: event.time ?? this.now() }));
  }

  /**
   * Operator rollbacks (src/store/rollback): each writes ONE new commit on top of HEAD, serialised with
   * agent writes, or with `dryRun` returns the exact diff it would commit. A conflict writes nothing.
   */
  revert(ref: string, options: RollbackOptions): Promise<RollbackOutcome> {
    return rollback.revert(this.rollbackPort(), ref, options);
  }

  restore(path: string, options: RestoreOptions & { at: string }): Promise<RollbackOutcome> {
    return rollback.restore(this.rollbackPort(), path, options.at, options);
  }

  rollbackSession(session: string, options: RollbackOptions): Promise<RollbackOutcome> {
    return rollback.rollbackSession(this.rollbackPort(), session, options);
  }

  reset(options: RollbackOptions & { to: string }): Promise<RollbackOutcome> {
    return rollback.reset(this.rollbackPort(), options.to, options);
  }

  /**
   * Erase text, a regex's matches, a file or one call's writing from all of history (src/store/redaction),
   * under the write lock, with an audit record on refs/memgit/audit. `dryRun` previews and writes nothing.
   */
  redact(options: RedactOptions): Promise<RedactionOutcome> {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyStoreError();
    return redaction.redact(this.redaction(), options, this.author);
  }

  /** The redactions this store recorded (its audit log): what the UI, the CLI and the read model ask of them. */
  redactionLog(): RedactionLog {
    return redaction.redactionLog(this.portParts());
  }

  /**
   * Flag personal data in this store from now on, or stop (`memgit flags --personal-data on|off`): kept
   * in the store's config (`memgit.flagpersonaldata`), and every call is scanned again.
   */
  async setPersonalDataFlagging(on: boolean): Promise<void> {
    this.assertOpen();
    await git.setConfig({ fs: this.durableFs.gitFs, gitdir: this.gitdir, path: 'memgit.flagpersonaldata', value: on ? 'true' : 'false' });
    this.jobs.personalData = on;
    await this.flags.idle();
    this.flags.reset();
    this.jobs.rescanFlags();
  }

  /**
   * Pack the store's objects (see gc.ts), under the write lock. `full` repacks everything into one pack;
   * otherwise only loose objects are packed. Safe at any time: loose objects are removed only once the
   * pack that holds them is durable.
   */
  async gc(options: GcOptions = {}): Promise<GcReport> {
    this.assertOpen();
    return this.lock.withLock(() => repack(this.objects, this.durableFs, this.dir, this.gitdir, options));
  }

  /**
   * Wait until the calls made so far are finished with: their working-tree files and the git index are
   * written too (a call is acknowledged once its commit is durable; those follow it under the lock).
   */
  async settled(): Promise<void> {
    await this.lock.inOrder(async () => undefined);
  }

  /** Wait for queued work, then refuse further calls. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.jobs.gcUnderWay(); // an automatic gc already under way finishes first
    await this.lock.inOrder(async () => undefined);
    this.closed = true;
    await this.jobs.stop(this.flags, this.replicationFlushMs);
    await this.callLog.close();
    this.objects.dropCaches(); // a shared cache budget gets this store's share back
    this.history.close(); // the history file it reads lines from
  }

  /** The current HEAD commit, bringing the history index up to date with other processes' writes. */
  refreshHead(): Promise<string> {
    return this.protocol.refreshHead();
  }

  /**
   * Resolve a commit id (full or abbreviated, at least 4 hex digits) or a tool_use id to a commit; `kind`
   * restricts it to one of the two. A ref naming two things is refused (AmbiguousRefError), not guessed.
   */
  async resolve(ref: string, kind: RefKind = 'any'): Promise<HistoryEntry> {
    await this.refreshHead();
    return lookupRef(this.history, this.portParts(), ref, kind);
  }

  /** Resolve any point in history (tool_use id, commit or prefix, `commit:`/`call:`, HEAD, HEAD~N, ISO time): see points.ts. */
  async resolvePoint(ref: string): Promise<HistoryEntry> {
    await this.refreshHead();
    return lookupPoint(this.history, this.portParts(), ref);
  }

  /** The contract's reader over the memory in a root tree, or at a commit (readerAt). */
  readerAtCommitTree(tree: string): GitTreeReader {
    return this.trees.readerAt(tree);
  }

  async readerAt(commit: string): Promise<GitTreeReader> {
    return this.trees.readerAt(await this.trees.commitTree(commit));
  }

  commitTree(commit: string): Promise<string> {
    return this.trees.commitTree(commit);
  }

  /**
   * Write a commit made by someone other than the agent (an operator's rollback), serialised with agent
   * writes. `build` runs under the write lock with the current HEAD and returns the new memory tree (the
   * tree of `memories/`) and the message, or null to write nothing.
   */
  async writeCommit<T>(
    build: (head: string) => Promise<{ memoryTree: string | null; meta: CommitMeta; value: T } | null>,
  ): Promise<{ commit: string | null; value: T | null }> {
    const { commits, value } = await this.writeCommits(async (head) => {
      const built = await build(head);
      return built && { steps: [{ memoryTree: built.memoryTree, meta: built.meta }], value: built.value };
    });
    return { commit: commits.length ? commits[commits.length - 1] : null, value };
  }

  /**
   * Write several commits in a row as ONE write (`memgit import`, a commit per file): `build` runs under
   * the write lock and returns each commit's memory tree and message, oldest first. All of them are made
   * durable before the branch moves, once, from HEAD to the last of them: a failure before that (or a
   * crash) leaves the branch where it was and none of them applied; after it, all of them are.
   */
  async writeCommits<T>(
    build: (head: string) => Promise<{ steps: CommitStep[]; value: T } | null>,
  ): Promise<{ commits: string[]; value: T | null }> {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyStoreError();
    return this.protocol.run(async () => {
      const head = await this.protocol.refreshHead();
      return this.protocol.commit(head, async () => {
        const built = await build(head);
        if (!built || built.steps.length === 0) return built && { chain: [], value: built.value };
        const chain: ChainStep[] = [];
        let tree = await this.trees.commitTree(head);
        for (const step of built.steps) {
          tree = await withMemoryTree(this.objects, tree, step.memoryTree);
          chain.push({ tree, meta: step.meta });
        }
        return { chain, value: built.value };
      });
    });
  }

  /** The narrow interface redaction works through (src/store/redaction never imports this file). */
  redaction(): RedactionPort {
    return redactionPort(this.portParts());
  }

  /**
   * The narrow interface replication works through (src/store/replication never imports this file):
   * HEAD, the history as a list of commits, a fast-forward under the write lock, and commit notifications.
   */
  replication(): ReplicationPort {
    return replicationPort(this.portParts(), this.readOnly);
  }

  /**
   * Review before trust (src/store/review, docs/review.md): the store's policy and its audit trail, and
   * the reviews of held writes — listed (pending first), shown (each call's files, findings and whether it
   * still applies to main), approved (onto main, one commit per call, all or nothing) or rejected.
   */
  reviewPolicy(): PolicyRecord {
    this.assertOpen();
    return review.reviewPolicy(this);
  }

  setReviewPolicy(update: PolicyUpdate): Promise<{ record: PolicyRecord; changed: boolean }> {
    this.assertOpen();
    return review.setReviewPolicy(this.reviewPort(), update);
  }

  reviews(): Promise<ReviewSummary[]> {
    this.assertOpen();
    return review.listReviews(this.reviewPort());
  }

  review(id: string): Promise<ReviewDetail> {
    this.assertOpen();
    return review.showReview(this.reviewPort(), id);
  }

  approveReview(id: string, options: DecideOptions = {}): Promise<ApproveOutcome> {
    this.assertOpen();
    return review.approveReview(this.reviewPort(), id, options);
  }

  rejectReview(id: string, options: DecideOptions = {}): Promise<ReviewSummary> {
    this.assertOpen();
    return review.rejectReview(this.reviewPort(), id, options);
  }

  /**
   * Dreams (src/store/dream, docs/dreams.md): the store's dream resources, newest first (a dream a killed
   * process left running is failed, "interrupted", as they are read), one by id, a cancel asked for.
   */
  dreams(): DreamRecord[] {
    this.assertOpen();
    return dreams.listDreams(this.reviewPort());
  }

  dream(id: string): DreamRecord {
    this.assertOpen();
    return dreams.getDream(this.reviewPort(), id);
  }

  cancelDream(id: string): DreamRecord {
    this.assertOpen();
    return dreams.requestCancel(this.reviewPort(), id);
  }

  /**
   * The runner's side of a dream (src/dream runs it): begin one (refused while another is live), the
   * memory tool bound to its branch, its turns, whether a cancel was asked for, and its end.
   */
  beginDream(request: DreamRequest): Promise<DreamRecord> {
    this.assertOpen();
    return dreams.beginDream(this.reviewPort(), request);
  }

  dreamTool(id: string, onCall?: MemoryToolCallHook): RunnableMemoryTool {
    return this.memoryTool({ session: review.dreamSession(id), dream: id }, onCall);
  }

  markDreamRunning(id: string): DreamRecord {
    return dreams.markRunning(this.reviewPort(), id);
  }

  recordDreamTurn(id: string, usage: Partial<DreamUsage> | null | undefined): DreamRecord {
    return dreams.recordTurn(this.reviewPort(), id, usage);
  }

  dreamCancelRequested(id: string): boolean {
    return dreams.cancelRequested(this.reviewPort(), id);
  }

  finishDream(id: string, status: 'completed' | 'failed' | 'canceled', error: { type: string; message: string } | null = null): Promise<DreamRecord> {
    return dreams.finishDream(this.reviewPort(), id, status, error);
  }

  /** The narrow interface review works through (src/store/review never imports this file). */
  private reviewPort(): ReviewPort {
    const store = this;
    return {
      ...reviewPort(this.portParts(), { readOnly: false, now: this.now }),
      get readOnly() {
        return store.readOnly;
      },
    };
  }

  /** The narrow interface rollback works through (src/store/rollback never imports this file). */
  private rollbackPort(): RollbackPort {
    return rollbackPort(this.portParts(), this);
  }

  private portParts(): PortParts {
    const { dir, gitdir, durableFs, objects, history, trees, protocol, jobs, flags } = this;
    return { dir, gitdir, durableFs, objects, history, trees, protocol, jobs, flags, log: (message) => this.log(message) };
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }
}
