import * as fs from 'node:fs';
import * as path from 'node:path';
import { listRemotes, replicationStatus } from '../store/replication';
import { MemoryStore, StoreOptions } from '../store/memory-store';
import { isValidStoreId, storeDir } from './store-id';

/**
 * Many stores under one root: store `acme-1` is the ordinary memgit store in `<root>/acme-1`. Open stores
 * are kept in a bounded LRU and closed when idle (a store is never closed while a call uses it), so a
 * server with thousands of stores holds a bounded number of open stores and file descriptors. Other
 * processes (`memgit exec`, the CLI) may use the same stores at the same time: each store's own lock
 * serialises the writers.
 *
 * The registry also bounds each store's queue: a store with `maxQueue` calls in flight refuses the next
 * one at once (QueueFullError) instead of letting waiting calls pile up without limit.
 */

export interface RegistryOptions {
  root: string;
  /** Most stores kept open at once (default 256). Busy stores are never closed, so this can be exceeded briefly. */
  maxOpen?: number;
  /** A store unused for this long is closed (ms, default 60,000). */
  idleMs?: number;
  /** Most calls in flight per store, running or waiting (default 64). */
  maxQueue?: number;
  /** Options for every store opened (log, fsync, createMode, ...). `create` is decided per use. */
  storeOptions?: Omit<StoreOptions, 'create'>;
}

export class StoreNotFoundError extends Error {
  constructor(readonly storeId: string) {
    super(`no store ${JSON.stringify(storeId)}`);
    this.name = 'StoreNotFoundError';
  }
}

export class QueueFullError extends Error {
  constructor(
    readonly storeId: string,
    readonly retryAfterSeconds: number,
  ) {
    super(`store ${JSON.stringify(storeId)} has too many calls in flight; retry in ${retryAfterSeconds} s`);
    this.name = 'QueueFullError';
  }
}

export class RegistryClosedError extends Error {
  constructor() {
    super('the store registry is closed (the server is shutting down)');
    this.name = 'RegistryClosedError';
  }
}

export interface StoreSummary {
  id: string;
  /** Memory tool calls committed (agent commits). */
  calls: number;
  sessions: number;
  /** ISO time of the newest commit, or null for a store with only its first commit. */
  lastWrite: string | null;
  /** Bytes on disk (the whole folder, .git included). */
  bytes: number;
  head: string | null;
  /** Calls flagged for writing likely secrets or personal data (src/store/flags), as scanned so far. */
  flagged: number;
  /** Replicas of the store: how many, how many stopped (a remote that moved), and the largest lag in commits. */
  replicas: { count: number; stopped: number; maxLagCommits: number };
}

interface OpenEntry {
  opening: Promise<MemoryStore>;
  store: MemoryStore | null;
  users: number;
  inFlight: number;
  lastUsed: number;
}

export class StoreRegistry {
  readonly root: string;
  private readonly maxOpen: number;
  private readonly idleMs: number;
  private readonly maxQueue: number;
  private readonly storeOptions: Omit<StoreOptions, 'create'>;
  private readonly entries = new Map<string, OpenEntry>();
  private readonly closing = new Set<Promise<void>>();
  private readonly sizes = new Map<string, { head: string | null; bytes: number }>();
  private readonly idleTimer: NodeJS.Timeout;
  private closed = false;
  private users = 0;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(options: RegistryOptions) {
    this.root = path.resolve(options.root);
    this.maxOpen = positive(options.maxOpen ?? 256, 'maxOpen');
    this.idleMs = positive(options.idleMs ?? 60_000, 'idleMs');
    this.maxQueue = positive(options.maxQueue ?? 64, 'maxQueue');
    this.storeOptions = options.storeOptions ?? {};
    fs.mkdirSync(this.root, { recursive: true });
    this.idleTimer = setInterval(() => this.closeIdle(), Math.max(1000, Math.floor(this.idleMs / 2)));
    this.idleTimer.unref();
  }

  /** The stores open now (for health figures; a store may be closed right after). */
  openStores(): MemoryStore[] {
    return [...this.entries.values()].map((e) => e.store).filter((s): s is MemoryStore => s !== null);
  }

  /** How many stores are open now. */
  get openCount(): number {
    return this.entries.size;
  }

  /** Whether store `id` exists (a valid id naming a folder of the root that holds a repository). */
  async exists(id: string): Promise<boolean> {
    if (!isValidStoreId(id)) return false;
    if (this.entries.has(id)) return true;
    const dir = await storeDir(this.root, id).catch(() => null);
    return dir !== null && fs.existsSync(path.join(dir, '.git'));
  }

  /** The ids of every store under the root, sorted. */
  async list(): Promise<string[]> {
    const names = await fs.promises.readdir(this.root, { withFileTypes: true });
    const ids = names.filter((d) => d.isDirectory() && isValidStoreId(d.name) && fs.existsSync(path.join(this.root, d.name, '.git')));
    return ids.map((d) => d.name).sort();
  }

  /**
   * Run `task` on store `id`, opening it (and, with `create`, creating it) if needed. Counts against the
   * store's queue for the whole task. Throws InvalidStoreIdError, StoreNotFoundError, QueueFullError.
   */
  async use<T>(id: string, options: { create: boolean }, task: (store: MemoryStore) => Promise<T>): Promise<T> {
    if (this.closed) throw new RegistryClosedError();
    let entry = this.entries.get(id);
    if (entry && entry.inFlight >= this.maxQueue) throw new QueueFullError(id, 1);
    if (!entry) {
      // The entry is claimed before anything is awaited, so that concurrent first uses of a store share one
      // opening and count against one queue (an invalid id or a missing store rejects it, and it goes).
      const opening = storeDir(this.root, id).then((dir) => {
        if (!options.create && !fs.existsSync(path.join(dir, '.git'))) throw new StoreNotFoundError(id);
        return MemoryStore.open(dir, { ...this.storeOptions, create: options.create });
      });
      entry = { opening, store: null, users: 0, inFlight: 0, lastUsed: Date.now() };
      this.entries.set(id, entry);
      const current = entry;
      opening.then(
        (store) => {
          current.store = store;
        },
        () => {
          if (this.entries.get(id) === current) this.entries.delete(id);
        },
      );
    } else {
      // Most recently used last: Map iteration order is the LRU order.
      this.entries.delete(id);
      this.entries.set(id, entry);
    }
    entry.users += 1;
    entry.inFlight += 1;
    this.users += 1;
    try {
      const store = await entry.opening.catch((error: Error) => {
        if (error.name === 'NotAStoreError' && !options.create) throw new StoreNotFoundError(id);
        throw error;
      });
      this.evictBeyondLimit();
      return await task(store);
    } finally {
      entry.users -= 1;
      entry.inFlight -= 1;
      entry.lastUsed = Date.now();
      this.users -= 1;
      if (this.users === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    }
  }

  /** Totals for the store list (opens the store through the LRU like any other use). */
  async describe(id: string): Promise<StoreSummary> {
    return this.use(id, { create: false }, async (store) => {
      const head = await store.refreshHead();
      const entries = store.history.all();
      const calls = entries.filter((e) => e.toolUseId !== undefined).length;
      const newest = entries.length > 1 ? entries[entries.length - 1] : undefined;
      const cached = this.sizes.get(id);
      const bytes = cached && cached.head === head ? cached.bytes : await folderBytes(store.dir);
      this.sizes.set(id, { head, bytes });
      return {
        id,
        calls,
        sessions: store.history.sessions().length,
        lastWrite: newest ? new Date(newest.time * 1000).toISOString() : null,
        bytes,
        head,
        flagged: store.flags.all().length,
        replicas: await replicaSummary(store),
      };
    });
  }

  /** Stop taking new uses, wait for the ones in flight, close every store. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.idleTimer);
    if (this.users > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const all = [...this.entries.entries()];
    this.entries.clear();
    await Promise.all(all.map(([, entry]) => this.closeEntry(entry)));
    await Promise.all([...this.closing]);
  }

  private evictBeyondLimit(): void {
    for (const [id, entry] of this.entries) {
      if (this.entries.size <= this.maxOpen) break;
      if (entry.users > 0 || !entry.store) continue;
      this.entries.delete(id);
      this.track(this.closeEntry(entry));
    }
  }

  /** Close the stores unused since `idleMs` before `now` (the idle timer calls this). */
  closeIdle(now = Date.now()): void {
    for (const [id, entry] of this.entries) {
      if (entry.users === 0 && entry.store && now - entry.lastUsed >= this.idleMs) {
        this.entries.delete(id);
        this.track(this.closeEntry(entry));
      }
    }
  }

  private track(closing: Promise<void>): void {
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }

  private async closeEntry(entry: OpenEntry): Promise<void> {
    const store = await entry.opening.catch(() => null);
    // A store still in use when the registry closes finishes its queued calls first (close waits for them).
    await store?.close().catch(() => undefined);
  }
}

function positive(value: number, name: string): number {
  if (!(Number.isSafeInteger(value) && value > 0)) throw new TypeError(`${name} must be a positive integer, got ${JSON.stringify(value)}`);
  return value;
}

async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const entries = await fs.promises.readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) total += (await fs.promises.stat(full).catch(() => null))?.size ?? 0;
    }
  }
  return total;
}

async function replicaSummary(store: MemoryStore): Promise<StoreSummary['replicas']> {
  const summary = { count: 0, stopped: 0, maxLagCommits: 0 };
  for (const remote of await listRemotes({ fs, gitdir: store.gitdir }).catch(() => [])) {
    const status = replicationStatus(store.replication(), remote);
    summary.count++;
    if (status.stopped) summary.stopped++;
    summary.maxLagCommits = Math.max(summary.maxLagCommits, status.lagCommits);
  }
  return summary;
}
