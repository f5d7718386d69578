import type { BackgroundJobs } from './background';
import type { DurableFs } from './durable-fs';
import { scanForSecrets, type FlagIndex } from './flags';
import type { HistoryIndex } from './history-index';
import type { ObjectStore } from './objects';
import type { RedactionPort } from './redaction';
import type { ReplicationPort } from './replication';
import type { ReviewPort } from './review';
import type { RollbackPort } from './rollback';
import type { TreeCache } from './tree-cache';
import type { WriteProtocol } from './write-protocol';

/**
 * The narrow interfaces the store hands the operations on its history (src/store/redaction,
 * src/store/replication, src/store/rollback), so that none of those folders imports the store: each port
 * names all that its feature may touch, and every write it makes goes through the write protocol.
 */

/** The parts of an open store the ports are made of. */
export interface PortParts {
  dir: string;
  gitdir: string;
  durableFs: DurableFs;
  objects: ObjectStore;
  history: HistoryIndex;
  trees: TreeCache;
  protocol: WriteProtocol;
  jobs: BackgroundJobs;
  flags: FlagIndex;
  log: (message: string) => void;
}

export function redactionPort(p: PortParts): RedactionPort {
  return {
    dir: p.dir,
    gitdir: p.gitdir,
    objects: p.objects,
    durableFs: p.durableFs,
    entries: () => p.history.all(),
    head: () => p.protocol.readHead(),
    exclusive: (task) =>
      p.protocol.run(async () => {
        await p.protocol.refreshHead();
        return task();
      }),
    afterRewrite: async (oldHead, newHead) => {
      await p.protocol.afterHistoryRewrite(oldHead, newHead);
      await p.flags.idle();
      p.flags.reset();
    },
    announce: () => p.jobs.announce(), // replicas and flags see the rewritten history
    log: (message) => p.log(message),
  };
}

/** HEAD, the history as a list of commits, a fast-forward under the write lock, and commit notifications. */
export function replicationPort(p: PortParts, readOnly: boolean): ReplicationPort {
  const { history } = p;
  return {
    dir: p.dir,
    gitdir: p.gitdir,
    readOnly,
    head: () => p.protocol.refreshHead(),
    commitsAfter: (commit) => {
      const start = commit === null ? 0 : history.position(commit);
      if (start === undefined) return null;
      // By position, not all(): only the entries asked for are parsed (a snapshot-loaded index).
      const commits: Array<{ commit: string; time: number }> = [];
      for (let i = commit === null ? 0 : start + 1; i < history.size; i++) {
        const e = history.at(i)!;
        commits.push({ commit: e.commit, time: e.time });
      }
      return commits;
    },
    fastForward: (commit) => p.protocol.fastForward(commit),
    onCommitted: (listener) => p.jobs.onCommitted(listener),
    log: (message) => p.log(message),
  };
}

/** The objects and history to plan with, points, and one commit through the store's write path. */
export function rollbackPort(p: PortParts, store: Pick<RollbackPort, 'resolvePoint' | 'writeCommit'>): RollbackPort {
  return {
    objects: p.objects,
    history: p.history,
    commitTree: (commit) => p.trees.commitTree(commit),
    refreshHead: () => p.protocol.refreshHead(),
    resolvePoint: (ref) => store.resolvePoint(ref),
    writeCommit: (build) => store.writeCommit(build),
  };
}

/** Main's history and objects, readers of trees, and writes on main or review refs through the write protocol. */
export function reviewPort(p: PortParts, options: { readOnly: boolean; now: () => number }): ReviewPort {
  return {
    gitdir: p.gitdir,
    objects: p.objects,
    history: p.history,
    durableFs: p.durableFs,
    commitTree: (commit) => p.trees.commitTree(commit),
    readerAt: (tree) => p.trees.readerAt(tree),
    refreshHead: () => p.protocol.refreshHead(),
    exclusive: (task) =>
      p.protocol.run(async () => {
        await p.protocol.refreshHead();
        return task();
      }),
    commitOn: (ref, base, build) => p.protocol.commit(base, build, { ref }),
    createRef: (ref, commit) => p.protocol.createRef(ref, commit),
    deleteRef: (ref) => p.protocol.deleteRef(ref),
    scanSecrets: (text) => scanForSecrets(text),
    now: options.now,
    readOnly: options.readOnly,
    log: (message) => p.log(message),
  };
}
