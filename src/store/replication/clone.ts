import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { DurableFs } from '../durable-fs';
import { NotAStoreError, ReplicationRefusedError } from '../errors';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import { configureRepository } from '../repo-config';
import type { ReplicationPort } from './port';
import { fetchHttp } from './remote-head';
import { checkRemoteUrl, DEFAULT_REMOTE_USER, displayUrl, getRemote } from './remote-config';
import { updateRemoteState } from './state';
import { authFor, describeTransportError, localMemgitRefs, MEMGIT_REFS, REPLICATED_BRANCH } from './transport';

export interface CloneOptions {
  /** Environment variable holding the token (only its name is kept, in the clone's config). */
  tokenEnv?: string | null;
  user?: string;
  /**
   * true (`memgit clone`): an auditor's copy that takes no writes and never pushes.
   * false (`memgit restore-from`): a writable store that goes on replicating to the same remote.
   */
  readOnly: boolean;
  onProgress?: (phase: string, loaded: number, total: number | undefined) => void;
}

/**
 * Bring a replicated store onto this machine. The objects are fetched into an empty folder through the
 * crash-safe fs and made durable, the repository is configured as a store and checked out; the history
 * index is built from git by the first `MemoryStore.open`. A failure removes the folder again.
 */
export async function cloneStore(url: string, dir: string, options: CloneOptions): Promise<{ head: string }> {
  checkRemoteUrl(url);
  const target = path.resolve(dir);
  const existing = await fs.promises.readdir(target).catch(() => null);
  if (existing && existing.length > 0) throw new NotAStoreError(`${target} is not empty; clone into a new folder`);
  await fs.promises.mkdir(target, { recursive: true, mode: 0o700 });
  const gitdir = path.join(target, '.git');
  const durable = new DurableFs();
  const remote = { url, tokenEnv: options.tokenEnv ?? null, user: options.user ?? DEFAULT_REMOTE_USER };
  try {
    await git.clone({
      fs: durable.gitFs,
      http: fetchHttp,
      dir: target,
      gitdir,
      url,
      ref: REPLICATED_BRANCH,
      singleBranch: true,
      noCheckout: true,
      noTags: true,
      onProgress: options.onProgress ? (p) => options.onProgress!(p.phase, p.loaded, p.total) : undefined,
      ...authFor(remote),
    });
    await fetchMemgitRefs(durable, gitdir, remote);
    await durable.flush();
    const head = await git.resolveRef({ fs, gitdir, ref: 'HEAD' });
    const { commit } = await git.readCommit({ fs, gitdir, oid: head });
    const tree = await git.readTree({ fs, gitdir, oid: commit.tree });
    if (!tree.tree.some((e) => e.path === MEMORY_REPO_ROOT && e.type === 'tree')) {
      throw new NotAStoreError(`${displayUrl(url)} is a git repository, but not a memgit store (no ${MEMORY_REPO_ROOT}/ at its head)`);
    }
    const args = { fs: durable.gitFs, gitdir };
    if (remote.tokenEnv) await git.setConfig({ ...args, path: 'remote.origin.memgittokenenv', value: remote.tokenEnv });
    await git.setConfig({ ...args, path: 'remote.origin.memgituser', value: remote.user });
    await git.setConfig({ ...args, path: 'remote.origin.memgitautopush', value: options.readOnly ? 'false' : 'true' });
    await configureRepository(durable, target, gitdir);
    // The working tree and index, written through the crash-safe fs like everything else.
    await git.checkout({ fs: durable.gitFs, dir: target, gitdir, ref: REPLICATED_BRANCH });
    await durable.flush();
    if (options.readOnly) await git.setConfig({ ...args, path: 'memgit.readonly', value: 'true' });
    updateRemoteState(gitdir, 'origin', { pushed: head, pushedAt: null, memgitRefs: Object.fromEntries(await localMemgitRefs(gitdir)) });
    return { head };
  } catch (error) {
    // Nothing half-cloned is left to be mistaken for a store.
    await fs.promises.rm(target, { recursive: true, force: true });
    if (error instanceof NotAStoreError || error instanceof ReplicationRefusedError) throw error;
    throw new ReplicationRefusedError(`clone of ${displayUrl(url)} failed: ${describeTransportError(error, { ...remote, name: 'origin', auto: false })}`);
  }
}

/** memgit's own refs on the remote (the redaction audit log), fetched and written under the same names. */
async function fetchMemgitRefs(durable: DurableFs, gitdir: string, remote: { url: string; tokenEnv: string | null; user: string }): Promise<void> {
  const refs = await git.listServerRefs({ http: fetchHttp, url: remote.url, prefix: MEMGIT_REFS, protocolVersion: 1, ...authFor(remote) });
  for (const { ref } of refs) {
    if (!/^refs\/memgit\/[A-Za-z0-9._-]+$/.test(ref)) continue; // a name from the server: only plain ones
    const { fetchHead } = await git.fetch({ fs: durable.gitFs, http: fetchHttp, gitdir, url: remote.url, ref, remoteRef: ref, singleBranch: true, tags: false, ...authFor(remote) });
    if (fetchHead) await git.writeRef({ fs: durable.gitFs, gitdir, ref, value: fetchHead, force: true });
  }
}

export interface PullReport {
  from: string;
  to: string;
  commits: number;
}

/**
 * Bring a clone up to date: fetch the remote's branch, check that it only adds to this store's history
 * (a fast-forward), and move the store to it through the store's own write path.
 */
export async function pullStore(port: ReplicationPort, remoteName = 'origin'): Promise<PullReport> {
  const remote = await getRemote({ fs, gitdir: port.gitdir }, remoteName);
  const durable = new DurableFs();
  let fetched: string | null;
  try {
    const result = await git.fetch({
      fs: durable.gitFs,
      http: fetchHttp,
      gitdir: port.gitdir,
      url: remote.url,
      remote: remote.name,
      ref: REPLICATED_BRANCH,
      remoteRef: REPLICATED_BRANCH,
      singleBranch: true,
      tags: false,
      ...authFor(remote),
    });
    await durable.flush();
    fetched = result.fetchHead;
  } catch (error) {
    throw new ReplicationRefusedError(`pull from ${remote.name} failed: ${describeTransportError(error, remote)}`);
  }
  const head = await port.head();
  if (!fetched || fetched === head) return { from: head, to: head, commits: 0 };
  const forward = await git.isDescendent({ fs, gitdir: port.gitdir, oid: fetched, ancestor: head, depth: -1 });
  if (!forward) {
    throw new ReplicationRefusedError(
      `the history at ${displayUrl(remote.url)} no longer contains this copy's head ${head.slice(0, 12)} ` +
        '(it was rewritten, e.g. by a redaction); clone it again into a new folder',
    );
  }
  await port.fastForward(fetched);
  updateRemoteState(port.gitdir, remote.name, { pushed: fetched });
  return { from: head, to: fetched, commits: port.commitsAfter(head)?.length ?? 0 };
}
