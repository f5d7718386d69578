import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { runCommand } from '../contract';
import { isValidId } from '../contract/paths';
import { newIdProblem } from '../contract/ids';
import { RefKind, resolveRef } from './resolve-ref';
import type { CommandOutcome, ContractOptions, TreeEdit } from '../contract/types';
import { ClientInfo, clientTrailers, CommitMeta, formatCommitMessage, KEY_ID_PATTERN } from './commit-message';
import type { CacheBudget } from './cache-budget';
import { DIR_MODE, DurableFs, removeStaleTempFiles, syncDir } from './durable-fs';
import { inspectStoreDir, NotFinishedError, tightenPermissions, writeMarker } from './store-guard';
import { classifyFault, describeError, faultText, isApiMisuse } from './fault';
import { AmbiguousRefError, CommitNotFoundError, InvalidToolUseError, NotAStoreError, ReadOnlyStoreError, SessionKeyError, StoreClosedError, StoreCorruptError } from './errors';
import { GitTreeReader, MEMORY_ROOT, toRepoPath } from './git-reader';
import { HistoryEntry, HistoryIndex, makeEntry } from './history-index';
import { estimateLooseObjects, GcOptions, GcReport, repack } from './gc';
import { diffTrees, FileChange, ObjectStore } from './objects';
import { configureRepository, GITATTRIBUTES, STORE_BRANCH } from './repo-config';
import { NewTimelineEvent, Timeline, TimelineRecord } from './timeline';
import { KEEP_FILE, TreeDraft } from './tree-draft';
import { createMemoryTool, MemoryToolCallHook, MemoryToolOptions, RunnableMemoryTool, ToolErrorClass } from './memory-tool';
import { Worktree } from './worktree';
import { resolveHead } from './head-ref';
import { WriteLock } from './write-lock';
import { CallLog, callEntry, DEFAULT_CALL_LOG_MAX_ENTRIES } from './call-log';
import * as rollback from './rollback';
import { resolvePoint } from './points';
import { listRemotes, Replicator } from './replication';
import type { ReplicationPort, ReplicatorOptions } from './replication';
import * as redaction from './redaction';
import { FlagIndex } from './flags';
import type { RedactionOutcome, RedactionPort, RedactOptions } from './redaction';
import type { RestoreOptions, RollbackOptions, RollbackOutcome } from './rollback';

export interface Author {
  name: string;
  email: string;
}

export interface StoreOptions {
  /** Create and initialise a store when `repoDir` has none (default true). */
  create?: boolean;
  /** `overwrite` (default): create replaces an existing file. `error`: the reference handler's refusal. */
  createMode?: 'overwrite' | 'error';
  /** Largest memory file in UTF-8 bytes (default 1 MiB). */
  maxFileBytes?: number;
  /** Author and committer of every commit (default memgit <memgit@localhost>). */
  author?: Author;
  /** fsync objects, refs and files before acknowledging (default true). */
  fsync?: boolean;
  /** A lock left by a killed process is taken over after this long (ms, at least 5000). */
  lockStaleMs?: number;
  /** How long a write waits for another process's lock before failing (ms). */
  lockTimeoutMs?: number;
  /** Where repairs and other notable events are reported (default: stderr). */
  log?: (message: string) => void;
  /** The call log keeps the newest this many calls (reads and failures too; default 200,000; 0: no call log). */
  callLogMaxEntries?: number;
  /**
   * Pack loose objects (`gc()`) once about this many have piled up — roughly a quarter as many calls —
   * in the background after a call is acknowledged (default 20,000; 0 turns automatic packing off).
   */
  autoGcLooseObjects?: number;
  /**
   * Push to the remotes added with `--auto` after every commit, in the background (default true; see
   * src/store/replication). Options tune batching and backoff.
   */
  replicate?: boolean | ReplicatorOptions;
  /** On close, wait up to this long for a push under way or still owed (ms, default 3000). */
  replicationFlushMs?: number;
  /**
   * Flag calls that write likely secrets (secretlint's recommended rules) for operators, in the
   * background (default true). Personal data (e-mail, phone, IBAN, card numbers) is flagged only where
   * the store opts in: this option or `memgit flags --personal-data on`.
   */
  flags?: boolean;
  flagPersonalData?: boolean;
  /**
   * The time the store records (ms since the epoch, default `Date.now`): of the commits it writes (agent
   * calls, rollbacks, imports, the first commit), of call-log entries and of timeline events. For a
   * replay of recorded conversations (`memgit demo` commits each call at its recorded time). Only the
   * program that opens the store sets it: no tool call, HTTP request or MCP message can.
   */
  clock?: () => number;
  /**
   * A memory budget shared with other stores (memgit server): the store's decoded blobs, trees and pack
   * objects count against it too, beside their own bounds (see cache-budget.ts).
   */
  cacheBudget?: CacheBudget;
}

/** One commit of `writeCommits`: the new tree of `memories/` (null: empty) and the message. */
export interface CommitStep {
  memoryTree: string | null;
  meta: CommitMeta;
}

/** A Messages API tool_use block for the memory tool. */
export interface MemoryToolUse {
  type: 'tool_use';
  id: string;
  name: 'memory';
  input: unknown;
}

/** The exact block to send back to the Messages API. */
export interface ToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: true;
}

export interface ExecuteContext {
  session: string;
  /** The program that sent the call (recorded as Memory-Client trailers), e.g. an MCP client. */
  client?: ClientInfo;
  /**
   * The id of the server key the call came with (`memgit server` sets it from the key it checked): recorded
   * as the `Memory-Key` trailer and in the call log. A session belongs to the key of its first commit: a
   * call with another key (or with a key, into a session a local writer began) throws SessionKeyError.
   */
  key?: string;
}

export interface ExecuteOptions {
  /**
   * Resolve only once the call has settled: its working-tree file and the git index written too. By
   * default an applied call resolves as soon as its commit is durable, and those follow under the write
   * lock (see `settled()`). For edges whose clients cannot wait for them otherwise (HTTP, MCP).
   */
  settle?: boolean;
}

/** What `execute` did, for callers that want more than the tool_result (the CLI, chat logging). */
export interface ExecutionReport {
  result: ToolResult;
  outcome: CommandOutcome | null;
  /** The commit this call made or, for a retried id, the commit it made the first time. */
  commit?: string;
  /** True when the id was already committed and nothing new was written. */
  replayed?: boolean;
  /** The HEAD the call read the memory at (absent when it was refused before reading). */
  readAt?: string;
}

export const DEFAULT_AUTHOR: Author = { name: 'memgit', email: 'memgit@localhost' };
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
const BLOB_SIZE_CACHE_LIMIT = 100_000;
const COMMIT_TREE_CACHE_LIMIT = 10_000;
const DEFAULT_AUTO_GC_LOOSE_OBJECTS = 20_000;
/** Counting loose objects costs a readdir: do it once per this many commits. */
const GC_CHECK_EVERY_COMMITS = 256;

/**
 * A memory store: a git repository whose `memories/` tree is Claude's `/memories`.
 *
 * Writes are serialised (within the process and across processes), each successful mutation is one
 * commit written from objects, and the working tree is kept equal to HEAD. Reads come from HEAD's tree.
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
  private readonly durableFs: DurableFs;
  private readonly worktree: Worktree;
  private readonly lock: WriteLock;
  private readonly contractOptions: ContractOptions;
  private readonly author: Author;
  private readonly clock: () => number;
  private readonly log: (message: string) => void;
  private readonly blobSizes = new Map<string, number>();
  private readonly commitTrees = new Map<string, string>();
  private closed = false;
  /** A call's commit landed but work after it (projection, history append, marker removal) failed. */
  private repairPending = false;
  /** The working-tree projection of the last acknowledged call, run before the write lock is released. */
  private pendingProjection: (() => Promise<void>) | null = null;
  private readonly autoGcLooseObjects: number;
  private commitsSinceGcCheck = 0;
  private pendingGc: Promise<void> | null = null;
  /** A clone made by `memgit clone` for auditing (config memgit.readonly): every write is refused. */
  readOnly = false;
  private readonly committedListeners = new Set<() => void>();
  private replicator: Replicator | null = null;
  private readonly replicationFlushMs: number;
  /** Calls flagged for likely secrets or personal data (src/store/flags). */
  readonly flags: FlagIndex;
  private personalData = false;

  /** The SDK ToolError copy the runnable tool throws (see memory-tool.ts; the ESM entry overrides it). */
  protected static toolError: ToolErrorClass = ToolError;

  protected constructor(dir: string, options: StoreOptions) {
    this.dir = dir;
    this.gitdir = path.join(dir, '.git');
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
    this.contractOptions = {
      createMode: options.createMode ?? 'overwrite',
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    };
    this.author = options.author ?? DEFAULT_AUTHOR;
    this.clock = options.clock ?? Date.now;
    this.log = options.log ?? ((message) => process.stderr.write(`memgit: ${message}\n`));
    this.autoGcLooseObjects = options.autoGcLooseObjects ?? DEFAULT_AUTO_GC_LOOSE_OBJECTS;
    this.replicationFlushMs = options.replicationFlushMs ?? 3000;
    this.flags = new FlagIndex(this.gitdir, this.objects, { personalData: () => this.personalData, log: (m) => this.log(m) });
  }

  /** Open the store in `repoDir`, creating and initialising it on first use and repairing a crash. */
  static async open(repoDir: string, options: StoreOptions = {}): Promise<MemoryStore> {
    if (options.createMode !== undefined && options.createMode !== 'overwrite' && options.createMode !== 'error') {
      throw new TypeError(`createMode must be 'overwrite' or 'error', got ${JSON.stringify(options.createMode)}`);
    }
    const max = options.maxFileBytes;
    if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
      throw new TypeError(`maxFileBytes must be a positive integer, got ${JSON.stringify(max)}`);
    }
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw new TypeError(`clock must be a function returning milliseconds since the epoch, got ${typeof options.clock}`);
    }
    const calls = options.callLogMaxEntries;
    if (calls !== undefined && !(Number.isSafeInteger(calls) && calls >= 0)) {
      throw new TypeError(`callLogMaxEntries must be a non-negative integer, got ${JSON.stringify(calls)}`);
    }
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
      await store.initialiseIfNew(create);
      await store.recoverIfNeeded({ scanWorktree: true });
      await redaction.recoverRedaction(store.redaction());
      const head = await store.readHead();
      await store.history.open(head);
      await store.callLog.compactIfNeeded();
    });
    await store.startReplication(options.replicate ?? true);
    await store.startFlagging(options);
    return store;
  }

  /** Execute one memory tool_use block and return the tool_result to send back. */
  async execute(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions = {}): Promise<ToolResult> {
    return (await this.executeWithReport(toolUse, context, options)).result;
  }

  async executeWithReport(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions = {}): Promise<ExecutionReport> {
    const report = await this.executeUnlogged(toolUse, context, options);
    // On the record (call-log.ts): a write's line before it is acknowledged, reads and failures buffered.
    // A log that cannot be written must not turn an applied call into an exception.
    await Promise.resolve()
      .then(() => this.callLog.record(callEntry(toolUse as { id: unknown; input: unknown }, context?.session, report, this.now(), context?.key)))
      .catch((error: Error) => this.log(`could not append to the call log (the call itself is unaffected): ${error.message}`));
    return report;
  }

  private async executeUnlogged(toolUse: unknown, context: ExecuteContext, options: ExecuteOptions): Promise<ExecutionReport> {
    this.assertOpen();
    const block = asMemoryToolUse(toolUse);
    const id = block.id;
    const fail = (content: string): ExecutionReport => ({
      result: { type: 'tool_result', tool_use_id: typeof id === 'string' ? id : '', content, is_error: true },
      outcome: null,
    });
    if (!isValidId(id)) return fail(`Error: Invalid tool_use id ${JSON.stringify(id)}`);
    // Ids that could be read as a commit id, or of only dots, would shadow commits in every lookup.
    const idProblem = newIdProblem(id);
    if (idProblem) return fail(`Error: Invalid tool_use id ${JSON.stringify(id)}: ${idProblem}`);
    if (!isValidId(context?.session)) return fail(`Error: Invalid session id ${JSON.stringify(context?.session)}`);
    const sessionProblem = newIdProblem(context.session);
    if (sessionProblem) return fail(`Error: Invalid session id ${JSON.stringify(context.session)}: ${sessionProblem}`);
    if (context.key !== undefined && !(typeof context.key === 'string' && KEY_ID_PATTERN.test(context.key))) {
      throw new InvalidToolUseError(`memgit: invalid key id ${JSON.stringify(context.key)}`);
    }
    const input = block.input;
    const command = isRecord(input) ? input.command : undefined;
    if (command !== 'view' && this.readOnly) throw new ReadOnlyStoreError();
    try {
      if (command === 'view') {
        const view = async (): Promise<ExecutionReport> => {
          const head = await this.refreshHead();
          this.assertSessionKey(context);
          const outcome = await runCommand(input, await this.readerAt(head), this.contractOptions);
          return { result: toResult(id, outcome), outcome, readAt: head };
        };
        // A view reads HEAD's objects, not the working tree, but bookkeeping an earlier call left
        // unfinished is still repaired before this process's next call, whatever it is. If the repair
        // cannot be done now (the disk is still full), the view does not need it: it is answered anyway.
        if (this.repairPending) {
          await this.withWriteLock(async () => undefined).catch((error: unknown) => {
            this.log(`the repair of an earlier call failed again (retried before the next call): ${describeError(error)}`);
          });
        }
        return await this.lock.inOrder(view);
      }
      return await this.withWriteLock(() => this.mutate(id, context, input), { acknowledgeEarly: !options.settle });
    } catch (error) {
      if (isApiMisuse(error)) throw error;
      // Reached only by calls that were not applied: once a commit is durable, later failures are
      // repaired instead of reported (see commitChange). The model gets a fixed text without paths.
      this.log(`${typeof command === 'string' ? command.slice(0, 20) : 'memory'} call ${id} was not applied: ${describeError(error)}`);
      return fail(faultText(classifyFault(error)));
    }
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
    return rollback.revert(this, ref, options);
  }

  restore(path: string, options: RestoreOptions & { at: string }): Promise<RollbackOutcome> {
    return rollback.restore(this, path, options.at, options);
  }

  rollbackSession(session: string, options: RollbackOptions): Promise<RollbackOutcome> {
    return rollback.rollbackSession(this, session, options);
  }

  reset(options: RollbackOptions & { to: string }): Promise<RollbackOutcome> {
    return rollback.reset(this, options.to, options);
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
    await this.pendingGc; // an automatic gc already under way finishes first
    await this.lock.inOrder(async () => undefined);
    this.closed = true;
    await Promise.all([this.replicator?.close(this.replicationFlushMs), waitAtMost(this.flags.idle(), 2000)]);
    this.flags.stop(); // a long scan of old history is left for the next process
    await this.callLog.close();
    this.objects.dropCaches(); // a shared cache budget gets this store's share back
  }

  private async startFlagging(options: StoreOptions): Promise<void> {
    if (options.flags === false) return;
    const configured: unknown = await git.getConfig({ fs: this.durableFs.gitFs, gitdir: this.gitdir, path: 'memgit.flagpersonaldata' }).catch(() => undefined);
    this.personalData = options.flagPersonalData ?? (configured === true || configured === 'true');
    const scan = () => void this.flags.catchUp(this.history);
    this.committedListeners.add(scan);
    scan();
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

  /** The narrow interface redaction works through (src/store/redaction never imports this file). */
  redaction(): RedactionPort {
    return {
      dir: this.dir,
      gitdir: this.gitdir,
      objects: this.objects,
      durableFs: this.durableFs,
      entries: () => this.history.all(),
      head: () => this.readHead(),
      exclusive: (task) => this.withWriteLock(async () => {
        await this.refreshHead();
        return task();
      }),
      afterRewrite: async (oldHead, newHead) => {
        this.commitTrees.clear();
        this.blobSizes.clear();
        const changes = await diffTrees(this.objects, await this.commitTree(oldHead).catch(() => null), await this.commitTree(newHead));
        await this.beginTransaction();
        await this.worktree.apply(changes);
        await this.endTransaction();
        await this.history.reset();
        await this.history.open(newHead);
        await this.flags.idle();
        this.flags.reset();
      },
      announce: () => {
        for (const listener of this.committedListeners) listener(); // replicas and flags see the rewritten history
      },
      log: (message) => this.log(message),
    };
  }

  /**
   * The narrow interface replication works through (src/store/replication never imports this file):
   * HEAD, the history as a list of commits, a fast-forward under the write lock, and commit notifications.
   */
  replication(): ReplicationPort {
    return {
      dir: this.dir,
      gitdir: this.gitdir,
      readOnly: this.readOnly,
      head: () => this.refreshHead(),
      commitsAfter: (commit) => {
        const start = commit === null ? 0 : this.history.position(commit);
        if (start === undefined) return null;
        // By position, not all(): only the entries asked for are parsed (a snapshot-loaded index).
        const commits: Array<{ commit: string; time: number }> = [];
        for (let i = commit === null ? 0 : start + 1; i < this.history.size; i++) {
          const e = this.history.at(i)!;
          commits.push({ commit: e.commit, time: e.time });
        }
        return commits;
      },
      fastForward: (commit) => this.fastForward(commit),
      onCommitted: (listener) => {
        this.committedListeners.add(listener);
        return () => this.committedListeners.delete(listener);
      },
      log: (message) => this.log(message),
    };
  }

  private async startReplication(replicate: boolean | ReplicatorOptions): Promise<void> {
    const readOnly: unknown = await git.getConfig({ fs: this.durableFs.gitFs, gitdir: this.gitdir, path: 'memgit.readonly' }).catch(() => undefined);
    this.readOnly = readOnly === true || readOnly === 'true';
    if (!replicate || this.readOnly) return;
    const remotes = (await listRemotes({ fs, gitdir: this.gitdir })).filter((r) => r.auto);
    if (remotes.length) this.replicator = new Replicator(this.replication(), remotes, replicate === true ? {} : replicate);
  }

  /**
   * Move the branch forward to `commit` — fetched from a replica, its objects already durable — and
   * project it, as one write under the lock (`memgit pull`).
   */
  private fastForward(commit: string): Promise<void> {
    return this.withWriteLock(async () => {
      const head = await this.refreshHead();
      if (commit === head) return;
      if (!(await git.isDescendent({ fs: this.durableFs.gitFs, gitdir: this.gitdir, oid: commit, ancestor: head, depth: -1 }))) {
        throw new StoreCorruptError(`memgit: ${commit.slice(0, 12)} does not descend from HEAD ${head.slice(0, 12)}; refusing to move the branch`);
      }
      const headTree = await this.commitTree(head);
      const newTree = await this.commitTree(commit);
      await this.beginTransaction();
      await this.durableFs.flush();
      await git.writeRef({ fs: this.durableFs.gitFs, gitdir: this.gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: commit, force: true });
      await this.durableFs.flush();
      await this.worktree.apply(await diffTrees(this.objects, headTree, newTree));
      await this.durableFs.flush();
      await this.history.open(commit);
      await this.endTransaction();
    });
  }

  /** The current HEAD commit, bringing the history index up to date with other processes' writes. */
  async refreshHead(): Promise<string> {
    const head = await this.readHead();
    // Compared with the index rather than a cached HEAD: a call whose projection failed after its ref
    // moved left the index behind, and it must catch up before the next call looks up its tool_use id.
    if (this.history.head?.commit !== head) await this.history.open(head);
    return head;
  }

  /** The contract's reader over the memory in a root tree, or at a commit (readerAt). */
  readerAtCommitTree(tree: string): GitTreeReader {
    if (this.blobSizes.size > BLOB_SIZE_CACHE_LIMIT) this.blobSizes.clear();
    return new GitTreeReader(this.objects, tree, this.blobSizes);
  }

  async readerAt(commit: string): Promise<GitTreeReader> {
    return this.readerAtCommitTree(await this.commitTree(commit));
  }

  async commitTree(commit: string): Promise<string> {
    // Commits are immutable; HEAD's tree is needed on every call, so remember trees by commit.
    let tree = this.commitTrees.get(commit);
    if (tree === undefined) {
      tree = (await this.objects.readCommit(commit)).commit.tree;
      this.rememberCommitTree(commit, tree);
    }
    return tree;
  }

  private rememberCommitTree(commit: string, tree: string): void {
    if (this.commitTrees.size >= COMMIT_TREE_CACHE_LIMIT) this.commitTrees.clear();
    this.commitTrees.set(commit, tree);
  }

  /**
   * Resolve a commit id (full or abbreviated, at least 4 hex digits) or a tool_use id to a commit; `kind`
   * restricts it to one of the two. A ref naming two things is refused (AmbiguousRefError), not guessed.
   */
  async resolve(ref: string, kind: RefKind = 'any'): Promise<HistoryEntry> {
    await this.refreshHead();
    try {
      return resolveRef(this.history, ref, kind);
    } catch (error) {
      if (error instanceof AmbiguousRefError || !(error instanceof CommitNotFoundError) || kind === 'call') throw error;
      return (await this.rewrittenEntry(ref)) ?? Promise.reject(error);
    }
  }

  /** Resolve any point in history (tool_use id, commit or prefix, `commit:`/`call:`, HEAD, HEAD~N, ISO time): see points.ts. */
  async resolvePoint(ref: string): Promise<HistoryEntry> {
    await this.refreshHead();
    try {
      return resolvePoint(this.history, ref);
    } catch (error) {
      if (!(error instanceof CommitNotFoundError)) throw error;
      return (await this.rewrittenEntry(ref)) ?? Promise.reject(error);
    }
  }

  /** A commit id from before a redaction (a bookmark, a link): the commit that replaced it, if any. */
  private async rewrittenEntry(ref: string): Promise<HistoryEntry | undefined> {
    const id = ref.replace(/^commit:/, '').toLowerCase();
    if (!/^[0-9a-f]{7,40}$/.test(id)) return undefined;
    const moved = await redaction.rewrittenCommit(this.redaction(), id);
    return moved ? this.history.get(moved.commit) : undefined;
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
    return this.withWriteLock(async () => {
      const head = await this.refreshHead();
      await this.beginTransaction(); // `build` may write objects
      return this.beforeRefMoves(async () => {
        const built = await build(head);
        if (!built || built.steps.length === 0) {
          this.durableFs.discardStaged();
          await this.endTransaction();
          return { commits: [], value: built ? built.value : null };
        }
        const headTree = await this.commitTree(head);
        const chain: { tree: string; meta: CommitMeta }[] = [];
        let tree = headTree;
        for (const step of built.steps) {
          tree = await this.replaceMemoryTree(tree, step.memoryTree);
          chain.push({ tree, meta: step.meta });
        }
        const commits = await this.commitChange(head, headTree, chain);
        return { commits, value: built.value };
      });
    });
  }

  /**
   * Run a write under the lock, first repairing a write that another process (or this one) left
   * unfinished: a long-lived store must not build on a half-projected working tree until it is reopened.
   * With `acknowledgeEarly` (an agent's call), the result of a task that applied a commit is handed back as
   * soon as the task returns: the commit is durable by then, and what follows it (the working tree and
   * index, see afterRefMoved) is done before the lock is released, so the next call (of any process) and
   * `settled()` see it finished.
   */
  private withWriteLock<T>(task: () => Promise<T>, options: { acknowledgeEarly?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.lock
        .withLock(async () => {
          await this.recoverIfNeeded();
          try {
            const value = await task();
            // Only an agent call that applied a commit hands its result back early; one that wrote nothing,
            // and an operator's rollback or redaction, return with the working tree projected and unlocked.
            if (this.pendingProjection && options.acknowledgeEarly) {
              resolve(value);
              // Let the caller take the result (and its call-log line be appended) before this work starts.
              await new Promise((next) => setImmediate(next));
            }
            return value;
          } finally {
            await this.finishPendingProjection();
          }
        })
        .then(resolve, reject);
    });
  }

  private async replaceMemoryTree(headTree: string, memoryTree: string | null): Promise<string> {
    const rootEntries = (await this.objects.readTree(headTree)).filter((e) => e.path !== MEMORY_ROOT);
    let tree = memoryTree;
    if (!tree || (await this.objects.readTree(tree)).length === 0) {
      const keep = await this.objects.writeBlob(new Uint8Array(0));
      tree = await this.objects.writeTree([{ mode: '100644', path: KEEP_FILE, oid: keep, type: 'blob' }]);
    }
    rootEntries.push({ mode: '040000', path: MEMORY_ROOT, oid: tree, type: 'tree' });
    return this.objects.writeTree(rootEntries);
  }

  /** A call with a key may add to its own sessions only (checked under the write lock for writes). */
  private assertSessionKey(context: ExecuteContext): void {
    if (context.key === undefined) return;
    const first = this.history.firstOfSession(context.session);
    if (first && first.key !== context.key) throw new SessionKeyError(context.session);
  }

  private async mutate(id: string, context: ExecuteContext, input: unknown): Promise<ExecutionReport> {
    const head = await this.refreshHead();
    this.assertSessionKey(context);
    const previous = this.history.byToolUseId(id);
    if (previous) return this.replay(id, previous, input);
    const headTree = await this.commitTree(head);
    const outcome = await runCommand(input, this.readerAtCommitTree(headTree), this.contractOptions);
    if (outcome.isError || !outcome.edits) return { result: toResult(id, outcome), outcome, readAt: head };
    const edits = outcome.edits;
    await this.beginTransaction(); // objects are written from here on
    const commit = await this.beforeRefMoves(async () => {
      const draft = new TreeDraft(this.objects, headTree);
      await applyEdits(draft, edits);
      const newTree = await draft.write();
      const meta: CommitMeta = {
        title: id,
        command: outcome.command,
        path: outcome.path,
        newPath: outcome.newPath,
        session: context.session,
        ...clientTrailers(context.client),
        ...(context.key !== undefined ? { key: context.key } : {}),
      };
      return (await this.commitChange(head, headTree, [{ tree: newTree, meta }]))[0];
    });
    return { result: toResult(id, outcome), outcome, commit, readAt: head };
  }

  /**
   * Run the part of a write that ends with the ref moving (commitChange throws only before that). On a
   * failure nothing was applied: objects staged for it are dropped and the transaction marker removed,
   * unless the ref's state is unknown (then the marker stays and the next call repairs from HEAD).
   */
  private async beforeRefMoves<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      this.durableFs.discardStaged();
      if (error instanceof RefStateUnknownError) {
        this.repairPending = true;
        throw error.cause;
      }
      await this.endTransaction().catch((cleanup: Error) => {
        this.repairPending = true;
        this.log(`could not remove the transaction marker after a failed call (${cleanup.message}); repaired before the next call`);
      });
      throw error;
    }
  }

  /**
   * A tool_use id that is already committed: a client retrying after a crash. Nothing is written; the
   * result is recomputed by running the same input against the memory as it was before that commit.
   */
  private async replay(id: string, previous: HistoryEntry, input: unknown): Promise<ExecutionReport> {
    const before = previous.parent ? await this.commitTree(previous.parent) : null;
    const outcome = before
      ? await runCommand(input, this.readerAtCommitTree(before), this.contractOptions)
      : null;
    if (!outcome || outcome.isError || !(await this.isSameCall(previous, outcome))) {
      const content = `Error: tool_use id ${id} was already used by an earlier ${previous.command ?? 'memory'} call with different input`;
      return { result: { type: 'tool_result', tool_use_id: id, content, is_error: true }, outcome, commit: previous.commit, replayed: true };
    }
    return { result: toResult(id, outcome), outcome, commit: previous.commit, replayed: true };
  }

  /**
   * Is the recomputed outcome the call that made `previous`? Same command and paths, and every file it
   * writes holds the committed bytes. Otherwise a reused id with other input would be acknowledged
   * although nothing of it was written.
   */
  private async isSameCall(previous: HistoryEntry, outcome: CommandOutcome): Promise<boolean> {
    if (outcome.command !== previous.command || outcome.path !== previous.path || outcome.newPath !== previous.newPath) {
      return false;
    }
    const committedTree = await this.commitTree(previous.commit);
    for (const edit of outcome.edits ?? []) {
      if (edit.op !== 'write') continue;
      const entry = await this.objects.entryAt(committedTree, toRepoPath(edit.path));
      if (entry?.oid !== (await this.objects.hashBlob(Buffer.from(edit.content, 'utf8')))) return false;
    }
    return true;
  }

  /**
   * Write one commit (or a chain of them, each on the one before) and move the branch to it, then project
   * it onto the working tree. Order matters for crash safety: the transaction marker first — the caller
   * begins the transaction before it writes any object, so a crash anywhere after it (temp files included)
   * is repaired on open or before the next write — objects, an fsync of everything written, the ref (once,
   * to the last commit of a chain), and only then the projection.
   *
   * Fault semantics: a failure before the ref moves throws (the call is not applied). Once the ref has
   * moved the call IS applied: a failure in the work after it (the ref's directory fsync, the working
   * tree, the index, the history append, the marker's removal) is logged for the operator and repaired
   * before this process's next call (and by the next open, which sees the marker), never thrown.
   */
  private async commitChange(head: string, headTree: string, chain: { tree: string; meta: CommitMeta }[]): Promise<string[]> {
    const timestamp = Math.floor(this.now() / 1000);
    const person = { name: this.author.name, email: this.author.email, timestamp, timezoneOffset: 0 };
    const links: ChainLink[] = [];
    let parent = head;
    let parentTree = headTree;
    for (const { tree, meta } of chain) {
      const commit = await this.objects.writeCommit({ message: formatCommitMessage(meta), tree, parent: [parent], author: person, committer: person });
      this.rememberCommitTree(commit, tree);
      links.push({ commit, parent, parentTree, tree, meta });
      parent = commit;
      parentTree = tree;
    }
    await this.moveBranch(parent);
    await this.afterRefMoved(links, timestamp);
    this.maybeScheduleGc();
    for (const listener of this.committedListeners) listener();
    return links.map((l) => l.commit);
  }

  /**
   * Move the branch to `commit`, only once its objects are durable. The blob, trees and commit were only
   * staged: flush() writes and fsyncs them together, then their directories, while the ref's temp file
   * is written and fsynced; the rename happens here, after the flush succeeded, or not at all.
   */
  private async moveBranch(commit: string): Promise<void> {
    const refFile = path.join(this.gitdir, 'refs', 'heads', STORE_BRANCH);
    try {
      await this.durableFs.writeFileAfterFlush(refFile, `${commit}\n`);
    } catch (error) {
      // A rename reported as failed may still have happened: the disk decides whether the call applied.
      const now = await fs.promises.readFile(refFile, 'utf8').then((text) => text.trim(), () => null);
      if (now === commit) {
        this.log(`the branch moved to ${commit} although its rename reported ${describeError(error)}; the call is applied`);
        return;
      }
      if (now === null) throw new RefStateUnknownError(error);
      throw error;
    }
  }

  /**
   * What must be durable or known before the call is acknowledged: the ref's directory entry (its
   * rename is what applied the call) and the history index entry (a retry of the tool_use id is
   * recognised). The working tree and the index follow in `projectAfterAcknowledging`, still under the
   * write lock and before the transaction marker goes, so that the caller is not kept waiting for them.
   */
  private async afterRefMoved(links: ChainLink[], timestamp: number): Promise<void> {
    const failures: string[] = [];
    const first = links[0];
    const last = links[links.length - 1];
    const refSynced = this.durableFs.flush().catch((error: unknown) => failures.push(`ref directory fsync: ${describeError(error)}`));
    let changes: FileChange[] | null = null;
    try {
      changes = await diffTrees(this.objects, first.parentTree, last.tree);
    } catch (error) {
      failures.push(describeError(error));
    }
    if (changes) {
      // In memory at once (a retry of this tool_use id is recognised); the file is healed if the append fails.
      // A chain's commits are recorded one by one, each with its own changes (a failure here is caught up
      // from git by the next refreshHead).
      try {
        for (const link of links) {
          const own = links.length === 1 ? changes : await diffTrees(this.objects, link.parentTree, link.tree);
          await this.history.record(makeEntry(link.commit, link.parent, timestamp, link.meta, own, link.tree));
        }
      } catch (error) {
        failures.push(`history append: ${describeError(error)}`);
      }
    }
    await refSynced;
    this.pendingProjection = () => this.projectAfterAcknowledging(last, changes, failures);
  }

  /**
   * Project an applied commit onto the working tree and the index (files renamed into place, then all
   * fsynced in one round), then remove the transaction marker. Never throws: until this is done the
   * marker stays, a crash meanwhile is repaired from HEAD on open, and a failure here is repaired before
   * this process's next call.
   */
  private async projectAfterAcknowledging(last: ChainLink, changes: FileChange[] | null, failures: string[]): Promise<void> {
    if (changes) {
      try {
        await this.durableFs.syncDeferred(await this.worktree.project(changes));
      } catch (projectionError) {
        // A transient failure, or a working tree someone changed (a link where a folder was): rebuild the
        // projection from the new HEAD at once, so that no sibling file stays missing until the next call.
        await this.worktree.rebuild(last.tree).then(
          (repaired) => this.log(`rebuilt the working tree after commit ${last.commit} (${describeError(projectionError)}): ${repaired.length} change(s)`),
          (error: unknown) => failures.push(`working tree: ${describeError(projectionError)}; rebuild: ${describeError(error)}`),
        );
      }
    }
    if (failures.length === 0) {
      await this.endTransaction().catch((error: unknown) => failures.push(`transaction marker: ${describeError(error)}`));
    }
    if (failures.length > 0) {
      this.repairPending = true;
      this.log(`commit ${last.commit} is applied, but work after it failed and is repaired before the next call: ${failures.join('; ')}`);
    }
  }

  /** Run the projection an acknowledged call left (see afterRefMoved), if any. */
  private async finishPendingProjection(): Promise<void> {
    const pending = this.pendingProjection;
    this.pendingProjection = null;
    if (pending) await pending();
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

  /** Queue a gc behind the current call (which is acknowledged first) once loose objects pile up. */
  private maybeScheduleGc(): void {
    if (this.autoGcLooseObjects <= 0 || this.pendingGc) return;
    if (++this.commitsSinceGcCheck < GC_CHECK_EVERY_COMMITS) return;
    this.commitsSinceGcCheck = 0;
    this.pendingGc = estimateLooseObjects(this.gitdir)
      .then((loose) => {
        if (loose < this.autoGcLooseObjects || this.closed) return;
        return this.lock.withLock(() => repack(this.objects, this.durableFs, this.dir, this.gitdir)).then(() => undefined);
      })
      .catch((error: Error) => this.log(`automatic gc failed (the store is unaffected): ${error.message}`))
      .finally(() => {
        this.pendingGc = null;
      });
  }

  private get transactionFile(): string {
    return path.join(this.gitdir, 'memgit', 'transaction');
  }

  private async beginTransaction(): Promise<void> {
    // Synchronous: a few bytes into the page cache, where two round trips through the thread pool cost more.
    fs.mkdirSync(path.dirname(this.transactionFile), { recursive: true, mode: DIR_MODE });
    fs.writeFileSync(this.transactionFile, `${process.pid}\n`, { mode: 0o600 });
    // The marker's directory entry joins the objects' flush, so it is durable before the ref moves: after a
    // power loss that kept the new ref, the marker is there too and open rebuilds the working tree.
    this.durableFs.syncDirOnFlush(path.dirname(this.transactionFile));
  }

  private async endTransaction(): Promise<void> {
    await fs.promises.rm(this.transactionFile, { force: true });
  }

  /** The store's clock (`StoreOptions.clock`), checked: a bad value fails the write instead of dating it wrongly. */
  private now(): number {
    const millis = this.clock();
    if (!Number.isSafeInteger(millis) || millis < 0) throw new TypeError(`memgit: the store's clock returned ${JSON.stringify(millis)}, not milliseconds since the epoch`);
    return millis;
  }

  private async readHead(): Promise<string> {
    try {
      return await resolveHead(this.gitdir, this.durableFs.gitFs);
    } catch (error) {
      throw Object.assign(new StoreCorruptError(`memgit: HEAD of ${this.dir} does not resolve: ${(error as Error).message}`), { cause: error });
    }
  }

  /** Called under the lock for a folder `inspectStoreDir` judged to be memgit's (or claimed as new). */
  private async initialiseIfNew(create: boolean): Promise<void> {
    const configPath = path.join(this.gitdir, 'config');
    if (fs.existsSync(configPath)) {
      const hasBranch = (await git.listBranches({ fs: this.durableFs.gitFs, gitdir: this.gitdir })).length > 0;
      if (!hasBranch && !create) throw new NotFinishedError(this.dir);
      await configureRepository(this.durableFs, this.dir, this.gitdir);
      if (hasBranch) return;
      // A first open killed between `git init` and the first commit (HEAD may even be missing): finish it.
      this.log(`finishing the initialisation of ${this.dir}, interrupted before its first commit`);
      await this.durableFs.writeFile(path.join(this.gitdir, 'HEAD'), `ref: refs/heads/${STORE_BRANCH}\n`);
    } else {
      await git.init({ fs: this.durableFs.gitFs, dir: this.dir, gitdir: this.gitdir, defaultBranch: STORE_BRANCH });
      await configureRepository(this.durableFs, this.dir, this.gitdir);
    }
    const attributes = await this.objects.writeBlob(Buffer.from(GITATTRIBUTES));
    const keep = await this.objects.writeBlob(new Uint8Array(0));
    const memories = await this.objects.writeTree([{ mode: '100644', path: KEEP_FILE, oid: keep, type: 'blob' }]);
    const root = await this.objects.writeTree([
      { mode: '100644', path: '.gitattributes', oid: attributes, type: 'blob' },
      { mode: '040000', path: MEMORY_ROOT, oid: memories, type: 'tree' },
    ]);
    await this.beginTransaction();
    const person = { ...this.author, timestamp: Math.floor(this.now() / 1000), timezoneOffset: 0 };
    const commit = await this.objects.writeCommit({
      message: 'memgit: initialise store\n',
      tree: root,
      parent: [],
      author: person,
      committer: person,
    });
    await this.durableFs.flush();
    await git.writeRef({ fs: this.durableFs.gitFs, gitdir: this.gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: commit, force: true });
    await this.durableFs.flush();
    // The transaction marker makes recoverIfNeeded() project the first commit onto the working tree.
  }

  /**
   * Repair an interrupted write (the transaction marker is there) or a missing index. On open
   * (`scanWorktree`) also look for links, FIFOs and other special files planted in the working tree.
   */
  private async recoverIfNeeded(options: { scanWorktree?: boolean } = {}): Promise<void> {
    if (this.repairPending) {
      // The last call's commit landed but something after it failed: the ref's directory entry may not
      // be durable yet, the history file may lack its line; the marker (if still there) covers the rest.
      if (this.durableFs.fsync) await syncDir(path.join(this.gitdir, 'refs', 'heads'));
      await this.history.heal();
      await this.recoverFromMarker(options);
      this.repairPending = false;
      return;
    }
    await this.recoverFromMarker(options);
  }

  private async recoverFromMarker(options: { scanWorktree?: boolean }): Promise<void> {
    const interrupted = fs.existsSync(this.transactionFile);
    const indexMissing = !fs.existsSync(path.join(this.gitdir, 'index'));
    // Temp files of a killed writer: objects can be written before the marker (and config outside any
    // commit), and `git fsck` reports a leftover in .git/objects, so look on every open, not only after a marker.
    const removed = interrupted || options.scanWorktree ? await removeStaleTempFiles(this.gitdir) : [];
    const planted = !interrupted && !indexMissing && options.scanWorktree && (await this.worktree.hasSpecialFiles());
    if (!interrupted && !indexMissing && !planted) {
      if (removed.length) this.log(`removed ${removed.length} temporary file(s) a killed writer left in ${this.gitdir}`);
      return;
    }
    const { commit } = await this.objects.readCommit(await this.readHead());
    const repaired = await this.worktree.rebuild(commit.tree);
    // Projecting a new store's first commit is not a repair; anything later is.
    if (commit.parent.length > 0 || removed.length > 0) {
      this.log(
        `repaired ${this.dir} after an interrupted write: ${removed.length} temporary file(s) removed, ` +
          `${repaired.length} working-tree change(s)${repaired.length ? ` (${repaired.slice(0, 5).join(', ')}${repaired.length > 5 ? ', …' : ''})` : ''}`,
      );
    }
    await this.endTransaction();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreClosedError();
  }
}

async function applyEdits(draft: TreeDraft, edits: TreeEdit[]): Promise<void> {
  for (const edit of edits) {
    switch (edit.op) {
      case 'write':
        await draft.writeFile(toRepoPath(edit.path), Buffer.from(edit.content, 'utf8'));
        break;
      case 'delete':
        await draft.remove(toRepoPath(edit.path));
        break;
      case 'move':
        await draft.move(toRepoPath(edit.from), toRepoPath(edit.to));
        break;
    }
  }
}

function toResult(id: string, outcome: CommandOutcome): ToolResult {
  const result: ToolResult = { type: 'tool_result', tool_use_id: id, content: outcome.text };
  if (outcome.isError) result.is_error = true;
  return result;
}

function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))]).finally(() => clearTimeout(timer));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The tool_use block's id and input, or InvalidToolUseError (exported for edges that check before a store is touched). */
export function asMemoryToolUse(value: unknown): { id: unknown; input: unknown } {
  if (!isRecord(value)) throw new InvalidToolUseError('memgit: expected a tool_use block (an object)');
  if (value.type !== 'tool_use') throw new InvalidToolUseError(`memgit: expected type "tool_use", got ${JSON.stringify(value.type)}`);
  if (value.name !== 'memory') throw new InvalidToolUseError(`memgit: expected the memory tool (name "memory"), got ${JSON.stringify(value.name)}`);
  return { id: value.id, input: value.input };
}

/** One commit of a chain written by commitChange. */
interface ChainLink {
  commit: string;
  parent: string;
  parentTree: string;
  tree: string;
  meta: CommitMeta;
}

/** Moving the ref failed and the ref could not be read back: whether the call applied is not known. */
class RefStateUnknownError extends Error {
  constructor(override readonly cause: unknown) {
    super('the branch ref could not be read back after a failed write');
  }
}
