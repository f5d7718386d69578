import { ReplicationRefusedError, ReplicationStoppedError } from '../errors';
import type { ReplicationPort } from './port';
import type { RemoteConfig } from './remote-config';
import { displayUrl } from './remote-config';
import { readRemoteState, updateRemoteState } from './state';
import { inspectRemoteHead } from './remote-head';
import { deleteRemoteRef, describeTransportError, localMemgitRefs, localReviewBranches, pushBranch, pushMemgitRef, REVIEW_BRANCHES } from './transport';

export interface PushReport {
  remote: string;
  /** The commit the remote's branch now points at. */
  head: string;
  /** Commits this push carried (0 when the remote was up to date). */
  commits: number;
  forced: boolean;
  /** What is wrong with the remote's HEAD (see checkRemoteHead), null when nothing is known to be. */
  headProblem: string | null;
}

export interface PushOptions {
  /** Overwrite the remote branch even if it holds commits this store does not know. Needs a reason. */
  force?: boolean;
  reason?: string;
}

/**
 * Push the store's branch to one remote. The replica is a mirror, never a second writer: when the remote
 * branch holds a commit that is not in this store's history, the push is refused, replication of that
 * remote stops (recorded, so every process and `memgit status` see it), and only an explicit, logged
 * force push (for history that was meant to be rewritten) goes on.
 */
export async function pushToRemote(port: ReplicationPort, remote: RemoteConfig, options: PushOptions = {}): Promise<PushReport> {
  if (port.readOnly) throw new ReplicationRefusedError('this store is a read-only clone; it never pushes');
  const state = readRemoteState(port.gitdir, remote.name);
  if (state.pendingForce && !options.force) options = { force: true, reason: state.pendingForce };
  const force = !!options.force;
  if (force && !options.reason?.trim()) throw new ReplicationRefusedError('a force push needs a reason (--reason)');
  if (state.stopped && !force) throw new ReplicationStoppedError(remote.name, state.stopped.reason);
  let outcome: { head: string; theirs: string | null; carried: number; stopped: string | null } | null = null;
  try {
    const result = await pushBranch(port.gitdir, remote, force, (theirs, ours) => {
      const carried = port.commitsAfter(theirs);
      if (theirs === ours) {
        outcome = { head: ours, theirs, carried: 0, stopped: null };
        return false;
      }
      if (theirs !== null && carried === null && !force) {
        const reason =
          `the branch at ${displayUrl(remote.url)} holds commit ${theirs.slice(0, 12)}, which this store does not have: ` +
          'someone else wrote to the replica. memgit will not overwrite it; replication to this remote is stopped ' +
          '(inspect the remote, then `memgit push --force --reason ...` if this store is the one to keep)';
        outcome = { head: ours, theirs, carried: 0, stopped: reason };
        return false;
      }
      if (force) port.log(`force-pushing ${ours.slice(0, 12)} to ${remote.name} (${displayUrl(remote.url)}), replacing ${theirs?.slice(0, 12) ?? 'nothing'}: ${options.reason}`);
      // Commits after theirs up to HEAD; HEAD may have moved on since `ours` was read, so count to `ours`.
      const upToOurs = (carried ?? port.commitsAfter(null) ?? []).findIndex((c) => c.commit === ours);
      outcome = { head: ours, theirs, carried: upToOurs + 1, stopped: null };
      return true;
    });
    const done = outcome as { head: string; theirs: string | null; carried: number; stopped: string | null } | null;
    if (!done) throw new Error('the remote answered without a ref advertisement');
    if (done.stopped) {
      updateRemoteState(port.gitdir, remote.name, { stopped: { reason: done.stopped, at: new Date().toISOString() } });
      port.log(`replication to ${remote.name} stopped: ${done.stopped}`);
      throw new ReplicationStoppedError(remote.name, done.stopped);
    }
    updateRemoteState(port.gitdir, remote.name, {
      pushed: done.head,
      pushedAt: new Date().toISOString(),
      lastError: null,
      ...(force ? { stopped: null, pendingForce: null } : {}),
    });
    // Then memgit's own refs (the redaction audit log), each once it changed: the record follows the
    // history it describes. A failure here is a failed push like any other, retried by the next one.
    const sent = { ...(readRemoteState(port.gitdir, remote.name).memgitRefs ?? {}) };
    // Review branches too (held writes): forced, as a session's next review forks anew from main.
    const reviewBranches = await localReviewBranches(port.gitdir);
    for (const [ref, oid] of [...(await localMemgitRefs(port.gitdir)), ...reviewBranches]) {
      if (sent[ref] === oid) continue;
      await pushMemgitRef(port.gitdir, remote, ref, force || ref.startsWith(REVIEW_BRANCHES));
      sent[ref] = oid;
      updateRemoteState(port.gitdir, remote.name, { memgitRefs: sent });
      port.log(`pushed ${ref} (${oid.slice(0, 12)}) to ${remote.name}`);
    }
    // A decided review's branch is gone here (its archive was pushed above): remove it there too.
    for (const ref of Object.keys(sent)) {
      if (!ref.startsWith(REVIEW_BRANCHES) || reviewBranches.has(ref)) continue;
      await deleteRemoteRef(port.gitdir, remote, ref);
      delete sent[ref];
      updateRemoteState(port.gitdir, remote.name, { memgitRefs: sent });
      port.log(`deleted ${ref} at ${remote.name} (its review was decided)`);
    }
    const headProblem = await recheckRemoteHead(port, remote, state.headProblem);
    return { remote: remote.name, head: done.head, commits: result === 'pushed' ? done.carried : 0, forced: force && result === 'pushed', headProblem };
  } catch (error) {
    if (error instanceof ReplicationStoppedError || error instanceof ReplicationRefusedError) throw error;
    const message = describeTransportError(error, remote);
    const attempts = (state.lastError?.attempts ?? 0) + 1;
    updateRemoteState(port.gitdir, remote.name, { lastError: { message, at: new Date().toISOString(), attempts } });
    throw new ReplicationRefusedError(`push to ${remote.name} failed: ${message}`);
  }
}

/**
 * Whether the remote's HEAD names memgit's branch, asked after a push until it is found to (then never
 * again: one round trip per push only while something is wrong). Logged once per new finding; a failure
 * to ask changes nothing and is asked again by the next push.
 */
async function recheckRemoteHead(port: ReplicationPort, remote: RemoteConfig, known: string | null | undefined): Promise<string | null> {
  if (known === null) return null;
  let problem: string | null;
  try {
    problem = await inspectRemoteHead(port.gitdir, remote);
  } catch {
    return known ?? null;
  }
  if (problem && problem !== known) port.log(`warning: ${remote.name}: ${problem}`);
  return problem;
}
