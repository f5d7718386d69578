import * as fs from 'node:fs';
import * as path from 'node:path';
import { historyContext } from '../history/context';
import { flaggedCallCount } from '../history/flags';
import { committedCallCount, historySummary } from '../history/summary';
import { type ErrorCode, listRemotes, MemgitError, MemoryStore, NotAStoreError, replicationStatus, StoreOptions } from '../store';
import { StoreCreators, StoreQuotaError } from './creators';
import type { StoreGate } from './fleet';
import { InvalidStoreIdError, isValidStoreId, storeDir } from './store-id';

/**
 * Many stores under one root: store `acme-1` is the ordinary memgit store in `<root>/acme-1`. Open stores
 * are kept in a bounded LRU and closed when idle (a store is never closed while a call uses it), so a
 * server with thousands of stores holds a bounded number of open stores and file descriptors. Other
 * processes (`memgit exec`, the CLI) may use the same stores at the same time: each store's own lock
 * serialises the writers.
 *
 * The registry also bounds each store's queue: a store with `maxQueue` calls in flight refuses the next
 * one at once (QueueFullError) instead of letting waiting calls pile up without limit.
 *
 * Tenants do not trust each other, nor other local users: a folder is a store only when its `.git` is a
 * real directory inside it (not a link, not a gitfile), a store id names a folder of the root exactly
 * (not by case folding), a key creates at most `maxStoresPerKey` stores (recorded in
 * `.memgit/stores.json`) and a store takes writes only while it holds less than `maxStoreBytes`.
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
  /** Most stores one key may create (default 1000; 0 = no bound). Checked before anything is written. */
  maxStoresPerKey?: number;
  /** A store holding this many bytes on disk or more takes no more writes (default 1 GiB; 0 = no bound). */
  maxStoreBytes?: number;
  /** A fleet node's say over each use and opening of a store (src/tenancy/fleet.ts); none outside a fleet. */
  gate?: StoreGate;
}

export const DEFAULT_MAX_STORES_PER_KEY = 1000;
export const DEFAULT_MAX_STORE_BYTES = 1024 * 1024 * 1024;
/** How long a store's measured size is trusted while it is written (far from its bound). */
const SIZE_TRUST_MS = 1000;
/** Within this fraction of its bound, a store is measured before every write. */
const SIZE_CLOSE_FRACTION = 0.9;

export class StoreNotFoundError extends MemgitError {
  static override readonly code: ErrorCode = 'store_not_found';

  constructor(readonly storeId: string) {
    super(`no store ${JSON.stringify(storeId)}`);
  }
}

export class QueueFullError extends MemgitError {
  static override readonly code: ErrorCode = 'queue_full';

  constructor(
    readonly storeId: string,
    readonly retryAfterSeconds: number,
  ) {
    super(`store ${JSON.stringify(storeId)} has too many calls in flight; retry in ${retryAfterSeconds} s`);
  }
}

/** A store at or above `maxStoreBytes`: writes are refused (reads still work), nothing was written. */
export class StoreFullError extends MemgitError {
  static override readonly code: ErrorCode = 'store_full';

  constructor(
    readonly storeId: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`store ${JSON.stringify(storeId)} holds ${bytes} bytes on disk, at or above the limit of ${limit} bytes (--max-store-bytes); reads still work, writes are refused and nothing was written`);
  }
}

/** A new store id that names an existing store's folder on a case-insensitive file system. */
export class StoreIdTakenError extends MemgitError {
  static override readonly code: ErrorCode = 'store_id_taken';

  constructor(
    readonly storeId: string,
    readonly existing: string,
  ) {
    super(`store ${JSON.stringify(storeId)} cannot be created: store ${JSON.stringify(existing)} exists, and ids that differ only in case name one folder on some file systems; nothing was written`);
  }
}

export class RegistryClosedError extends MemgitError {
  static override readonly code: ErrorCode = 'registry_closed';

  constructor() {
    super('the store registry is closed (the server is shutting down)');
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
  private readonly maxStoresPerKey: number;
  private readonly maxStoreBytes: number;
  private readonly storeOptions: Omit<StoreOptions, 'create'>;
  private readonly gate: StoreGate | null;
  private readonly entries = new Map<string, OpenEntry>();
  private readonly closing = new Set<Promise<void>>();
  private readonly sizes = new Map<string, { head: string | null; bytes: number; at: number }>();
  private readonly measuring = new Map<string, Promise<number>>();
  private readonly creators: StoreCreators;
  private readonly idleTimer: NodeJS.Timeout;
  private closed = false;
  private users = 0;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(options: RegistryOptions) {
    this.root = path.resolve(options.root);
    this.maxOpen = positive(options.maxOpen ?? 256, 'maxOpen');
    this.idleMs = positive(options.idleMs ?? 60_000, 'idleMs');
    this.maxQueue = positive(options.maxQueue ?? 64, 'maxQueue');
    this.maxStoresPerKey = nonNegative(options.maxStoresPerKey ?? DEFAULT_MAX_STORES_PER_KEY, 'maxStoresPerKey');
    this.maxStoreBytes = nonNegative(options.maxStoreBytes ?? DEFAULT_MAX_STORE_BYTES, 'maxStoreBytes');
    this.storeOptions = options.storeOptions ?? {};
    this.gate = options.gate ?? null;
    // Owner-only: another local user must not be able to add, rename or replace stores (or plant keys).
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    this.creators = new StoreCreators(this.root);
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

  /** Whether store `id` exists (a valid id naming a folder of the root whose `.git` is a real directory). */
  async exists(id: string): Promise<boolean> {
    if (!isValidStoreId(id)) return false;
    if (this.entries.get(id)?.store) return true;
    const dir = await storeDir(this.root, id).catch(() => null);
    return dir !== null && (await this.folderState(dir, id)) === 'store';
  }

  /** The ids of every store under the root, sorted (folders whose `.git` is a link or a file are not stores). */
  async list(): Promise<string[]> {
    const names = await fs.promises.readdir(this.root, { withFileTypes: true });
    const ids: string[] = [];
    for (const d of names) {
      if (d.isDirectory() && isValidStoreId(d.name) && (await realGitDir(path.join(this.root, d.name)))) ids.push(d.name);
    }
    return ids.sort();
  }

  /**
   * Run `task` on store `id`, opening it (and, with `create`, creating it) if needed. Counts against the
   * store's queue for the whole task. A store is created for `key` only within its bound of stores
   * (StoreQuotaError otherwise, before anything is written). Throws InvalidStoreIdError,
   * StoreNotFoundError, StoreIdTakenError, StoreQuotaError, QueueFullError.
   */
  async use<T>(id: string, options: { create: boolean; key?: string }, task: (store: MemoryStore) => Promise<T>): Promise<T> {
    if (this.closed) throw new RegistryClosedError();
    this.gate?.admit(id);
    let entry = this.entries.get(id);
    if (entry && entry.inFlight >= this.maxQueue) throw new QueueFullError(id, 1);
    if (!entry) {
      // The entry is claimed before anything is awaited, so that concurrent first uses of a store share one
      // opening and count against one queue (an invalid id or a missing store rejects it, and it goes).
      const opening = this.open(id, options);
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
        // Not NotFinishedError (a subclass): an interrupted first open is the operator's to finish.
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

  /** The key that created store `id` (null for stores made otherwise: by the CLI, or before this was recorded). */
  creatorOf(id: string): Promise<string | null> {
    return this.creators.creatorOf(id);
  }

  /** Stores `keyId` created that still exist. */
  storesCreatedBy(keyId: string): Promise<number> {
    return this.creators.count(keyId);
  }

  /**
   * Throw StoreFullError when store `id` holds `maxStoreBytes` or more on disk: called before a write. The
   * size is measured (the whole folder) when the store changed since it was last measured and that was
   * more than a second ago, or whenever the store is within a tenth of its bound: far from the bound, a
   * store may pass it by what a second of writes adds; close to it, by one write at most.
   */
  async assertRoom(id: string, store: MemoryStore): Promise<void> {
    if (this.maxStoreBytes === 0) return;
    const head = historySummary(historyContext(store)).head?.commit ?? null;
    const known = this.sizes.get(id);
    const fresh = known && (known.head === head || (Date.now() - known.at < SIZE_TRUST_MS && known.bytes < this.maxStoreBytes * SIZE_CLOSE_FRACTION));
    const bytes = fresh ? known.bytes : await this.measure(id, store.dir, head);
    if (bytes >= this.maxStoreBytes) throw new StoreFullError(id, bytes, this.maxStoreBytes);
  }

  /** Totals for the store list (opens the store through the LRU like any other use). */
  async describe(id: string): Promise<StoreSummary> {
    return this.use(id, { create: false }, async (store) => {
      const head = await store.refreshHead();
      const ctx = historyContext(store);
      const summary = historySummary(ctx);
      const newest = summary.commits > 1 ? summary.head : null;
      const cached = this.sizes.get(id);
      const bytes = cached && cached.head === head ? cached.bytes : await this.measure(id, store.dir, head);
      return {
        id,
        calls: committedCallCount(ctx),
        sessions: summary.sessions,
        lastWrite: newest ? new Date(newest.time * 1000).toISOString() : null,
        bytes,
        head,
        flagged: flaggedCallCount(ctx),
        replicas: await replicaSummary(store),
      };
    });
  }

  /**
   * Close store `id` once no call uses it (a fleet node replaces its folder next). Uses that start
   * meanwhile are the gate's to refuse.
   */
  async evict(id: string): Promise<void> {
    for (;;) {
      const entry = this.entries.get(id);
      if (!entry) return;
      if (entry.users === 0) {
        this.entries.delete(id);
        await this.closeEntry(entry);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
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

  /**
   * Check, writing nothing, that `keyId` could create store `id` now: a valid new id (no trailing dot, no
   * other store's id but for case) within the key's bound of stores. Throws what creating would
   * (InvalidStoreIdError, StoreIdTakenError, StoreQuotaError); the bound is enforced again, under its
   * lock, when the store is really created. For a connection that will create the store later (an MCP
   * session opened on a store that does not exist yet), so that it is refused at once.
   */
  async assertCreatable(id: string, keyId: string): Promise<void> {
    await storeDir(this.root, id);
    await this.assertNewId(id);
    if (this.maxStoresPerKey > 0 && (await this.creators.count(keyId)) >= this.maxStoresPerKey) throw new StoreQuotaError(keyId, this.maxStoresPerKey);
  }

  /** Open store `id`, or create it when it is absent, `create` is set and the id and key may have it. */
  private async open(id: string, options: { create: boolean; key?: string }): Promise<MemoryStore> {
    const dir = await storeDir(this.root, id);
    if (this.gate) {
      const store = await this.openGated(id, dir, options);
      await this.gate.opened(id, store).catch(async (error: unknown) => {
        await store.close().catch(() => undefined);
        throw error;
      });
      return store;
    }
    return this.openUngated(id, dir, options);
  }

  /** A fleet node's opening: the gate brings the folder up to date first (an existing store id only: a clone needs no claim). */
  private async openGated(id: string, dir: string, options: { create: boolean; key?: string }): Promise<MemoryStore> {
    await this.gate!.prepare(id, dir, options.create);
    return this.openUngated(id, dir, options);
  }

  private async openUngated(id: string, dir: string, options: { create: boolean; key?: string }): Promise<MemoryStore> {
    const state = await this.folderState(dir, id);
    if (state === 'store') return MemoryStore.open(dir, { ...this.storeOptions, create: options.create });
    if (state === 'not-a-store') throw new NotAStoreError(`${dir} is not a store: its .git is not a real folder inside it`);
    if (!options.create) throw new StoreNotFoundError(id);
    await this.assertNewId(id);
    const key = options.key;
    if (key !== undefined && this.maxStoresPerKey > 0) await this.creators.claim(id, key, this.maxStoresPerKey);
    try {
      return await MemoryStore.open(dir, { ...this.storeOptions, create: true });
    } catch (error) {
      if (key !== undefined && this.maxStoresPerKey > 0 && !(await realGitDir(dir))) await this.creators.release(id, key).catch(() => undefined);
      throw error;
    }
  }

  /**
   * What the folder of store `id` holds: a store (its `.git` a real directory inside it), nothing yet
   * (no such folder, or one without `.git`), or something else. The folder must be listed under exactly
   * this name: on a case-insensitive file system `Acme` would otherwise open the folder `acme`.
   */
  private async folderState(dir: string, id: string): Promise<'store' | 'absent' | 'not-a-store'> {
    const names = await fs.promises.readdir(path.dirname(dir));
    if (!names.includes(id)) return 'absent';
    const stat = await fs.promises.lstat(dir).catch(() => null);
    if (!stat) return 'absent';
    if (!stat.isDirectory()) return 'not-a-store';
    const git = await fs.promises.lstat(path.join(dir, '.git')).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (!git) return 'absent';
    return (await realGitDir(dir)) ? 'store' : 'not-a-store';
  }

  /** A new store's id: no trailing dot, and not another store's id but for case. */
  private async assertNewId(id: string): Promise<void> {
    if (id.endsWith('.')) throw new InvalidStoreIdError(id, 'a new store id may not end with a dot (some file systems drop it, naming another folder)');
    const folded = id.toLowerCase();
    for (const other of [...(await fs.promises.readdir(this.root)), ...this.entries.keys()]) {
      if (other !== id && other.toLowerCase() === folded) throw new StoreIdTakenError(id, other);
    }
  }

  /** Measure the folder of store `id` (one walk at a time per store). */
  private measure(id: string, dir: string, head: string | null): Promise<number> {
    let walk = this.measuring.get(id);
    if (!walk) {
      walk = folderBytes(dir).then(
        (bytes) => {
          this.sizes.set(id, { head, bytes, at: Date.now() });
          return bytes;
        },
      ).finally(() => this.measuring.delete(id));
      this.measuring.set(id, walk);
    }
    return walk;
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
    closing.finally(() => this.closing.delete(closing)).catch(() => undefined);
  }

  private async closeEntry(entry: OpenEntry): Promise<void> {
    const store = await entry.opening.catch(() => null);
    // A store still in use when the registry closes finishes its queued calls first (close waits for them).
    await store?.close().catch(() => undefined);
  }
}

/**
 * Whether `dir/.git` is a real directory inside `dir`: not a symbolic link (a local user could link it to
 * another tenant's store), not a gitfile, and its real path is the folder's own `.git`.
 */
async function realGitDir(dir: string): Promise<boolean> {
  const gitdir = path.join(dir, '.git');
  const stat = await fs.promises.lstat(gitdir).catch(() => null);
  if (!stat || stat.isSymbolicLink() || !stat.isDirectory()) return false;
  const [realDir, realGit] = await Promise.all([fs.promises.realpath(dir).catch(() => null), fs.promises.realpath(gitdir).catch(() => null)]);
  return realDir !== null && realGit === path.join(realDir, '.git');
}

function nonNegative(value: number, name: string): number {
  if (!(Number.isSafeInteger(value) && value >= 0)) throw new TypeError(`${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return value;
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
