import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * What memgit knows of each remote: the last commit it pushed there, and why replication stopped, if it
 * did. A small JSON file under `.git/memgit/`, replaced atomically. It is advisory: if it is lost or
 * stale, the next push asks the remote and catches up; nothing in it is needed to keep data safe.
 */
export interface RemoteState {
  pushed: string | null;
  pushedAt: string | null;
  /** Replication refused to go on (the remote moved); only an explicit force push clears it. */
  stopped: { reason: string; at: string } | null;
  lastError: { message: string; at: string; attempts: number } | null;
  /** History was rewritten on purpose (a redaction): the next push replaces the remote branch, logged. */
  pendingForce?: string | null;
  /** What each of memgit's own refs (refs/memgit/...) pointed at when last pushed there. */
  memgitRefs?: Record<string, string>;
  /**
   * What is wrong with the remote's HEAD (it names a branch other than main, or one it does not have),
   * as last checked; null when it names main; missing when never checked.
   */
  headProblem?: string | null;
}

interface StateFile {
  version: 1;
  remotes: Record<string, RemoteState>;
}

const EMPTY: RemoteState = { pushed: null, pushedAt: null, stopped: null, lastError: null };

function stateFile(gitdir: string): string {
  return path.join(gitdir, 'memgit', 'replication-v1.json');
}

function readAll(gitdir: string): StateFile {
  try {
    const parsed = JSON.parse(fs.readFileSync(stateFile(gitdir), 'utf8')) as StateFile;
    if (parsed?.version === 1 && typeof parsed.remotes === 'object' && parsed.remotes) return parsed;
  } catch {
    // missing or torn: start afresh, the next push asks the remote
  }
  return { version: 1, remotes: {} };
}

function stateOf(all: StateFile, remote: string): RemoteState {
  return { ...EMPTY, ...(Object.prototype.hasOwnProperty.call(all.remotes, remote) ? all.remotes[remote] : {}) };
}

/** Replace the file whole: temp file, then rename, so a reader sees the old or the new state. */
function writeAll(gitdir: string, all: StateFile): void {
  const file = stateFile(gitdir);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.memgit-tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  fs.writeFileSync(temp, JSON.stringify(all, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temp, file);
}

export function readRemoteState(gitdir: string, remote: string): RemoteState {
  return stateOf(readAll(gitdir), remote);
}

export function updateRemoteState(gitdir: string, remote: string, change: Partial<RemoteState>): RemoteState {
  const all = readAll(gitdir);
  const next = { ...stateOf(all, remote), ...change };
  all.remotes[remote] = next;
  writeAll(gitdir, all);
  return next;
}

export function forgetRemoteState(gitdir: string, remote: string): void {
  const all = readAll(gitdir);
  if (!Object.prototype.hasOwnProperty.call(all.remotes, remote)) return;
  delete all.remotes[remote];
  writeAll(gitdir, all);
}
