import * as fs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import { ReplicationRefusedError } from '../errors';
import { displayUrl, DEFAULT_REMOTE_USER } from './remote-config';
import { fetchHttp } from './remote-head';
import { authFor, describeTransportError, REPLICATED_BRANCH } from './transport';

/**
 * Heads without opening a store, for a node of a fleet (src/tenancy/fleet.ts) deciding whether its copy
 * of a store may be served: what the git server's branch holds, what the local copy's branch holds, and
 * whether one commit contains another.
 */

/** The commit the remote's `main` points at, or null when the repository has no such branch yet. */
export async function remoteBranchHead(remote: { url: string; tokenEnv?: string | null; user?: string }): Promise<string | null> {
  const config = { name: 'origin', url: remote.url, tokenEnv: remote.tokenEnv ?? null, user: remote.user ?? DEFAULT_REMOTE_USER, auto: false };
  try {
    const refs = await git.listServerRefs({ http: fetchHttp, url: remote.url, prefix: `refs/heads/${REPLICATED_BRANCH}`, protocolVersion: 1, ...authFor(config) });
    return refs.find((r) => r.ref === `refs/heads/${REPLICATED_BRANCH}`)?.oid ?? null;
  } catch (error) {
    if (error instanceof ReplicationRefusedError) throw error;
    throw new ReplicationRefusedError(`cannot read the branch at ${displayUrl(remote.url)}: ${describeTransportError(error, config)}`);
  }
}

/** The commit a store folder's branch points at, or null when the folder holds no store (or no commit). */
export async function localBranchHead(dir: string): Promise<string | null> {
  const gitdir = path.join(dir, '.git');
  return git.resolveRef({ fs, gitdir, ref: 'HEAD' }).catch(() => null);
}

/** Whether `tip`'s history (in the repository at `gitdir`) contains `commit`; false when either is unknown here. */
export async function historyContains(gitdir: string, tip: string, commit: string): Promise<boolean> {
  if (tip === commit) return true;
  return git.isDescendent({ fs, gitdir, oid: tip, ancestor: commit, depth: -1 }).catch(() => false);
}
