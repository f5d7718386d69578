import type { ReplicationPort } from './port';
import type { RemoteConfig } from './remote-config';
import { displayUrl } from './remote-config';
import { readRemoteState } from './state';

/** How far one remote is behind: what a lost disk would cost right now (the recovery point). */
export interface ReplicationStatus {
  remote: string;
  url: string;
  auto: boolean;
  /** The last commit memgit pushed there (null: never). */
  pushed: string | null;
  pushedAt: string | null;
  /** Commits not yet on the remote. */
  lagCommits: number;
  /** Time of the oldest commit not yet on the remote, and its age in seconds. */
  oldestUnpushedAt: string | null;
  oldestUnpushedAgeSeconds: number | null;
  stopped: { reason: string; at: string } | null;
  lastError: { message: string; at: string; attempts: number } | null;
  /** What is wrong with the remote's HEAD as last checked (by `remote add` or a push), else null. */
  headProblem: string | null;
}

export function replicationStatus(port: ReplicationPort, remote: RemoteConfig, now = Date.now()): ReplicationStatus {
  const state = readRemoteState(port.gitdir, remote.name);
  const unpushed = port.commitsAfter(state.pushed) ?? port.commitsAfter(null) ?? [];
  const oldest = unpushed[0];
  return {
    remote: remote.name,
    url: displayUrl(remote.url),
    auto: remote.auto,
    pushed: state.pushed,
    pushedAt: state.pushedAt,
    lagCommits: unpushed.length,
    oldestUnpushedAt: oldest ? new Date(oldest.time * 1000).toISOString() : null,
    oldestUnpushedAgeSeconds: oldest ? Math.max(0, Math.round(now / 1000 - oldest.time)) : null,
    stopped: state.stopped,
    lastError: state.lastError,
    headProblem: state.headProblem ?? null,
  };
}
