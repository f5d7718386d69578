import * as nodeFs from 'node:fs';
import * as path from 'node:path';
import git from 'isomorphic-git';
import type { BudgetSlot, CacheBudget } from './cache-budget';
import type { DurableFs } from './durable-fs';
import { LeanCommit, parseLeanCommit } from './lean-commit';
import { blobOid, commitContent, encodeLoose, LooseType, treeContent } from './loose-object';
import { LruMap } from './lru-map';
import './native-inflate'; // isomorphic-git's reads inflate with node:zlib
import { packReadingCache } from './pack-by-position';
import { CACHED_OBJECT_OVERHEAD, ownedBytes, PackCacheTuner } from './pack-cache';

/**
 * Object-level access to one repository: blobs, trees and commits by oid, all read and written through
 * isomorphic-git with one shared cache (packfiles are parsed once). The fs it is handed (DurableFs.gitFs)
 * stages the loose objects a call writes, so they become durable together at the next flush, before the
 * ref moves. Git objects are immutable, so trees are kept in memory by oid, including the ones written here.
 */

export type EntryType = 'blob' | 'tree' | 'commit';

export interface TreeEntry {
  mode: string;
  path: string;
  oid: string;
  type: EntryType;
}

export const FILE_MODE = '100644';
export const DIR_MODE = '040000';
export const EMPTY_TREE_OID = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

const TREE_CACHE_LIMIT = 20_000;
/** Blobs kept decoded (most recently used), by count and total bytes: a page view re-reads the same ones. */
const RECENT_BLOB_LIMIT = 8192;
const RECENT_BLOBS_BYTES = 32 * 1024 * 1024;
const RECENT_BLOB_MAX_BYTES = 1024 * 1024;

/** Estimated bytes of a cached tree: its entries' objects and strings (a budget needs a figure, not a census). */
function treeBytes(entries: TreeEntry[]): number {
  let bytes = 64;
  for (const e of entries) bytes += 96 + 2 * (e.path.length + e.oid.length);
  return bytes;
}

export class ObjectStore {
  /**
   * isomorphic-git's own cache object: shared between calls so packfiles and the index are parsed once.
   * Its packs are read by position and their id tables kept compact (pack-by-position.ts).
   */
  readonly gitCache: object = packReadingCache();
  private readonly packCache: PackCacheTuner;
  private readonly trees = new Map<string, TreeEntry[]>();
  private readonly recentBlobs = new LruMap<string, Uint8Array>();
  /** With a shared budget: the slot of each cached tree and blob (see cache-budget.ts). */
  private readonly treeSlots = new Map<string, BudgetSlot>();
  private readonly blobSlots = new Map<string, BudgetSlot>();

  /**
   * The fs isomorphic-git reads objects through: DurableFs, except that the two metadata probes it makes
   * for every single object — a stat of the gitdir and a listing of objects/pack — are answered from
   * memory. The listing is dropped after gc and whenever a read fails (another process may have packed
   * and removed loose objects), and the read is retried once with a fresh one.
   */
  private readonly readFs: DurableFs['gitFs'];
  private packListing: string[] | null = null;
  private gitdirStat: unknown = null;
  /**
   * The loose objects on disk, listed once (null: not listed; 'too-many': probe each on disk). isomorphic-
   * git looks for every object loose before it looks in the packs, so reading a packed history would
   * otherwise probe the disk once per object. Objects this store writes are added; another process's are
   * found by the retry that follows a failed read (read() lists again), and gc drops the listing.
   */
  private looseNames: Set<string> | 'too-many' | null = null;
  private readonly objectsPrefix: string;
  private readonly looseByOid: boolean;

  constructor(
    readonly fs: DurableFs,
    readonly gitdir: string,
    private readonly budget?: CacheBudget,
  ) {
    this.packCache = new PackCacheTuner(this.gitCache, undefined, budget);
    this.objectsPrefix = path.join(gitdir, 'objects') + path.sep;
    // isomorphic-git spells a loose object's path `${gitdir}/objects/xx/…`: where that is how knownNotLoose
    // sees it too, an id can be looked up without building and parsing that path.
    this.looseByOid = `${gitdir}/objects/` === this.objectsPrefix;
    const base = fs.gitFs.promises;
    const packDir = path.join(gitdir, 'objects', 'pack');
    const promises: typeof base = Object.create(base);
    promises.readdir = (async (dir: string, options?: BufferEncoding) => {
      if (path.normalize(dir) !== packDir) return base.readdir(dir, options);
      this.packListing ??= (await base.readdir(dir)) as string[];
      return [...this.packListing];
    }) as typeof base.readdir;
    promises.readFile = (async (file: string, options?: BufferEncoding) => {
      if (typeof file === 'string' && this.knownNotLoose(file)) throw NOT_LOOSE;
      return base.readFile(file, options);
    }) as typeof base.readFile;
    promises.stat = (async (file: string, options?: nodeFs.StatOptions) => {
      if (path.normalize(file) !== path.normalize(gitdir)) return base.stat(file, options);
      this.gitdirStat ??= await base.stat(file, options);
      return this.gitdirStat;
    }) as typeof base.stat;
    this.readFs = { promises };
  }

  /** A read through the cached probes; on failure, once more with fresh ones. */
  private async read<T>(read: (args: { fs: DurableFs['gitFs']; gitdir: string; cache: object }) => Promise<T>): Promise<T> {
    const args = { fs: this.readFs, gitdir: this.gitdir, cache: this.gitCache };
    try {
      return await read(args);
    } catch (error) {
      if (this.packListing === null && this.gitdirStat === null && this.looseNames === null) throw error;
      this.packListing = null;
      this.gitdirStat = null;
      this.looseNames = null;
      return read(args);
    }
  }

  private lastYield = Date.now();

  /**
   * A loop of reads served from memory (packs, staged objects) settles on microtasks only, and indexing a
   * long history would otherwise never let timers run — among them the write lock's refresh, which would
   * then be taken as stale. Give the event loop a turn every 50 ms.
   */
  private yieldSometimes(): Promise<void> | undefined {
    // Not an async function: most calls return at once, without a promise to allocate and settle.
    if (Date.now() - this.lastYield < 50) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.lastYield = Date.now();
    });
  }

  /** Is `file` a loose object path of this store that is certainly not on disk (nor staged)? */
  private knownNotLoose(file: string): boolean {
    const match = LOOSE_PATH.exec(file);
    // (A path this store's git dir spells otherwise is probed on disk, as before: slower, never wrong.)
    if (!match || !file.startsWith(this.objectsPrefix)) return false;
    if (this.fs.isStaged(file)) return false;
    this.looseNames ??= listLooseObjects(path.join(this.gitdir, 'objects'));
    return this.looseNames !== 'too-many' && !this.looseNames.has(match[1] + match[2]);
  }

  /** knownNotLoose for an object id (the path isomorphic-git would probe, without parsing it back). */
  private knownNotLooseOid(oid: string): boolean {
    if (!this.looseByOid) return false;
    this.looseNames ??= listLooseObjects(path.join(this.gitdir, 'objects'));
    if (this.looseNames === 'too-many' || this.looseNames.has(oid)) return false;
    return !this.fs.isStaged(`${this.gitdir}/objects/${oid.slice(0, 2)}/${oid.slice(2)}`);
  }

  private get args() {
    return { fs: this.fs.gitFs, gitdir: this.gitdir, cache: this.gitCache };
  }

  async readTree(oid: string): Promise<TreeEntry[]> {
    const cached = this.trees.get(oid);
    if (cached) {
      const slot = this.treeSlots.get(oid);
      if (slot) this.budget!.touch(slot);
      return cached;
    }
    await this.yieldSometimes();
    this.countRead();
    const { tree } = await this.read((args) => git.readTree({ ...args, oid }));
    const entries = tree as TreeEntry[];
    this.cacheTree(oid, entries);
    return entries;
  }

  /**
   * A tree's raw bytes, entries unparsed and not cached here: the history index's rebuild from git walks
   * every tree along each commit's changed path once (raw-tree-diff.ts), and parsing or keeping them would
   * cost more than the walk.
   */
  async readTreeContent(oid: string): Promise<Uint8Array> {
    await this.yieldSometimes();
    const { type, object } = (await this.readPackedDirect(oid)) ?? (await this.readContent(oid));
    if (type !== 'tree') throw new Error(`object ${oid} is a ${type}, not a tree`);
    return object;
  }

  /**
   * A commit's tree, parents, committer time and message, for the history index's rebuild from git (every
   * commit read once): parsed here from the commit's bytes (lean-commit.ts) when it is an ordinary
   * commit, and by isomorphic-git's readCommit otherwise (the same fields, the same errors).
   */
  async readLeanCommit(oid: string): Promise<LeanCommit> {
    await this.yieldSometimes();
    const direct = await this.readPackedDirect(oid);
    const lean = direct?.type === 'commit' ? parseLeanCommit(direct.object) : null;
    if (lean) return lean;
    this.countRead();
    const { commit } = await this.read((args) => git.readCommit({ ...args, oid }));
    return commit;
  }

  private async readContent(oid: string): Promise<{ type: string; object: Uint8Array }> {
    this.countRead();
    const { type, object } = await this.read((args) => git.readObject({ ...args, oid, format: 'content' }));
    return { type, object: object as Uint8Array };
  }

  /** Counts of the reads readPackedDirect answered and of those it left to isomorphic-git (diagnostics, tests). */
  readonly directReads = { direct: 0, declined: 0 };

  /**
   * An object read straight from a pack that isomorphic-git has already loaded and checked, through its
   * own reader of a packed object (GitPackIndex.read: the pack's format, delta chains and inflation stay
   * isomorphic-git's) — without what its readObject does around that for every single read: a new
   * FileSystem wrapper, the gitdir's stat, the loose-object probe (an error thrown and caught), the listing
   * of the pack folder, the lookup of the pack index and its checksum's promise. For the small objects a
   * rebuild of the history index reads (every commit, three trees per call, most of them tree deltas of
   * about a hundred bytes) those cost more than the read itself.
   *
   * The same object in the same order of places as isomorphic-git's own read: only when the object is
   * known not to be loose (the listing of loose objects, knownNotLoose) and every pack of the current
   * listing before it has been loaded. Null whenever that is not known — the empty tree (hard-wired in
   * isomorphic-git), a pack not loaded or not read from yet, a loose object, a failed read — and the caller
   * then reads through isomorphic-git's entry point, as before.
   */
  private async readPackedDirect(oid: string): Promise<{ type: string; object: Uint8Array } | null> {
    const packs = this.listedPacks();
    if (packs === null || oid === EMPTY_TREE_OID || !OID.test(oid) || !this.knownNotLooseOid(oid)) {
      this.directReads.declined++;
      return null;
    }
    for (const key of packs) {
      const pack = this.packCache.loadedPack(key);
      if (!pack) break;
      const offset = pack.offsets.get(oid);
      if (offset === undefined) continue;
      if (!pack.pack || !pack._checksumVerification) break;
      try {
        if (!this.verifiedPacks.has(pack)) {
          await pack._checksumVerification;
          this.verifiedPacks.add(pack);
        }
        // The object as isomorphic-git's readSlice would hand it out of the offset cache (pack-cache.ts's,
        // which memgit installed), or read by it.
        const read = (pack.offsetCache as Record<number, { type: string; object: Uint8Array } | undefined>)[offset] ?? (await pack.read({ oid }));
        if (typeof read?.type !== 'string' || !(read.object instanceof Uint8Array)) break;
        this.directReads.direct++;
        return { type: read.type, object: read.object };
      } catch {
        break; // isomorphic-git's own read reports it (or recovers: read() retries with fresh listings)
      }
    }
    this.directReads.declined++;
    return null;
  }

  /** The pack indexes whose checksum isomorphic-git has checked (its promise awaited once here). */
  private readonly verifiedPacks = new WeakSet<object>();
  private listedPacksFor: string[] | null = null;
  private listedPackKeys: string[] = [];

  /** The current listing's pack indexes, as isomorphic-git names them (null: not listed yet). */
  private listedPacks(): string[] | null {
    const listing = this.packListing;
    if (listing === null) return null;
    if (this.listedPacksFor !== listing) {
      this.listedPacksFor = listing;
      this.listedPackKeys = listing.filter((name) => name.endsWith('.idx')).map((name) => `${this.gitdir}/objects/pack/${name}`);
    }
    return this.listedPackKeys;
  }


  private cacheTree(oid: string, entries: TreeEntry[]): void {
    if (this.trees.size >= TREE_CACHE_LIMIT) this.dropTrees();
    if (this.budget) {
      const old = this.treeSlots.get(oid);
      if (old) this.budget.release(old);
      const slot: BudgetSlot = {
        evict: () => {
          if (this.treeSlots.get(oid) !== slot) return;
          this.treeSlots.delete(oid);
          this.trees.delete(oid);
        },
      };
      if (!this.budget.charge(slot, treeBytes(entries))) return;
      this.treeSlots.set(oid, slot);
    }
    this.trees.set(oid, entries);
  }

  private dropTrees(): void {
    for (const slot of this.treeSlots.values()) this.budget!.release(slot);
    this.treeSlots.clear();
    this.trees.clear();
  }

  async readBlob(oid: string): Promise<Uint8Array> {
    const recent = this.recentBlobs.get(oid); // now the most recently used
    if (recent) {
      const slot = this.blobSlots.get(oid);
      if (slot) this.budget!.touch(slot);
      return recent;
    }
    await this.yieldSometimes();
    this.countRead();
    const { blob } = await this.read((args) => git.readBlob({ ...args, oid }));
    this.remember(oid, blob);
    return blob;
  }

  /** Hand an object encoded here (loose-object.ts) to isomorphic-git, which writes it through DurableFs. */
  private async writeLoose(type: LooseType, content: Uint8Array): Promise<string> {
    const { oid, deflated } = encodeLoose(type, content);
    await git.writeObject({ fs: this.readFs, gitdir: this.gitdir, type, object: deflated, format: 'deflated', oid });
    if (this.looseNames instanceof Set) this.looseNames.add(oid);
    return oid;
  }

  async writeBlob(bytes: Uint8Array): Promise<string> {
    const oid = await this.writeLoose('blob', bytes);
    // The working tree is written from the blob right after the commit: spare re-reading and inflating it.
    this.remember(oid, bytes);
    return oid;
  }

  /**
   * Keep recently written or read blobs decoded (bounded by count and bytes): a call reads the file it
   * edits and the history index then diffs the old blob against the new one, both from here; and an
   * audit page viewed again does not inflate its blobs from the pack again (isomorphic-git inflates
   * packed objects and their delta chains in JavaScript, the main cost of a page that shows diffs).
   */
  private remember(oid: string, given: Uint8Array): void {
    if (given.byteLength > RECENT_BLOB_MAX_BYTES) return;
    this.forgetBlob(oid);
    // Its own bytes (a caller's Buffer may be a view into a larger one), counted with what an entry costs.
    const bytes = ownedBytes(given);
    if (this.budget) {
      const slot: BudgetSlot = { evict: () => this.blobSlots.get(oid) === slot && this.forgetBlob(oid) };
      if (!this.budget.charge(slot, bytes.byteLength + CACHED_OBJECT_OVERHEAD)) return;
      this.blobSlots.set(oid, slot);
    }
    this.recentBlobs.set(oid, bytes);
    this.recentBlobBytes += bytes.byteLength + CACHED_OBJECT_OVERHEAD;
    while (this.recentBlobs.size > RECENT_BLOB_LIMIT || this.recentBlobBytes > RECENT_BLOBS_BYTES) {
      this.forgetBlob(this.recentBlobs.oldestKey()!);
    }
  }

  private forgetBlob(oid: string): void {
    const old = this.recentBlobs.peek(oid);
    if (old) {
      this.recentBlobs.delete(oid);
      this.recentBlobBytes -= old.byteLength + CACHED_OBJECT_OVERHEAD;
    }
    const slot = this.blobSlots.get(oid);
    if (slot) {
      this.blobSlots.delete(oid);
      this.budget!.release(slot);
    }
  }

  private recentBlobBytes = 0;

  async writeTree(entries: TreeEntry[]): Promise<string> {
    // isomorphic-git refuses separators, '.', '..' and '.git' aliases, but not these two.
    for (const entry of entries) {
      if (entry.path === '' || entry.path.includes('\0')) throw new Error(`unsafe tree entry name ${JSON.stringify(entry.path)}`);
    }
    const oid = await this.writeLoose('tree', treeContent(entries));
    // In the order readTree returns them: by name, in code-point order.
    this.cacheTree(oid, [...entries].sort((a, b) => compareCodePoints(a.path, b.path)));
    return oid;
  }

  async readCommit(oid: string): Promise<ReadCommitResult> {
    await this.yieldSometimes();
    this.countRead();
    return this.read((args) => git.readCommit({ ...args, oid }));
  }

  async writeCommit(commit: CommitObject): Promise<string> {
    return this.writeLoose('commit', commitContent({
      tree: commit.tree,
      parent: commit.parent,
      author: commit.author,
      committer: commit.committer ?? commit.author,
      message: commit.message,
    }));
  }

  /**
   * Before each read: the pack indexes isomorphic-git has loaded get a working, bounded cache of the
   * objects (and delta bases) read from them (pack-cache.ts: as shipped, it caches nothing for a pack
   * index read from a .idx file, and every read inflates its whole delta chain again).
   */
  private countRead(): void {
    this.packCache.tune();
  }

  /** Drop every cached tree and blob (the store closes: its share of a shared budget is given back). */
  dropCaches(): void {
    this.dropTrees();
    for (const oid of [...this.recentBlobs.keys()]) this.forgetBlob(oid);
    this.packCache.release();
  }

  /** Forget the packs isomorphic-git has loaded (after gc replaced them). */
  forgetPacks(): void {
    this.packCache.release();
    this.packListing = null;
    this.looseNames = null;
    for (const key of Reflect.ownKeys(this.gitCache)) delete (this.gitCache as Record<PropertyKey, unknown>)[key];
  }

  async hashBlob(bytes: Uint8Array): Promise<string> {
    return blobOid(bytes);
  }

  /** The tree entry at a slash-separated repository path, or null. '' is the root itself. */
  async entryAt(rootTree: string, repoPath: string): Promise<TreeEntry | null> {
    let current: TreeEntry = { mode: DIR_MODE, path: '', oid: rootTree, type: 'tree' };
    if (repoPath === '') return current;
    for (const name of repoPath.split('/')) {
      if (current.type !== 'tree') return null;
      const found = (await this.readTree(current.oid)).find((entry) => entry.path === name);
      if (!found) return null;
      current = found;
    }
    return current;
  }
}

const OID = /^[0-9a-f]{40}$/;
const LOOSE_PATH = /[\\/]objects[\\/]([0-9a-f]{2})[\\/]([0-9a-f]{38})$/;
/** Beyond this many loose objects the listing is not kept (each object is probed on disk instead). */
const LOOSE_LISTING_LIMIT = 100_000;
/** The answer to a probe for an object known not to be loose: one error, built once (isomorphic-git only tests for failure). */
const NOT_LOOSE: NodeJS.ErrnoException = Object.assign(new Error('ENOENT: no such loose object'), { code: 'ENOENT' });

function listLooseObjects(objectsDir: string): Set<string> | 'too-many' {
  const names = new Set<string>();
  let fans: string[];
  try {
    fans = nodeFs.readdirSync(objectsDir);
  } catch {
    return names;
  }
  for (const fan of fans) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue;
    let files: string[];
    try {
      files = nodeFs.readdirSync(path.join(objectsDir, fan));
    } catch {
      continue;
    }
    for (const file of files) if (file.length === 38) names.add(fan + file);
    if (names.size > LOOSE_LISTING_LIMIT) return 'too-many';
  }
  return names;
}

/** One file that differs between two trees (null = absent on that side). */
export interface FileChange {
  path: string;
  oldOid: string | null;
  newOid: string | null;
}

/**
 * Files that differ between two trees, descending only into subtrees whose oids differ — a call that
 * touched one file costs a handful of tree reads, whatever the size of the memory.
 */
export async function diffTrees(
  objects: ObjectStore,
  oldTree: string | null,
  newTree: string | null,
  prefix = '',
): Promise<FileChange[]> {
  if (oldTree === newTree) return [];
  // Maps, not find(): a directory of 1,000 files would otherwise cost a million comparisons per call.
  const oldEntries = new Map((oldTree ? await objects.readTree(oldTree) : []).map((e) => [e.path, e]));
  const newEntries = new Map((newTree ? await objects.readTree(newTree) : []).map((e) => [e.path, e]));
  // Only the names that differ are sorted (in the order of every name, sorted: the same changes in the
  // same order), not every name of both trees: a call changes one or two entries of a large folder.
  const names: string[] = [];
  for (const [name, after] of newEntries) {
    const before = oldEntries.get(name);
    if (!before || before.oid !== after.oid || before.type !== after.type) names.push(name);
  }
  for (const name of oldEntries.keys()) if (!newEntries.has(name)) names.push(name);
  const changes: FileChange[] = [];
  for (const name of names.sort()) {
    const full = prefix ? `${prefix}/${name}` : name;
    await pushChangesAt(changes, full, oldEntries.get(name) ?? null, newEntries.get(name) ?? null, (a, b) => diffTrees(objects, a, b, full));
  }
  return changes;
}

/**
 * The changes at one name that differs between two trees, in diffTrees's order: what changed below it
 * (when either side is a folder, through `below`), then the file itself (when either side is a file).
 */
export async function pushChangesAt(
  changes: FileChange[],
  full: string,
  before: Pick<TreeEntry, 'type' | 'oid'> | null,
  after: Pick<TreeEntry, 'type' | 'oid'> | null,
  below: (beforeTree: string | null, afterTree: string | null) => Promise<FileChange[]>,
): Promise<void> {
  const beforeTree = before?.type === 'tree' ? before.oid : null;
  const afterTree = after?.type === 'tree' ? after.oid : null;
  if (beforeTree || afterTree) changes.push(...(await below(beforeTree, afterTree)));
  const beforeBlob = before && before.type !== 'tree' ? before.oid : null;
  const afterBlob = after && after.type !== 'tree' ? after.oid : null;
  if (beforeBlob !== afterBlob) changes.push({ path: full, oldOid: beforeBlob, newOid: afterBlob });
}

/** Every file below a tree, as repository paths with blob oids. */
export async function listFiles(objects: ObjectStore, tree: string, prefix = ''): Promise<Map<string, TreeEntry>> {
  const files = new Map<string, TreeEntry>();
  for (const entry of await objects.readTree(tree)) {
    const full = prefix ? `${prefix}/${entry.path}` : entry.path;
    if (entry.type === 'tree') {
      for (const [p, e] of await listFiles(objects, entry.oid, full)) files.set(p, e);
    } else {
      files.set(full, entry);
    }
  }
  return files;
}

/** Code-point (= UTF-8 byte) order; JavaScript's `<` differs only once surrogates (astral characters) appear. */
function compareCodePoints(a: string, b: string): number {
  if (/[\ud800-\udfff]/.test(a) || /[\ud800-\udfff]/.test(b)) return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  return a < b ? -1 : a > b ? 1 : 0;
}

export type CommitObject = Parameters<typeof git.writeCommit>[0]['commit'];

export type ReadCommitResult = Awaited<ReturnType<typeof git.readCommit>>;
