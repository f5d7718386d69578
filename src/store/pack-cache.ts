/**
 * A bounded cache of the objects isomorphic-git reads from packs, installed into its own pack indexes.
 *
 * isomorphic-git (1.44) resolves a packed object that is stored as a delta by reading its base, and the
 * base's base, down the whole delta chain (git packs chains up to 50 deep), inflating each link with
 * pako. Its GitPackIndex has a cache for that, `offsetCache` (pack offset -> {type, object}), filled by
 * `readSlice` only once `this.readDepth > 3` — but `readDepth` is initialised only for a pack index built
 * from a pack, never for one loaded from a .idx file (`fromIdx`, the only way memgit's packs are read):
 * there `readDepth++` yields NaN, `NaN > 3` is false, and nothing is ever cached. Every packed read then
 * inflates its entire chain again: rebuilding the history index of a 10,000-commit store (30,000 tree
 * reads) made 777,189 inflate calls. And were it switched on, that cache would never evict.
 *
 * So each pack index isomorphic-git loads through our cache object gets, once: `readDepth` set to a number
 * above the threshold (every object it reads is offered to the cache) and an `offsetCache` of our own, a
 * proxy over a Map that keeps the most recently used objects up to a byte budget. isomorphic-git reaches
 * the pack indexes only through the `cache` object it is handed (under a private symbol, a Map of
 * filename -> promise of GitPackIndex); they are found here by their shape, and anything that does not
 * have that shape is left alone — a later isomorphic-git that changes it loses this cache, not correctness.
 * Objects handed out from the cache are shared, as isomorphic-git's own cache shares them: memgit never
 * mutates what it reads (ObjectStore's recent blobs are shared the same way).
 */

import type { BudgetSlot, CacheBudget } from './cache-budget';
import { LruMap } from './lru-map';
import { CompactPackOffsets } from './pack-offsets';

/** What GitPackIndex.readSlice caches per offset. */
interface SliceResult {
  type: string;
  object: Uint8Array;
}

/** Bytes of decoded objects kept per pack (contents and what each entry costs beyond them: CACHED_OBJECT_OVERHEAD). */
export const PACK_CACHE_BYTES = 48 * 1024 * 1024;

/**
 * What a cached object costs beyond its bytes: its Buffer and ArrayBuffer, its record, key and LRU node.
 * Measured on Node 20 for cached Buffers of 300 B to 6 KB: 350–360 bytes of heap per entry.
 */
export const CACHED_OBJECT_OVERHEAD = 384;

/**
 * The bytes a cache should keep: `object` itself when it owns its memory, otherwise a copy that does. What
 * isomorphic-git hands out is often a view: `Buffer.from` puts an object under 4 KB into an 8 KB slab of
 * Node's buffer pool, and kept in a cache that view pins the whole slab (a 3 KB tree kept 8 KB: measured
 * 2.3–2.7× the bytes counted for objects of 1.2–3 KB). The copy is a Buffer when the original is one
 * (isomorphic-git calls Buffer methods on what its cache returns), from outside the pool.
 */
export function ownedBytes<T extends Uint8Array>(object: T): T {
  if (object.byteOffset === 0 && object.byteLength === object.buffer.byteLength) return object;
  const copy = Buffer.isBuffer(object) ? Buffer.allocUnsafeSlow(object.byteLength) : new Uint8Array(object.byteLength);
  copy.set(object);
  return copy as T;
}
/** Objects larger than this are not kept (one large blob must not flush every tree). */
const PACK_CACHE_MAX_OBJECT = 4 * 1024 * 1024;
/** Above isomorphic-git's threshold (readDepth > 3): every read object is offered to the cache. */
const CACHING_DEPTH = 4;

const BOUNDED = Symbol('memgit bounded offsetCache');
/** Reading this key of a bounded cache empties it (and gives its share of a shared budget back). */
const RELEASE = Symbol('memgit release offsetCache');

/**
 * A stand-in for `offsetCache` (indexed by offset, read and written with `[]`), bounded by bytes, LRU. With
 * a shared `budget`, its objects also count there and are dropped when the budget needs room.
 */
export function boundedOffsetCache(maxBytes = PACK_CACHE_BYTES, budget?: CacheBudget): Record<string, SliceResult | undefined> {
  const entries = new LruMap<string, SliceResult>();
  const slots = new Map<string, BudgetSlot>();
  let bytes = 0;
  const sizeOf = (value: SliceResult) => value.object.byteLength + CACHED_OBJECT_OVERHEAD;
  const drop = (key: string) => {
    const old = entries.peek(key);
    if (old) {
      entries.delete(key);
      bytes -= sizeOf(old);
    }
    const slot = slots.get(key);
    if (slot) {
      slots.delete(key);
      budget!.release(slot);
    }
  };
  return new Proxy({} as Record<string, SliceResult | undefined>, {
    get(_target, key) {
      if (key === BOUNDED) return true;
      if (key === RELEASE) {
        for (const k of [...entries.keys()]) drop(k);
        return true;
      }
      if (typeof key !== 'string') return undefined;
      const value = entries.get(key); // now the most recently used
      if (value) {
        const slot = slots.get(key);
        if (slot) budget!.touch(slot);
      }
      return value;
    },
    set(_target, key, value: unknown) {
      if (typeof key !== 'string' || !isSliceResult(value)) return true; // not kept; never an error for the reader
      drop(key);
      if (value.object.byteLength > PACK_CACHE_MAX_OBJECT || sizeOf(value) > maxBytes) return true;
      // Kept as its own bytes, not as a view that pins a larger buffer (the reader keeps what it was handed).
      const kept: SliceResult = { type: value.type, object: ownedBytes(value.object) };
      if (budget) {
        const slot: BudgetSlot = { evict: () => slots.get(key) === slot && drop(key) };
        if (!budget.charge(slot, sizeOf(kept))) return true;
        slots.set(key, slot);
      }
      entries.set(key, kept);
      bytes += sizeOf(kept);
      while (bytes > maxBytes) drop(entries.oldestKey()!);
      return true;
    },
    has(_target, key) {
      return key === BOUNDED || (typeof key === 'string' && entries.has(key));
    },
    deleteProperty(_target, key) {
      if (typeof key === 'string') drop(key);
      return true;
    },
  });
}

function isSliceResult(value: unknown): value is SliceResult {
  return !!value && typeof value === 'object' && (value as SliceResult).object instanceof Uint8Array && typeof (value as SliceResult).type === 'string';
}

/**
 * What memgit uses of isomorphic-git's GitPackIndex: `offsets` (the ids in the pack, from its .idx: a Map,
 * or the compact table pack-by-position.ts puts in its place), `pack`
 * (the promise of the pack's bytes, set by isomorphic-git's readObjectPacked on the first read from it),
 * `_checksumVerification` (the promise of the pack's check, set there too) and `read` (isomorphic-git's
 * own reader of one object, with its delta chain).
 */
export interface LoadedPackIndex {
  offsetCache: object;
  readDepth: unknown;
  readSlice: unknown;
  offsets: ReadonlyMap<string, number>;
  pack?: Promise<unknown> | null;
  _checksumVerification?: Promise<unknown>;
  read(args: { oid: string }): Promise<{ type: string; object: Uint8Array }>;
}

/** Is this object shaped like isomorphic-git's GitPackIndex (the fields readSlice uses)? */
function isPackIndex(value: unknown): value is { offsetCache: object; readDepth: unknown; readSlice: unknown } {
  if (!value || typeof value !== 'object') return false;
  const pack = value as { offsetCache?: unknown; readSlice?: unknown };
  return typeof pack.offsetCache === 'object' && pack.offsetCache !== null && typeof pack.readSlice === 'function';
}

/** …and has what ObjectStore's direct reads use (LoadedPackIndex). */
function isReadablePackIndex(value: unknown): value is LoadedPackIndex {
  if (!isPackIndex(value)) return false;
  const pack = value as unknown as { offsets?: unknown; read?: unknown };
  return (pack.offsets instanceof Map || pack.offsets instanceof CompactPackOffsets) && typeof pack.read === 'function';
}

/**
 * Give every pack index loaded into isomorphic-git's `cache` object a bounded, working offset cache.
 * Cheap enough to call before every object read: each loading pack index is looked at once.
 */
export class PackCacheTuner {
  private readonly seen = new WeakSet<object>();
  /** The caches installed (to give a shared budget its bytes back when the packs are forgotten). */
  private installed: Array<Record<PropertyKey, unknown>> = [];

  constructor(
    private readonly gitCache: object,
    private readonly maxBytes = PACK_CACHE_BYTES,
    private readonly budget?: CacheBudget,
  ) {}

  /**
   * The pack indexes loaded so far, by the file name isomorphic-git keys them by (`<gitdir>/objects/pack/
   * <name>.idx`), each as isomorphic-git itself still holds it: an index it dropped (a failed load) or
   * replaced is not named here.
   */
  private readonly loaded = new Map<string, { loading: unknown; map: Map<unknown, unknown>; pack: LoadedPackIndex }>();

  /** Empty every cache installed so far (the packs are forgotten, or the store closes). */
  release(): void {
    for (const cache of this.installed.splice(0)) void cache[RELEASE];
    this.loaded.clear();
  }

  /**
   * The pack index isomorphic-git has loaded from `filename` (and holds), with this cache installed, or
   * undefined when it has not (yet): reading through isomorphic-git's own entry points loads it.
   */
  loadedPack(filename: string): LoadedPackIndex | undefined {
    const known = this.loaded.get(filename);
    if (!known) return undefined;
    if (known.map.get(filename) !== known.loading) {
      this.loaded.delete(filename);
      return undefined;
    }
    return known.pack;
  }

  tune(): void {
    const cache = this.gitCache as Record<symbol, unknown>;
    for (const key of Object.getOwnPropertySymbols(cache)) {
      const value = cache[key];
      if (!(value instanceof Map)) continue;
      for (const [filename, loading] of value.entries()) {
        if (!loading || (typeof loading !== 'object' && typeof loading !== 'function') || this.seen.has(loading)) continue;
        this.seen.add(loading);
        void Promise.resolve(loading).then(
          (pack: unknown) => {
            this.install(pack);
            if (typeof filename === 'string' && isReadablePackIndex(pack) && value.get(filename) === loading) {
              this.loaded.set(filename, { loading, map: value, pack });
            }
          },
          () => undefined,
        );
      }
    }
  }

  private install(pack: unknown): void {
    if (!isPackIndex(pack) || (pack.offsetCache as Record<symbol, unknown>)[BOUNDED]) return;
    pack.offsetCache = boundedOffsetCache(this.maxBytes, this.budget);
    if (this.budget) this.installed.push(pack.offsetCache as Record<PropertyKey, unknown>);
    if (!(typeof pack.readDepth === 'number' && pack.readDepth > CACHING_DEPTH)) pack.readDepth = CACHING_DEPTH;
  }
}
