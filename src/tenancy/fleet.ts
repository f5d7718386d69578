import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  addRemote,
  cloneStore,
  displayUrl,
  type ErrorCode,
  errorDetail,
  getRemote,
  historyContains,
  listRemotes,
  localBranchHead,
  MemgitError,
  MemoryStore,
  pushToRemote,
  remoteBranchHead,
  replicationStatus,
  ReplicationStoppedError,
} from '../store';
import { assertStoreId } from './store-id';

/**
 * A node's role in a fleet (docs/fleet.md): many `memgit server` nodes behind HAProxy, which routes each
 * store to one node by a consistent hash of its id, and a git server that holds every store and is the
 * source of truth. memgit adds no consensus of its own: the git server's branch decides who owns a store.
 *
 * - A node serves a store only from a copy it has checked against the git server when it opened it: the
 *   same head, or ahead of it (its own unpushed commits); otherwise it sets its copy aside and clones the
 *   store again (re-sync) before answering.
 * - Its pushes are fast-forward only. A node whose push is refused because the git server's branch holds
 *   commits it does not have (another node took the store over while it was away) is fenced: it refuses
 *   the store's calls (store_fenced), waits for the calls in flight, sets its copy aside and re-syncs
 *   (store_syncing meanwhile), then serves again. No write of a stale node reaches the git server's branch.
 * - `ack: 'replicated'`: a write is acknowledged only once the git server holds its commit (concurrent
 *   calls of a store share pushes: one push carries every commit made before it starts); a failed push
 *   answers not_replicated, truthfully: the call is not acknowledged (a retry of the same tool_use id is
 *   recognised, not applied twice, and acknowledged once a push carries it).
 * - `ack: 'local'`: acknowledged once committed on the node, pushed in the background; a node that dies
 *   loses what it had not pushed yet (the push lag), and a fenced node's unpushed calls are set aside.
 */

export type AckMode = 'replicated' | 'local';
export const ACK_MODES: readonly AckMode[] = ['replicated', 'local'];

export interface FleetOptions {
  /** This node's name (in logs, /healthz and the X-Memgit-Node header). */
  node: string;
  /** Every store's repository on the git server: a URL with `{store}` in it, e.g. https://git.example.com/memgit/{store}.git. */
  remote: string;
  /** Environment variable holding the git server's token (its name only; read when needed). */
  tokenEnv?: string | null;
  /** Basic-auth user name sent with the token. */
  user?: string;
  ack: AckMode;
  log?: (message: string) => void;
}

/** What a fleet node tells the registry (src/tenancy/registry.ts) about each use and opening of a store. */
export interface StoreGate {
  /** Throw when the store may not be used now (fenced, re-syncing). Called on every use. */
  admit(id: string): void;
  /** Before the store is opened: bring the folder up to date from the source of truth. */
  prepare(id: string, dir: string, create: boolean): Promise<void>;
  /** Once the store is open (or created). */
  opened(id: string, store: MemoryStore): Promise<void>;
}

/** The registry as a fleet node needs it: to close a store before its folder is replaced. */
export interface Evictor {
  evict(id: string): Promise<void>;
}

/** This node lost the store to another node: it refuses its calls until it has re-synced. */
export class StoreFencedError extends MemgitError {
  static override readonly code: ErrorCode = 'store_fenced';

  constructor(
    readonly storeId: string,
    readonly node: string,
  ) {
    super(`store ${JSON.stringify(storeId)}: node ${node} no longer holds the newest copy (another node wrote it to the git server); nothing was acknowledged, and the node re-syncs before serving it again; retry`);
  }
}

/** The node is bringing its copy of the store up to date from the git server. */
export class StoreSyncingError extends MemgitError {
  static override readonly code: ErrorCode = 'store_syncing';

  constructor(
    readonly storeId: string,
    reason?: string,
  ) {
    super(
      reason
        ? `store ${JSON.stringify(storeId)} cannot be served until it is checked against its git server (${reason}); nothing was written; retry in a moment`
        : `store ${JSON.stringify(storeId)} is being brought up to date from its git server; retry in a moment`,
    );
  }
}

/** The call was committed on this node, but the git server did not take it: it is not acknowledged. */
export class NotReplicatedError extends MemgitError {
  static override readonly code: ErrorCode = 'not_replicated';

  constructor(
    readonly storeId: string,
    reason: string,
  ) {
    super(`store ${JSON.stringify(storeId)}: the call was written on this node but not acknowledged: its git server did not take it (${reason}); retry the same tool_use id`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Placement: rendezvous (highest random weight) hashing. Every node, and any tool, computes the same
// owner for a store from the list of nodes alone; removing a node moves only the stores it held.

function score(node: string, store: string): bigint {
  return createHash('sha256').update(node).update('\0').update(store).digest().readBigUInt64BE(0);
}

/** The nodes in the order that store `store` goes to them: the first is its owner, the next its fallback. */
export function placementOrder(store: string, nodes: readonly string[]): string[] {
  return [...nodes].map((node) => ({ node, s: score(node, store) })).sort((a, b) => (a.s === b.s ? (a.node < b.node ? -1 : 1) : a.s > b.s ? -1 : 1)).map((e) => e.node);
}

/** The node that owns store `store` (among `nodes`, of which there must be one at least). */
export function placeStore(store: string, nodes: readonly string[]): string {
  if (nodes.length === 0) throw new TypeError('a fleet needs at least one node');
  let best = nodes[0];
  let bestScore = score(best, store);
  for (const node of nodes.slice(1)) {
    const s = score(node, store);
    if (s > bestScore || (s === bestScore && node < best)) [best, bestScore] = [node, s];
  }
  return best;
}

/** How evenly `stores` spread over `nodes`: stores per node, and the fullest node against the mean. */
export function placementBalance(stores: readonly string[], nodes: readonly string[]): { perNode: Record<string, number>; mean: number; max: number; maxOverMean: number } {
  const perNode: Record<string, number> = Object.fromEntries(nodes.map((n) => [n, 0]));
  for (const store of stores) perNode[placeStore(store, nodes)]++;
  const mean = stores.length / nodes.length;
  const max = Math.max(...Object.values(perNode));
  return { perNode, mean, max, maxOverMean: mean === 0 ? 0 : max / mean };
}

// ---------------------------------------------------------------------------------------------------

type Phase = 'serving' | 'fenced' | 'syncing';

interface StoreState {
  phase: Phase;
  running: Promise<string> | null;
  queued: Promise<string> | null;
}

export interface FleetHealth {
  node: string;
  ack: AckMode;
  /** Stores this node was fenced from (its push refused) since it started. */
  fenced: number;
  /** Copies set aside and cloned again from the git server (at opening or after a fence). */
  resynced: number;
  /** Of those, copies that held commits the git server did not (kept under .memgit/fenced/). */
  setAsideWithUnpushed: number;
  /** Pushes made, and commits they carried (their ratio is the batch size). */
  pushes: number;
  pushedCommits: number;
  /** Stores now fenced or re-syncing. */
  unavailable: string[];
}

export class FleetNode implements StoreGate {
  readonly node: string;
  readonly ack: AckMode;
  private readonly root: string;
  private readonly remoteTemplate: string;
  private readonly tokenEnv: string | null;
  private readonly user: string | undefined;
  private readonly log: (message: string) => void;
  private readonly states = new Map<string, StoreState>();
  private registry: Evictor | null = null;
  private readonly counts = { fenced: 0, resynced: 0, setAsideWithUnpushed: 0, pushes: 0, pushedCommits: 0 };
  private readonly resyncs = new Set<Promise<void>>();

  constructor(root: string, options: FleetOptions) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(options.node)) throw new TypeError(`fleet node name: letters, digits, '.', '_' and '-' only, got ${JSON.stringify(options.node)}`);
    if (!ACK_MODES.includes(options.ack)) throw new TypeError(`ack must be replicated or local, got ${JSON.stringify(options.ack)}`);
    if (!options.remote.includes('{store}')) throw new TypeError('the fleet remote must name the store with {store}, e.g. https://git.example.com/memgit/{store}.git');
    if (!/^https?:\/\//.test(options.remote)) throw new TypeError('the fleet remote must be an http(s) URL');
    this.root = path.resolve(root);
    this.node = options.node;
    this.ack = options.ack;
    this.remoteTemplate = options.remote;
    this.tokenEnv = options.tokenEnv ?? null;
    this.user = options.user;
    this.log = options.log ?? ((message) => process.stderr.write(`memgit: fleet: ${message}\n`));
  }

  /** The registry whose stores this node gates (to close a store before its folder is replaced). */
  attach(registry: Evictor): void {
    this.registry = registry;
  }

  /** The git server's URL of store `id`. */
  remoteUrl(id: string): string {
    assertStoreId(id);
    return this.remoteTemplate.split('{store}').join(id);
  }

  health(): FleetHealth {
    return {
      node: this.node,
      ack: this.ack,
      ...this.counts,
      unavailable: [...this.states.entries()].filter(([, s]) => s.phase !== 'serving').map(([id]) => id).sort(),
    };
  }

  admit(id: string): void {
    const state = this.states.get(id);
    if (state?.phase === 'fenced') throw new StoreFencedError(id, this.node);
    if (state?.phase === 'syncing') throw new StoreSyncingError(id);
  }

  /**
   * Before store `id` is opened here: serve the local copy only when the git server's branch is the same
   * commit or an ancestor of it; otherwise set the copy aside and clone the store from the git server.
   */
  async prepare(id: string, dir: string, _create: boolean): Promise<void> {
    const state = this.stateOf(id);
    const before = state.phase;
    state.phase = 'syncing';
    try {
      await this.syncFolder(id, dir);
    } finally {
      // A fence found meanwhile keeps its own phase; otherwise the store is served again.
      if (state.phase === 'syncing') state.phase = before === 'fenced' ? 'fenced' : 'serving';
    }
  }

  async opened(id: string, store: MemoryStore): Promise<void> {
    const url = this.remoteUrl(id);
    const args = { fs, gitdir: store.gitdir };
    const remotes = await listRemotes(args);
    const origin = remotes.find((r) => r.name === 'origin');
    if (!origin) await addRemote(args, { name: 'origin', url, tokenEnv: this.tokenEnv, user: this.user, auto: false });
    else if (origin.url !== url) this.log(`store ${id}: its remote origin is ${displayUrl(origin.url)}, not the fleet's ${displayUrl(url)}; the fleet pushes to origin`);
    // Every commit this node makes reaches the git server without waiting for the next call: in local
    // mode at once (the acknowledgement did not wait for it), in replicated mode a second later for the
    // commits no acknowledgement pushed (an operator's rollback in the audit UI, say).
    let timer: NodeJS.Timeout | null = null;
    store.replication().onCommitted(() => {
      if (this.ack === 'local') return this.pushInBackground(id, store);
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        if (this.states.get(id)?.phase !== 'serving') return;
        // Only when something is left to push (an acknowledged call's push has usually carried it all).
        getRemote({ fs, gitdir: store.gitdir }, 'origin')
          .then((remote) => {
            if (replicationStatus(store.replication(), remote).lagCommits > 0) this.pushInBackground(id, store);
          })
          .catch(() => undefined);
      }, 1000);
      timer.unref();
    });
    // Commits left unpushed by an earlier life of this node (local mode, or a push that failed) go now.
    if (this.ack === 'local') this.pushInBackground(id, store);
  }

  /**
   * Acknowledge a call that committed `commit` on store `id`: in replicated mode, once the git server
   * holds it (NotReplicatedError when it does not take it, StoreFencedError when another node wrote the
   * store meanwhile); in local mode at once, the push following in the background.
   */
  async acknowledge(id: string, store: MemoryStore, commit: string, on: 'main' | 'review branch' = 'main'): Promise<void> {
    this.admit(id);
    if (this.ack === 'local') return; // pushed in the background as it was committed (opened)
    let head: string;
    try {
      head = await this.push(id, store);
    } catch (error) {
      if (error instanceof StoreFencedError) throw error;
      throw new NotReplicatedError(id, errorDetail(error));
    }
    // A held write's commit is on its review branch: the push that succeeded carried it with main.
    if (on === 'main' && !(await historyContains(store.gitdir, head, commit))) throw new NotReplicatedError(id, `the git server holds ${head.slice(0, 12)}, which does not contain ${commit.slice(0, 12)}`);
  }

  /** Wait for the re-syncs under way (tests, and a node shutting down). */
  async settled(): Promise<void> {
    while (this.resyncs.size > 0) await Promise.all([...this.resyncs]);
  }

  private stateOf(id: string): StoreState {
    let state = this.states.get(id);
    if (!state) this.states.set(id, (state = { phase: 'serving', running: null, queued: null }));
    return state;
  }

  private pushInBackground(id: string, store: MemoryStore): void {
    this.push(id, store).catch((error: unknown) => {
      if (!(error instanceof StoreFencedError)) this.log(`store ${id}: push failed, retried with the next call: ${errorDetail(error)}`);
    });
  }

  /**
   * Push store `id`'s branch, sharing pushes between concurrent callers: with no push running one starts
   * now; with one running, every caller meanwhile waits for the one next push, which starts when it ends
   * and carries everything committed before it. Resolves to the commit the git server's branch holds.
   */
  private push(id: string, store: MemoryStore): Promise<string> {
    const state = this.stateOf(id);
    if (!state.running) {
      state.running = this.pushNow(id, store).finally(() => {
        state.running = null;
      });
      return state.running;
    }
    state.queued ??= state.running
      .catch(() => undefined)
      .then(() => {
        state.queued = null;
        return this.push(id, store);
      });
    return state.queued;
  }

  private async pushNow(id: string, store: MemoryStore): Promise<string> {
    const remote = await getRemote({ fs, gitdir: store.gitdir }, 'origin');
    try {
      const report = await pushToRemote(store.replication(), remote);
      this.counts.pushes++;
      this.counts.pushedCommits += report.commits;
      return report.head;
    } catch (error) {
      if (error instanceof ReplicationStoppedError) {
        this.fence(id, error.reason);
        throw new StoreFencedError(id, this.node);
      }
      throw error;
    }
  }

  /** Refuse store `id` from now on, and re-sync it once the calls in flight have ended. */
  private fence(id: string, reason: string): void {
    const state = this.stateOf(id);
    if (state.phase === 'fenced') return;
    state.phase = 'fenced';
    this.counts.fenced++;
    this.log(`store ${id}: fenced on node ${this.node}: ${reason}`);
    const resync = (async () => {
      await this.registry?.evict(id);
      state.phase = 'syncing';
      const dir = path.join(this.root, id);
      await this.syncFolder(id, dir, true);
      state.phase = 'serving';
      this.log(`store ${id}: re-synced from the git server; node ${this.node} serves it again`);
    })()
      .catch((error: unknown) => {
        // The folder is set aside or cloned again by the next opening.
        state.phase = 'serving';
        this.log(`store ${id}: re-sync failed, retried when the store is next opened: ${errorDetail(error)}`);
      })
      .finally(() => this.resyncs.delete(resync));
    this.resyncs.add(resync);
  }

  /**
   * Make `dir` a copy of store `id` fit to serve: kept when the git server's branch is empty, the same
   * commit or behind it (`always`: set aside whatever it holds), otherwise set aside under
   * `.memgit/fenced/` and cloned again from the git server.
   */
  private async syncFolder(id: string, dir: string, always = false): Promise<void> {
    const url = this.remoteUrl(id);
    // A node that cannot ask the git server cannot know whether its copy is current: it does not serve it.
    const remoteHead = await remoteBranchHead({ url, tokenEnv: this.tokenEnv, user: this.user }).catch((error: unknown) => {
      throw new StoreSyncingError(id, errorDetail(error));
    });
    const localHead = await localBranchHead(dir);
    const hasFolder = fs.existsSync(path.join(dir, '.git'));
    if (remoteHead === null) {
      if (always && localHead) this.log(`store ${id}: the git server holds no branch for it; serving the local copy`);
      return; // nothing on the git server yet: the local copy (or a new store) is what there is
    }
    if (!always && localHead && (await historyContains(path.join(dir, '.git'), localHead, remoteHead))) return;
    let asideHead: string | null = null;
    if (hasFolder) {
      const aside = path.join(this.root, '.memgit', 'fenced', `${id}.${new Date().toISOString().replace(/[:.]/g, '-')}.${process.pid}`);
      await fs.promises.mkdir(path.dirname(aside), { recursive: true, mode: 0o700 });
      await fs.promises.rename(dir, aside);
      asideHead = localHead;
      this.log(`store ${id}: local copy at ${localHead?.slice(0, 12) ?? 'nothing'} set aside (${path.relative(this.root, aside)}); the git server holds ${remoteHead.slice(0, 12)}`);
    } else if (fs.existsSync(dir)) {
      await fs.promises.rm(dir, { recursive: true, force: true }); // an empty or half-made folder
    }
    await cloneStore(url, dir, { readOnly: false, tokenEnv: this.tokenEnv, user: this.user });
    this.counts.resynced++;
    if (asideHead && !(await historyContains(path.join(dir, '.git'), remoteHead, asideHead))) {
      this.counts.setAsideWithUnpushed++;
      this.log(`store ${id}: the copy set aside held commits the git server does not (never acknowledged in replicated mode)`);
    }
  }
}
