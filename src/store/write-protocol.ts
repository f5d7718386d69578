import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { MEMORY_REPO_ROOT } from '../contract/paths';
import { CommitMeta, formatCommitMessage } from './commit-message';
import { DIR_MODE, DurableFs, removeStaleTempFiles, syncDir } from './durable-fs';
import { StoreCorruptError } from './errors';
import { describeError } from './fault';
import { resolveHead } from './head-ref';
import { HistoryIndex, makeEntry } from './history-index';
import { diffTrees, FileChange, ObjectStore } from './objects';
import { configureRepository, GITATTRIBUTES, STORE_BRANCH } from './repo-config';
import { NotFinishedError } from './store-guard';
import { KEEP_FILE } from './tree-draft';
import type { TreeCache } from './tree-cache';
import type { Author } from './types';
import type { Worktree } from './worktree';
import type { WriteLock } from './write-lock';

/**
 * The crash-safe write protocol, and its recovery: the one place where commits are written and the branch
 * moves. Every write of a store — an agent's call, an operator's rollback, an import, a fast-forward from
 * a replica, the first commit, the working-tree side of a redaction — goes through this file, under the
 * write lock.
 *
 * The order, for one write (`commit`):
 *  1. the transaction marker (`.git/memgit/transaction`) is written before any object;
 *  2. the blobs, trees and commits are staged, then flushed and fsynced together with their directories;
 *  3. the branch ref is renamed into place — only after that flush succeeded. This rename is what applies
 *     the call: before it nothing is applied, after it everything is;
 *  4. before the call is acknowledged: the ref's directory is fsynced and the history index learns the
 *     commit (so a retry of the tool_use id is recognised);
 *  5. after it is acknowledged, still under the lock: the working tree and the git index are projected
 *     from the commit, then the marker is removed.
 *
 * Fault semantics: a failure before the ref moves throws (the call is not applied; staged objects are
 * dropped, the marker removed). Once the ref has moved the call IS applied: a failure in the work after it
 * is logged for the operator and repaired before this process's next write (`repairPending`), or by the
 * next open, which finds the marker — never thrown. A rename reported as failed that did happen is read
 * back from the disk, which decides.
 *
 * Recovery (`recover`): a marker, a missing git index, temp files of a killed writer or special files
 * planted in the working tree make the working tree be rebuilt from HEAD.
 */

export interface WriteProtocolParts {
  dir: string;
  gitdir: string;
  durableFs: DurableFs;
  objects: ObjectStore;
  history: HistoryIndex;
  worktree: Worktree;
  lock: WriteLock;
  trees: TreeCache;
  author: Author;
  /** The store's checked clock (ms since the epoch). */
  now: () => number;
  log: (message: string) => void;
  /** After every commit this process writes, once it is durable (background jobs: gc, replicas, flags). */
  afterCommit: () => void;
}

/** One commit of a chain: the new root tree and the message. */
export interface ChainStep {
  tree: string;
  meta: CommitMeta;
}

export class WriteProtocol {
  /** A call's commit landed but work after it (projection, history append, marker removal) failed. */
  private repairPending = false;
  /** The working-tree projection of the last acknowledged call, run before the write lock is released. */
  private pendingProjection: (() => Promise<void>) | null = null;

  constructor(private readonly parts: WriteProtocolParts) {}

  private get transactionFile(): string {
    return path.join(this.parts.gitdir, 'memgit', 'transaction');
  }

  async readHead(): Promise<string> {
    try {
      return await resolveHead(this.parts.gitdir, this.parts.durableFs.gitFs);
    } catch (error) {
      throw Object.assign(new StoreCorruptError(`HEAD of ${this.parts.dir} does not resolve: ${(error as Error).message}`), { cause: error });
    }
  }

  /** The current HEAD commit, bringing the history index up to date with other processes' writes. */
  async refreshHead(): Promise<string> {
    const head = await this.readHead();
    // Compared with the index rather than a cached HEAD: a call whose projection failed after its ref
    // moved left the index behind, and it must catch up before the next call looks up its tool_use id.
    if (this.parts.history.head?.commit !== head) await this.parts.history.open(head);
    return head;
  }

  /**
   * Run a write under the lock, first repairing a write that another process (or this one) left
   * unfinished: a long-lived store must not build on a half-projected working tree until it is reopened.
   * With `acknowledgeEarly` (an agent's call), the result of a task that applied a commit is handed back as
   * soon as the task returns: the commit is durable by then, and what follows it (the working tree and
   * index, see afterRefMoved) is done before the lock is released, so the next call (of any process) and
   * `settled()` see it finished.
   */
  run<T>(task: () => Promise<T>, options: { acknowledgeEarly?: boolean } = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.parts.lock
        .withLock(async () => {
          await this.recover();
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

  /**
   * Run a read in order with the writes. A read looks at HEAD's objects, not the working tree, but
   * bookkeeping an earlier call left unfinished is still repaired before this process's next call,
   * whatever it is. If the repair cannot be done now (the disk is still full), the read does not need it:
   * it is answered anyway.
   */
  async read<T>(task: () => Promise<T>): Promise<T> {
    if (this.repairPending) {
      await this.run(async () => undefined).catch((error: unknown) => {
        this.parts.log(`the repair of an earlier call failed again (retried before the next call): ${describeError(error)}`);
      });
    }
    return this.parts.lock.inOrder(task);
  }

  /**
   * Write the commits `build` returns (one for a call, several for an import) on top of `head`, under the
   * lock (the caller runs this inside `run`). The transaction begins before `build`, which may write
   * objects; `build` returning null or no steps writes nothing.
   */
  async commit<T>(
    head: string,
    build: () => Promise<{ chain: ChainStep[]; value: T } | null>,
    options: { ref?: string } = {},
  ): Promise<{ commits: string[]; value: T | null }> {
    await this.beginTransaction(); // objects are written from here on
    return this.beforeRefMoves(async () => {
      const built = await build();
      if (!built || built.chain.length === 0) {
        this.parts.durableFs.discardStaged();
        await this.endTransaction();
        return { commits: [], value: built ? built.value : null };
      }
      const headTree = await this.parts.trees.commitTree(head);
      const ref = options.ref ?? `refs/heads/${STORE_BRANCH}`;
      if (ref === `refs/heads/${STORE_BRANCH}`) return { commits: await this.commitChange(head, headTree, built.chain), value: built.value };
      return { commits: await this.commitAside(ref, head, built.chain), value: built.value };
    });
  }

  /**
   * Write a chain on a ref other than the store's branch (a review branch, a review's archive): the same
   * order — marker, objects flushed, the ref renamed into place, its directory fsynced — but neither the
   * history index (which follows main) nor the working tree (main's projection) changes.
   */
  private async commitAside(ref: string, head: string, chain: ChainStep[]): Promise<string[]> {
    const { author, objects, trees } = this.parts;
    checkRefName(ref);
    const timestamp = Math.floor(this.parts.now() / 1000);
    const person = { name: author.name, email: author.email, timestamp, timezoneOffset: 0 };
    const commits: string[] = [];
    let parent = head;
    for (const { tree, meta } of chain) {
      const commit = await objects.writeCommit({ message: formatCommitMessage(meta), tree, parent: [parent], author: person, committer: person });
      trees.remember(commit, tree);
      commits.push(commit);
      parent = commit;
    }
    const refFile = path.join(this.parts.gitdir, ref);
    fs.mkdirSync(path.dirname(refFile), { recursive: true, mode: DIR_MODE });
    await this.moveBranch(parent, refFile);
    try {
      await this.parts.durableFs.flush();
      // Under the same lock after a commit on main (an approval, then its archive): main's projection is
      // still owed, and the marker must stay until it is done (a crash meanwhile rebuilds from HEAD).
      if (!this.pendingProjection) await this.endTransaction();
    } catch (error) {
      this.repairPending = true;
      this.parts.log(`commit ${parent} on ${ref} is applied, but work after it failed and is repaired before the next call: ${describeError(error)}`);
    }
    this.parts.afterCommit();
    return commits;
  }

  /**
   * Point a new ref other than the store's branch at an existing commit (a dream's branch, forked from
   * main when the dream starts), under the lock (the caller runs this inside `run`): written to a temp
   * file, fsynced and renamed into place, its directory fsynced.
   */
  async createRef(ref: string, commit: string): Promise<void> {
    checkRefName(ref);
    if (ref === `refs/heads/${STORE_BRANCH}`) throw new Error(`refusing to create ${ref}`);
    const refFile = path.join(this.parts.gitdir, ref);
    fs.mkdirSync(path.dirname(refFile), { recursive: true, mode: DIR_MODE });
    await this.parts.durableFs.writeFileAfterFlush(refFile, `${commit}\n`);
    await this.parts.durableFs.flush();
  }

  /**
   * Remove a ref other than the store's branch (a review branch once its review is decided), under the
   * lock (the caller runs this inside \`run\`). Its commits stay reachable from the review's archive.
   */
  async deleteRef(ref: string): Promise<void> {
    checkRefName(ref);
    if (ref === `refs/heads/${STORE_BRANCH}`) throw new Error(`refusing to delete ${ref}`);
    const refFile = path.join(this.parts.gitdir, ref);
    await fs.promises.rm(refFile, { force: true });
    if (this.parts.durableFs.fsync) await syncDir(path.dirname(refFile));
    // A packed copy (git pack-refs run by hand) would resurrect it: isomorphic-git removes that too.
    await git.deleteRef({ fs: this.parts.durableFs.gitFs, gitdir: this.parts.gitdir, ref }).catch(() => undefined);
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
      this.parts.durableFs.discardStaged();
      if (error instanceof RefStateUnknownError) {
        this.repairPending = true;
        throw error.cause;
      }
      await this.endTransaction().catch((cleanup: Error) => {
        this.repairPending = true;
        this.parts.log(`could not remove the transaction marker after a failed call (${cleanup.message}); repaired before the next call`);
      });
      throw error;
    }
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
  private async commitChange(head: string, headTree: string, chain: ChainStep[]): Promise<string[]> {
    const { author, objects, trees } = this.parts;
    const timestamp = Math.floor(this.parts.now() / 1000);
    const person = { name: author.name, email: author.email, timestamp, timezoneOffset: 0 };
    const links: ChainLink[] = [];
    let parent = head;
    let parentTree = headTree;
    for (const { tree, meta } of chain) {
      const commit = await objects.writeCommit({ message: formatCommitMessage(meta), tree, parent: [parent], author: person, committer: person });
      trees.remember(commit, tree);
      links.push({ commit, parent, parentTree, tree, meta });
      parent = commit;
      parentTree = tree;
    }
    await this.moveBranch(parent);
    await this.afterRefMoved(links, timestamp);
    this.parts.afterCommit();
    return links.map((l) => l.commit);
  }

  /**
   * Move the branch to `commit`, only once its objects are durable. The blob, trees and commit were only
   * staged: flush() writes and fsyncs them together, then their directories, while the ref's temp file
   * is written and fsynced; the rename happens here, after the flush succeeded, or not at all.
   */
  private async moveBranch(commit: string, refFile = path.join(this.parts.gitdir, 'refs', 'heads', STORE_BRANCH)): Promise<void> {
    try {
      await this.parts.durableFs.writeFileAfterFlush(refFile, `${commit}\n`);
    } catch (error) {
      // A rename reported as failed may still have happened: the disk decides whether the call applied.
      const now = await fs.promises.readFile(refFile, 'utf8').then((text) => text.trim(), () => null);
      if (now === commit) {
        this.parts.log(`the branch moved to ${commit} although its rename reported ${describeError(error)}; the call is applied`);
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
    const { durableFs, objects, history } = this.parts;
    const failures: string[] = [];
    const first = links[0];
    const last = links[links.length - 1];
    const refSynced = durableFs.flush().catch((error: unknown) => failures.push(`ref directory fsync: ${describeError(error)}`));
    let changes: FileChange[] | null = null;
    try {
      changes = await diffTrees(objects, first.parentTree, last.tree);
    } catch (error) {
      failures.push(describeError(error));
    }
    if (changes) {
      // In memory at once (a retry of this tool_use id is recognised); the file is healed if the append fails.
      // A chain's commits are recorded one by one, each with its own changes (a failure here is caught up
      // from git by the next refreshHead).
      try {
        for (const link of links) {
          const own = links.length === 1 ? changes : await diffTrees(objects, link.parentTree, link.tree);
          await history.record(makeEntry(link.commit, link.parent, timestamp, link.meta, own, link.tree));
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
    const { durableFs, worktree } = this.parts;
    if (changes) {
      try {
        await durableFs.syncDeferred(await worktree.project(changes));
      } catch (projectionError) {
        // A transient failure, or a working tree someone changed (a link where a folder was): rebuild the
        // projection from the new HEAD at once, so that no sibling file stays missing until the next call.
        await worktree.rebuild(last.tree).then(
          (repaired) => this.parts.log(`rebuilt the working tree after commit ${last.commit} (${describeError(projectionError)}): ${repaired.length} change(s)`),
          (error: unknown) => failures.push(`working tree: ${describeError(projectionError)}; rebuild: ${describeError(error)}`),
        );
      }
    }
    if (failures.length === 0) {
      await this.endTransaction().catch((error: unknown) => failures.push(`transaction marker: ${describeError(error)}`));
    }
    if (failures.length > 0) {
      this.repairPending = true;
      this.parts.log(`commit ${last.commit} is applied, but work after it failed and is repaired before the next call: ${failures.join('; ')}`);
    }
  }

  /** Run the projection an acknowledged call left (see afterRefMoved), if any. */
  private async finishPendingProjection(): Promise<void> {
    const pending = this.pendingProjection;
    this.pendingProjection = null;
    if (pending) await pending();
  }

  /**
   * Move the branch forward to `commit` — fetched from a replica, its objects already durable — and
   * project it, as one write under the lock (`memgit pull`).
   */
  fastForward(commit: string): Promise<void> {
    const { durableFs, gitdir, objects, trees, worktree, history } = this.parts;
    return this.run(async () => {
      const head = await this.refreshHead();
      if (commit === head) return;
      if (!(await git.isDescendent({ fs: durableFs.gitFs, gitdir, oid: commit, ancestor: head, depth: -1 }))) {
        throw new StoreCorruptError(`${commit.slice(0, 12)} does not descend from HEAD ${head.slice(0, 12)}; refusing to move the branch`);
      }
      const headTree = await trees.commitTree(head);
      const newTree = await trees.commitTree(commit);
      await this.beginTransaction();
      await durableFs.flush();
      await git.writeRef({ fs: durableFs.gitFs, gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: commit, force: true });
      await durableFs.flush();
      await worktree.apply(await diffTrees(objects, headTree, newTree));
      await durableFs.flush();
      await history.open(commit);
      await this.endTransaction();
    });
  }

  /**
   * The branch now holds rewritten history (a redaction, which moved the ref itself under the lock):
   * project the new HEAD onto the working tree inside a transaction, and rebuild the history index.
   */
  async afterHistoryRewrite(oldHead: string, newHead: string): Promise<void> {
    const { objects, trees, worktree, history } = this.parts;
    trees.clear();
    const newTree = await trees.commitTree(newHead);
    // Finishing a redaction a crash interrupted, the old history may be pruned already, or partly (a
    // kill during the prune): then the working tree is rebuilt from the new tree instead of diffed.
    const oldTree = await trees.commitTree(oldHead).catch(() => null);
    const changes = oldTree === null ? null : await diffTrees(objects, oldTree, newTree).catch(() => null);
    await this.beginTransaction();
    if (changes) await worktree.apply(changes);
    else await worktree.rebuild(newTree);
    await this.endTransaction();
    await history.reset();
    await history.open(newHead);
  }

  private async beginTransaction(): Promise<void> {
    // Synchronous: a few bytes into the page cache, where two round trips through the thread pool cost more.
    fs.mkdirSync(path.dirname(this.transactionFile), { recursive: true, mode: DIR_MODE });
    fs.writeFileSync(this.transactionFile, `${process.pid}\n`, { mode: 0o600 });
    // The marker's directory entry joins the objects' flush, so it is durable before the ref moves: after a
    // power loss that kept the new ref, the marker is there too and open rebuilds the working tree.
    this.parts.durableFs.syncDirOnFlush(path.dirname(this.transactionFile));
  }

  private async endTransaction(): Promise<void> {
    await fs.promises.rm(this.transactionFile, { force: true });
  }

  /**
   * Under the lock on open, for a folder `inspectStoreDir` judged to be memgit's (or claimed as new):
   * `git init` and the first commit, or finishing a first open killed before that commit.
   */
  async initialiseIfNew(create: boolean): Promise<void> {
    const { dir, gitdir, durableFs, objects, author } = this.parts;
    const configPath = path.join(gitdir, 'config');
    if (fs.existsSync(configPath)) {
      const hasBranch = (await git.listBranches({ fs: durableFs.gitFs, gitdir })).length > 0;
      if (!hasBranch && !create) throw new NotFinishedError(dir);
      await configureRepository(durableFs, dir, gitdir);
      if (hasBranch) return;
      // A first open killed between `git init` and the first commit (HEAD may even be missing): finish it.
      this.parts.log(`finishing the initialisation of ${dir}, interrupted before its first commit`);
      await durableFs.writeFile(path.join(gitdir, 'HEAD'), `ref: refs/heads/${STORE_BRANCH}\n`);
    } else {
      await git.init({ fs: durableFs.gitFs, dir, gitdir, defaultBranch: STORE_BRANCH });
      await configureRepository(durableFs, dir, gitdir);
    }
    const attributes = await objects.writeBlob(Buffer.from(GITATTRIBUTES));
    const keep = await objects.writeBlob(new Uint8Array(0));
    const memories = await objects.writeTree([{ mode: '100644', path: KEEP_FILE, oid: keep, type: 'blob' }]);
    const root = await objects.writeTree([
      { mode: '100644', path: '.gitattributes', oid: attributes, type: 'blob' },
      { mode: '040000', path: MEMORY_REPO_ROOT, oid: memories, type: 'tree' },
    ]);
    await this.beginTransaction();
    const person = { ...author, timestamp: Math.floor(this.parts.now() / 1000), timezoneOffset: 0 };
    const commit = await objects.writeCommit({
      message: 'memgit: initialise store\n',
      tree: root,
      parent: [],
      author: person,
      committer: person,
    });
    await durableFs.flush();
    await git.writeRef({ fs: durableFs.gitFs, gitdir, ref: `refs/heads/${STORE_BRANCH}`, value: commit, force: true });
    await durableFs.flush();
    // The transaction marker makes recover() project the first commit onto the working tree.
  }

  /**
   * Repair an interrupted write (the transaction marker is there) or a missing index. On open
   * (`scanWorktree`) also look for links, FIFOs and other special files planted in the working tree.
   */
  async recover(options: { scanWorktree?: boolean } = {}): Promise<void> {
    if (this.repairPending) {
      // The last call's commit landed but something after it failed: the ref's directory entry may not
      // be durable yet, the history file may lack its line; the marker (if still there) covers the rest.
      if (this.parts.durableFs.fsync) await syncDir(path.join(this.parts.gitdir, 'refs', 'heads'));
      await this.parts.history.heal();
      await this.recoverFromMarker(options);
      this.repairPending = false;
      return;
    }
    await this.recoverFromMarker(options);
  }

  private async recoverFromMarker(options: { scanWorktree?: boolean }): Promise<void> {
    const { dir, gitdir, objects, worktree } = this.parts;
    const interrupted = fs.existsSync(this.transactionFile);
    const indexMissing = !fs.existsSync(path.join(gitdir, 'index'));
    // Temp files of a killed writer: objects can be written before the marker (and config outside any
    // commit), and `git fsck` reports a leftover in .git/objects, so look on every open, not only after a marker.
    const removed = interrupted || options.scanWorktree ? await removeStaleTempFiles(gitdir) : [];
    const planted = !interrupted && !indexMissing && options.scanWorktree && (await worktree.hasSpecialFiles());
    if (!interrupted && !indexMissing && !planted) {
      if (removed.length) this.parts.log(`removed ${removed.length} temporary file(s) a killed writer left in ${gitdir}`);
      return;
    }
    const { commit } = await objects.readCommit(await this.readHead());
    const repaired = await worktree.rebuild(commit.tree);
    // Projecting a new store's first commit is not a repair; anything later is.
    if (commit.parent.length > 0 || removed.length > 0) {
      this.parts.log(
        `repaired ${dir} after an interrupted write: ${removed.length} temporary file(s) removed, ` +
          `${repaired.length} working-tree change(s)${repaired.length ? ` (${repaired.slice(0, 5).join(', ')}${repaired.length > 5 ? ', …' : ''})` : ''}`,
      );
    }
    await this.endTransaction();
  }
}

/** A ref memgit may write beside its branch: refs/heads/… or refs/memgit/…, plain segments only. */
function checkRefName(ref: string): void {
  if (!/^refs\/(heads|memgit)\/[A-Za-z0-9_%-]+(\/[A-Za-z0-9_%-]+)*$/.test(ref)) throw new Error(`not a ref memgit writes: ${JSON.stringify(ref)}`);
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
