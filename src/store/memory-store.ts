import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { runCommand } from '../contract';
import { isValidId } from '../contract/paths';
import type { CommandOutcome, ContractOptions, TreeEdit } from '../contract/types';
import { CommitMeta, formatCommitMessage } from './commit-message';
import { DurableFs, removeStaleTempFiles } from './durable-fs';
import { CommitNotFoundError, InvalidToolUseError, NotAStoreError, StoreClosedError, StoreCorruptError } from './errors';
import { GitTreeReader, MEMORY_ROOT, toRepoPath } from './git-reader';
import { HistoryEntry, HistoryIndex, makeEntry } from './history-index';
import { estimateLooseObjects, GcOptions, GcReport, repack } from './gc';
import { diffTrees, ObjectStore } from './objects';
import { configureRepository, GITATTRIBUTES, STORE_BRANCH } from './repo-config';
import { KEEP_FILE, TreeDraft } from './tree-draft';
import { Worktree } from './worktree';
import { WriteLock } from './write-lock';
import * as rollback from './rollback';
import { resolvePoint } from './points';
import type { RollbackOptions, RollbackOutcome } from './rollback';

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
  /**
   * Pack loose objects (`gc()`) once about this many have piled up — roughly a quarter as many calls —
   * in the background after a call is acknowledged (default 20,000; 0 turns automatic packing off).
   */
  autoGcLooseObjects?: number;
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
}

/** What `execute` did, for callers that want more than the tool_result (the CLI, chat logging). */
export interface ExecutionReport {
  result: ToolResult;
  outcome: CommandOutcome | null;
  /** The commit this call made or, for a retried id, the commit it made the first time. */
  commit?: string;
  /** True when the id was already committed and nothing new was written. */
  replayed?: boolean;
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
  private readonly durableFs: DurableFs;
  private readonly worktree: Worktree;
  private readonly lock: WriteLock;
  private readonly contractOptions: ContractOptions;
  private readonly author: Author;
  private readonly log: (message: string) => void;
  private readonly blobSizes = new Map<string, number>();
  private readonly commitTrees = new Map<string, string>();
  private closed = false;
  private readonly autoGcLooseObjects: number;
  private commitsSinceGcCheck = 0;
  private pendingGc: Promise<void> | null = null;

  private constructor(dir: string, options: StoreOptions) {
    this.dir = dir;
    this.gitdir = path.join(dir, '.git');
    this.durableFs = new DurableFs({ fsync: options.fsync ?? true });
    this.objects = new ObjectStore(this.durableFs, this.gitdir);
    this.history = new HistoryIndex(this.objects, this.gitdir);
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
    this.log = options.log ?? ((message) => process.stderr.write(`memgit: ${message}\n`));
    this.autoGcLooseObjects = options.autoGcLooseObjects ?? DEFAULT_AUTO_GC_LOOSE_OBJECTS;
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
    const dir = path.resolve(repoDir);
    await assertCanOpen(dir, options.create ?? true);
    await fs.promises.mkdir(path.join(dir, '.git'), { recursive: true });
    const store = new MemoryStore(dir, options);
    await store.lock.withLock(async () => {
      await store.initialiseIfNew();
      await store.recoverIfNeeded({ scanWorktree: true });
      const head = await store.readHead();
      await store.history.open(head);
    });
    return store;
  }

  /** Execute one memory tool_use block and return the tool_result to send back. */
  async execute(toolUse: unknown, context: ExecuteContext): Promise<ToolResult> {
    return (await this.executeWithReport(toolUse, context)).result;
  }

  async executeWithReport(toolUse: unknown, context: ExecuteContext): Promise<ExecutionReport> {
    this.assertOpen();
    const block = asMemoryToolUse(toolUse);
    const id = block.id;
    const fail = (content: string): ExecutionReport => ({
      result: { type: 'tool_result', tool_use_id: typeof id === 'string' ? id : '', content, is_error: true },
      outcome: null,
    });
    if (!isValidId(id)) return fail(`Error: Invalid tool_use id ${JSON.stringify(id)}`);
    if (!isValidId(context?.session)) return fail(`Error: Invalid session id ${JSON.stringify(context?.session)}`);
    const input = block.input;
    const command = isRecord(input) ? input.command : undefined;
    if (command === 'view') {
      return this.lock.inOrder(async () => {
        const outcome = await runCommand(input, await this.readerAt(await this.refreshHead()), this.contractOptions);
        return { result: toResult(id, outcome), outcome };
      });
    }
    return this.withWriteLock(() => this.mutate(id, context.session, input));
  }

  /**
   * A runnable tool for `client.beta.messages.toolRunner({ tools: [store.memoryTool({ session })] })`.
   * Failures throw the SDK's ToolError so the model receives the exact error text. `onCall`, if given,
   * sees each call's input and report (for logging, e.g. `memgit chat`) before the result goes back.
   */
  memoryTool(context: ExecuteContext, onCall?: (report: ExecutionReport, input: unknown) => void) {
    return {
      type: 'memory_20250818' as const,
      name: 'memory' as const,
      parse: (input: unknown) => input as Record<string, unknown>,
      run: async (input: unknown, runContext?: { toolUse?: { id?: string } }): Promise<string> => {
        const id = runContext?.toolUse?.id;
        const report = await this.executeWithReport({ type: 'tool_use', id, name: 'memory', input }, context);
        onCall?.(report, input);
        const result = report.result;
        if (result.is_error) throw new ToolError(result.content);
        return result.content;
      },
    };
  }

  /**
   * Operator rollbacks (src/store/rollback): each writes ONE new commit on top of HEAD, serialised with
   * agent writes, or with `dryRun` returns the exact diff it would commit. A conflict writes nothing.
   */
  revert(ref: string, options: RollbackOptions): Promise<RollbackOutcome> {
    return rollback.revert(this, ref, options);
  }

  restore(path: string, options: RollbackOptions & { at: string }): Promise<RollbackOutcome> {
    return rollback.restore(this, path, options.at, options);
  }

  rollbackSession(session: string, options: RollbackOptions): Promise<RollbackOutcome> {
    return rollback.rollbackSession(this, session, options);
  }

  reset(options: RollbackOptions & { to: string }): Promise<RollbackOutcome> {
    return rollback.reset(this, options.to, options);
  }

  /** Wait for queued work, then refuse further calls. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.pendingGc; // an automatic gc already under way finishes first
    await this.lock.inOrder(async () => undefined);
    this.closed = true;
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

  /** Resolve a commit id (full or abbreviated, at least 4 hex digits) or a tool_use id to a commit. */
  async resolve(ref: string): Promise<HistoryEntry> {
    await this.refreshHead();
    const byToolUse = this.history.byToolUseId(ref);
    if (byToolUse) return byToolUse;
    if (/^[0-9a-f]{4,40}$/i.test(ref)) {
      const lower = ref.toLowerCase();
      const exact = this.history.get(lower);
      if (exact) return exact;
      const matches = this.history.all().filter((e) => e.commit.startsWith(lower));
      if (matches.length === 1) return matches[0];
    }
    throw new CommitNotFoundError(ref);
  }

  /** Resolve any point in history (tool_use id, commit or prefix, HEAD, HEAD~N, ISO time): see points.ts. */
  async resolvePoint(ref: string): Promise<HistoryEntry> {
    await this.refreshHead();
    return resolvePoint(this.history, ref);
  }

  /**
   * Write a commit made by someone other than the agent (an operator's rollback), serialised with agent
   * writes. `build` runs under the write lock with the current HEAD and returns the new memory tree (the
   * tree of `memories/`) and the message, or null to write nothing.
   */
  async writeCommit<T>(
    build: (head: string) => Promise<{ memoryTree: string | null; meta: CommitMeta; value: T } | null>,
  ): Promise<{ commit: string | null; value: T | null }> {
    this.assertOpen();
    return this.withWriteLock(async () => {
      const head = await this.refreshHead();
      await this.beginTransaction(); // `build` may write objects
      const built = await build(head).catch(async (error: unknown) => {
        await this.endTransaction();
        throw error;
      });
      if (!built) {
        await this.endTransaction();
        return { commit: null, value: null };
      }
      const headTree = await this.commitTree(head);
      const rootTree = await this.replaceMemoryTree(headTree, built.memoryTree);
      const commit = await this.commitChange(head, headTree, rootTree, built.meta);
      return { commit, value: built.value };
    });
  }

  /**
   * Run a write under the lock, first repairing a write that another process (or this one) left
   * unfinished: a long-lived store must not build on a half-projected working tree until it is reopened.
   */
  private withWriteLock<T>(task: () => Promise<T>): Promise<T> {
    return this.lock.withLock(async () => {
      await this.recoverIfNeeded();
      return task();
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

  private async mutate(id: string, session: string, input: unknown): Promise<ExecutionReport> {
    const head = await this.refreshHead();
    const previous = this.history.byToolUseId(id);
    if (previous) return this.replay(id, previous, input);
    const headTree = await this.commitTree(head);
    const outcome = await runCommand(input, this.readerAtCommitTree(headTree), this.contractOptions);
    if (outcome.isError || !outcome.edits) return { result: toResult(id, outcome), outcome };
    await this.beginTransaction(); // objects are written from here on
    const draft = new TreeDraft(this.objects, headTree);
    await applyEdits(draft, outcome.edits);
    const newTree = await draft.write();
    const commit = await this.commitChange(head, headTree, newTree, {
      title: id,
      command: outcome.command,
      path: outcome.path,
      newPath: outcome.newPath,
      session,
    });
    return { result: toResult(id, outcome), outcome, commit };
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
   * Write one commit and move the branch to it, then project it onto the working tree.
   * Order matters for crash safety: the transaction marker first — the caller begins the transaction
   * before it writes any object, so a crash anywhere after it (temp files included) is repaired on open
   * or before the next write — objects, an fsync of everything written, the ref, and only then the projection.
   */
  private async commitChange(head: string, headTree: string, newTree: string, meta: CommitMeta): Promise<string> {
    const timestamp = Math.floor(Date.now() / 1000);
    const person = { name: this.author.name, email: this.author.email, timestamp, timezoneOffset: 0 };
    const commit = await this.objects.writeCommit({
      message: formatCommitMessage(meta),
      tree: newTree,
      parent: [head],
      author: person,
      committer: person,
    });
    this.rememberCommitTree(commit, newTree);
    // The blob, trees and commit were only staged: flush() writes and fsyncs them together, then their
    // directories. git.writeRef's temp file is written and fsynced meanwhile, and renamed into place only
    // once the objects are durable (DurableFs.afterDurable).
    const objectsDurable = this.durableFs.flush();
    await this.durableFs.afterDurable(objectsDurable, () =>
      git.writeRef({ fs: this.durableFs.gitFs, gitdir: this.gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: commit, force: true }),
    );
    const changes = await diffTrees(this.objects, headTree, newTree);
    // The ref's directory entry is fsynced while the working tree and index are projected: until both
    // are done the transaction marker stays, and a crash meanwhile is repaired from HEAD on open.
    await Promise.all([this.durableFs.flush(), this.worktree.apply(changes)]);
    await this.history.record(makeEntry(commit, head, timestamp, meta, changes));
    await this.endTransaction();
    this.maybeScheduleGc();
    return commit;
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
    await fs.promises.mkdir(path.dirname(this.transactionFile), { recursive: true });
    await fs.promises.writeFile(this.transactionFile, `${process.pid}\n`);
    // The marker's directory entry joins the objects' flush, so it is durable before the ref moves: after a
    // power loss that kept the new ref, the marker is there too and open rebuilds the working tree.
    this.durableFs.syncDirOnFlush(path.dirname(this.transactionFile));
  }

  private async endTransaction(): Promise<void> {
    await fs.promises.rm(this.transactionFile, { force: true });
  }

  private async readHead(): Promise<string> {
    try {
      return await git.resolveRef({ fs: this.durableFs.gitFs, gitdir: this.gitdir, ref: 'HEAD' });
    } catch (error) {
      throw new StoreCorruptError(`memgit: HEAD of ${this.dir} does not resolve: ${(error as Error).message}`);
    }
  }

  private async initialiseIfNew(): Promise<void> {
    const configPath = path.join(this.gitdir, 'config');
    if (fs.existsSync(configPath)) {
      const args = { fs: this.durableFs.gitFs, gitdir: this.gitdir };
      const madeByMemgit = (await git.getConfig({ ...args, path: 'memgit.configversion' }).catch(() => undefined)) !== undefined;
      if (!madeByMemgit && (await git.listBranches(args)).length > 0) {
        // An ordinary project repository: configuring it or committing onto its branch would be vandalism.
        throw new NotAStoreError(`memgit: ${this.dir} is a git repository that memgit did not create; choose an empty folder for the store`);
      }
      await configureRepository(this.durableFs, this.dir, this.gitdir);
      if ((await git.listBranches({ fs: this.durableFs.gitFs, gitdir: this.gitdir })).length > 0) return;
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
    const person = { ...this.author, timestamp: Math.floor(Date.now() / 1000), timezoneOffset: 0 };
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

/**
 * Refuse, before anything is created on disk, a path that cannot be a store: a file, a non-empty folder
 * that is not a git repository, or (with `create: false`) a folder with no store yet.
 */
async function assertCanOpen(dir: string, create: boolean): Promise<void> {
  const stat = await fs.promises.stat(dir).catch(() => null);
  if (stat && !stat.isDirectory()) throw new NotAStoreError(`memgit: ${dir} is not a folder`);
  if (stat && fs.existsSync(path.join(dir, '.git'))) return;
  if (!create) throw new NotAStoreError(`memgit: there is no memgit store at ${dir} (pass --repo DIR or set MEMGIT_REPO; \`memgit exec\` creates one)`);
  const existing = stat ? (await fs.promises.readdir(dir)).filter((name) => name !== 'README.md') : [];
  if (existing.length > 0) {
    throw new NotAStoreError(`memgit: ${dir} is not empty and is not a git repository; choose an empty folder`);
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asMemoryToolUse(value: unknown): { id: unknown; input: unknown } {
  if (!isRecord(value)) throw new InvalidToolUseError('memgit: expected a tool_use block (an object)');
  if (value.type !== 'tool_use') throw new InvalidToolUseError(`memgit: expected type "tool_use", got ${JSON.stringify(value.type)}`);
  if (value.name !== 'memory') throw new InvalidToolUseError(`memgit: expected the memory tool (name "memory"), got ${JSON.stringify(value.name)}`);
  return { id: value.id, input: value.input };
}
