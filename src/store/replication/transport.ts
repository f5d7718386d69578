import * as fs from 'node:fs';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { ReplicationRefusedError } from '../errors';
import type { RemoteConfig } from './remote-config';
import { displayUrl } from './remote-config';

/** The branch a store replicates: the store's only branch. */
export const REPLICATED_BRANCH = 'main';

/**
 * Credentials for one remote, read from the environment at the moment they are needed. A failed
 * authentication cancels at once instead of letting isomorphic-git retry, and the error names the
 * variable, never its value.
 */
export function authFor(remote: Pick<RemoteConfig, 'tokenEnv' | 'user' | 'url'>) {
  return {
    onAuth: () => {
      if (!remote.tokenEnv) return undefined;
      const token = process.env[remote.tokenEnv];
      if (!token) throw new ReplicationRefusedError(`the environment variable ${remote.tokenEnv} (the token for ${displayUrl(remote.url)}) is not set`);
      return { username: remote.user, password: token };
    },
    onAuthFailure: () => ({ cancel: true }),
  };
}

/** The Authorization header for a remote (basic auth with its token), or null when it has no token. */
export function authorizationHeader(remote: Pick<RemoteConfig, 'tokenEnv' | 'user' | 'url'>): string | null {
  const credentials = authFor(remote).onAuth();
  return credentials ? `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` : null;
}

const NO_COMMIT = '0000000000000000000000000000000000000000';

/**
 * Push the branch. `decide` sees what the remote's branch holds (null: nothing yet) and what would be
 * pushed, once the remote has answered and before anything is sent: it returns false to send nothing.
 * One connection for both, so the check and the push see the same remote state.
 */
export async function pushBranch(
  gitdir: string,
  remote: RemoteConfig,
  force: boolean,
  decide: (theirs: string | null, ours: string) => boolean,
): Promise<'pushed' | 'declined'> {
  let declined = false;
  try {
    const result = await git.push({
      fs,
      http,
      gitdir,
      url: remote.url,
      // Names the remote-tracking ref it writes (refs/remotes/NAME/main); the URL is what it pushes to.
      remote: remote.name,
      ref: REPLICATED_BRANCH,
      remoteRef: REPLICATED_BRANCH,
      force,
      onPrePush: ({ localRef, remoteRef }) => {
        declined = !decide(remoteRef.oid === NO_COMMIT ? null : remoteRef.oid, localRef.oid);
        return !declined;
      },
      ...authFor(remote),
    });
    if (!result.ok) {
      const detail = Object.values(result.refs ?? {}).find((r) => !r.ok)?.error ?? result.error ?? 'refused';
      throw new Error(`the remote refused the push: ${detail}`);
    }
    return 'pushed';
  } catch (error) {
    if (declined && (error as { code?: string }).code === 'UserCanceledError') return 'declined';
    throw error;
  }
}

/**
 * memgit's own refs beside the branch (the redaction audit log, refs/memgit/audit): they travel with the
 * store, so that a replica, a clone made from it and a store restored from it keep the record.
 */
export const MEMGIT_REFS = 'refs/memgit/';

/** The refs under refs/memgit/ here and what each points at. */
export async function localMemgitRefs(gitdir: string): Promise<Map<string, string>> {
  const refs = new Map<string, string>();
  for (const name of await git.listRefs({ fs, gitdir, filepath: MEMGIT_REFS.slice(0, -1) }).catch(() => [] as string[])) {
    refs.set(`${MEMGIT_REFS}${name}`, await git.resolveRef({ fs, gitdir, ref: `${MEMGIT_REFS}${name}` }));
  }
  return refs;
}

/**
 * Review branches (refs/heads/review/<session>: writes held for review, docs/review.md) travel with the
 * store too, so a replica holds what is pending; a decided review's branch goes (its archive is under
 * refs/memgit/reviews/).
 */
export const REVIEW_BRANCHES = 'refs/heads/review/';

/** The review branches here and what each points at. */
export async function localReviewBranches(gitdir: string): Promise<Map<string, string>> {
  const refs = new Map<string, string>();
  for (const name of await git.listRefs({ fs, gitdir, filepath: REVIEW_BRANCHES.slice(0, -1) }).catch(() => [] as string[])) {
    refs.set(`${REVIEW_BRANCHES}${name}`, await git.resolveRef({ fs, gitdir, ref: `${REVIEW_BRANCHES}${name}` }));
  }
  return refs;
}

/** Delete a ref memgit pushed (a decided review's branch) on the remote. */
export async function deleteRemoteRef(gitdir: string, remote: RemoteConfig, ref: string): Promise<void> {
  // isomorphic-git resolves `ref` here even to delete, and this one is gone: name the branch, which exists.
  const result = await git.push({ fs, http, gitdir, url: remote.url, remote: remote.name, ref: `refs/heads/${REPLICATED_BRANCH}`, remoteRef: ref, delete: true, ...authFor(remote) });
  if (!result.ok) {
    const detail = Object.values(result.refs ?? {}).find((r) => !r.ok)?.error ?? result.error ?? 'refused';
    throw new Error(`the remote refused to delete ${ref}: ${detail}`);
  }
  await git.deleteRef({ fs, gitdir, ref: trackingRef(remote, ref) }).catch(() => undefined);
}

/** The remote-tracking ref isomorphic-git writes for a pushed ref (refs/heads/ dropped, as it does). */
function trackingRef(remote: RemoteConfig, ref: string): string {
  return `refs/remotes/${remote.name}/${ref.replace(/^refs\/heads\//, '')}`;
}

/** Push one of memgit's own refs (not a fast-forward only with `force`). */
export async function pushMemgitRef(gitdir: string, remote: RemoteConfig, ref: string, force: boolean): Promise<void> {
  const result = await git.push({ fs, http, gitdir, url: remote.url, remote: remote.name, ref, remoteRef: ref, force, ...authFor(remote) });
  if (!result.ok) {
    const detail = Object.values(result.refs ?? {}).find((r) => !r.ok)?.error ?? result.error ?? 'refused';
    throw new Error(`the remote refused ${ref}: ${detail}`);
  }
  // isomorphic-git records every pushed ref as refs/remotes/NAME/<ref>, here refs/remotes/NAME/refs/memgit/…,
  // which git would not (no fetch refspec maps refs/memgit/): memgit keeps what it pushed in its state.
  await git.deleteRef({ fs, gitdir, ref: trackingRef(remote, ref) }).catch(() => undefined);
}

/** Make a transport error fit for a log line: no URL credentials, no tokens (they are never in it). */
export function describeTransportError(error: unknown, remote: RemoteConfig): string {
  const e = error as { code?: string; message?: string; data?: { statusCode?: number; statusMessage?: string } };
  if (e?.code === 'UserCanceledError' || e?.data?.statusCode === 401 || e?.data?.statusCode === 403) {
    return `authentication failed at ${displayUrl(remote.url)} (check ${remote.tokenEnv ?? 'the token variable (--token-env)'})`;
  }
  if (e?.data?.statusCode) return `${displayUrl(remote.url)} answered HTTP ${e.data.statusCode} ${e.data.statusMessage ?? ''}`.trim();
  const message = String(e?.message ?? error);
  if (/ECONNREFUSED|ENOTFOUND|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|socket hang up/.test(message)) {
    return `${displayUrl(remote.url)} is unreachable (${message.match(/E[A-Z]+|socket hang up/)?.[0]})`;
  }
  return message.replace(/https?:\/\/[^\s'"]+/g, (u) => displayUrl(u));
}
