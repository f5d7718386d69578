/**
 * Packs read by position instead of whole, and their id tables kept compact: what keeps a long-running
 * `memgit serve` within its memory bound on a large store.
 *
 * isomorphic-git (1.44) reads an object from a pack by loading the whole .pack file into one Buffer, on the
 * first read from that pack, and keeps it for as long as its pack index is cached: at 100,000 calls a 51 MB
 * pack (copied once more on the way in) resident for a page that shows eleven trees. Its pack index also
 * keeps every id of the .idx as a JavaScript string in a Map (43 MB at 500,000 objects, pack-offsets.ts).
 *
 * isomorphic-git only ever asks three things of a loaded pack: its `length`, `subarray(start, end)` (its
 * checksum, computed once, 8 MB at a time) and `slice(start)` (the bytes from one object's start on, which
 * its readSlice decodes: the object's header, its delta base's position, its deflated data). So each pack
 * index it loads through the cache object made here is handed, before its first read, a pack that answers
 * those from the file: `slice(start)` reads that one object's bytes (up to where the next object starts,
 * known from the index's own offsets), through a few recently read windows of the file. The pack's format,
 * its delta chains and the inflation stay isomorphic-git's; memgit decodes nothing.
 *
 * A pack index is found as isomorphic-git caches it: a Map of `<gitdir>/objects/pack/<name>.idx` to the
 * promise of its GitPackIndex, kept in the cache object under a private symbol. The Map is recognised by
 * that symbol's description, the index by its shape; anything else is left alone, and an isomorphic-git
 * that asks the pack for anything but those three gets the whole file, read then — so a later version
 * loses this saving, never correctness.
 */

import * as nodeFs from 'node:fs';
import { CompactPackOffsets } from './pack-offsets';

/** Bytes read from the pack file at once: objects that are read together are mostly stored together. */
export const PACK_WINDOW_BYTES = 256 * 1024;
/** Windows kept per pack (the most recently used). */
const PACK_WINDOWS = 4;

/** Counts for tests and diagnostics: windows read, objects sliced, packs read whole as a fallback. */
export const packReadCounts = { windows: 0, slices: 0, wholeReads: 0 };

/** Read `length` bytes at `position` of `file` (opened for this read only: a pack replaced by gc stays readable by its new name). */
function readAt(file: string, position: number, length: number): Buffer {
  const bytes = Buffer.allocUnsafeSlow(length);
  const fd = nodeFs.openSync(file, 'r');
  try {
    let done = 0;
    while (done < length) {
      const read = nodeFs.readSync(fd, bytes, done, length - done, position + done);
      if (read === 0) throw Object.assign(new Error(`pack file ${file} ended at ${position + done} bytes, before the ${position + length} it was read to`), { code: 'EIO' });
      done += read;
    }
  } finally {
    nodeFs.closeSync(fd);
  }
  return bytes;
}

/** The three things isomorphic-git asks of a loaded pack (see above). */
interface PackBytes {
  readonly length: number;
  slice(start?: number, end?: number): Buffer;
  subarray(start?: number, end?: number): Buffer;
}

/**
 * A pack file that reads what is asked of it. `objectStarts` gives every object's offset, ascending: an
 * object read by `slice(start)` ends where the next one starts (or at the pack's trailing checksum).
 */
export class PackByPosition implements PackBytes {
  private readonly windows: Array<{ start: number; bytes: Buffer }> = [];
  private starts: Uint32Array | null = null;

  constructor(
    readonly file: string,
    readonly length: number,
    private readonly objectStarts: () => Uint32Array,
  ) {}

  /** A byte position as Buffer.slice reads one: negative from the end, clamped to the pack. */
  private position(value: number | undefined, fallback: number): number {
    if (value === undefined) return fallback;
    const integer = Math.trunc(Number(value)) || 0;
    return integer < 0 ? Math.max(this.length + integer, 0) : Math.min(integer, this.length);
  }

  /** Where the object that starts at `start` ends. */
  private objectEnd(start: number): number {
    const starts = (this.starts ??= this.objectStarts());
    let low = 0;
    let high = starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (starts[middle] <= start) low = middle + 1;
      else high = middle;
    }
    return low < starts.length ? starts[low] : Math.max(start, this.length - 20);
  }

  /**
   * With a start and no end, the object stored there (isomorphic-git's readSlice reads one object from its
   * start: unlike Buffer.slice, this stops where the next object starts); otherwise as Buffer.slice.
   */
  slice(start?: number, end?: number): Buffer {
    const from = this.position(start, 0);
    const oneObject = end === undefined && start !== undefined && Number(start) >= 0 && from < this.length;
    const to = oneObject ? this.objectEnd(from) : this.position(end, this.length);
    packReadCounts.slices++;
    return this.bytes(from, Math.max(from, to));
  }

  subarray(start?: number, end?: number): Buffer {
    const from = this.position(start, 0);
    return this.bytes(from, Math.max(from, this.position(end, this.length)));
  }

  /** The bytes [from, to): from a window read before, a new window, or (when large) read alone. */
  private bytes(from: number, to: number): Buffer {
    const length = to - from;
    for (let i = 0; i < this.windows.length; i++) {
      const window = this.windows[i];
      if (from >= window.start && to <= window.start + window.bytes.length) {
        if (i > 0) this.windows.unshift(...this.windows.splice(i, 1));
        return window.bytes.subarray(from - window.start, to - window.start);
      }
    }
    if (length * 2 > PACK_WINDOW_BYTES) return readAt(this.file, from, length);
    const start = from - (from % 4096);
    const window = { start, bytes: readAt(this.file, start, Math.min(PACK_WINDOW_BYTES, this.length - start)) };
    packReadCounts.windows++;
    this.windows.unshift(window);
    if (this.windows.length > PACK_WINDOWS) this.windows.pop();
    return window.bytes.subarray(from - start, to - start);
  }
}

/**
 * `pack`, or for anything isomorphic-git asks of it beyond those three, the whole file read then (a Buffer,
 * as isomorphic-git's own load would have made it).
 */
function withWholeFileFallback(pack: PackByPosition): PackBytes {
  // Bound once: `slice` is asked for on every packed read.
  const answered: Record<PropertyKey, unknown> = {
    length: pack.length,
    slice: pack.slice.bind(pack),
    subarray: pack.subarray.bind(pack),
  };
  let whole: Buffer | null = null;
  return new Proxy(pack, {
    get(target, key) {
      if (Object.hasOwn(answered, key)) return answered[key];
      if (key === 'then') return undefined; // not a thenable: it is awaited as a value
      if (!whole) {
        whole = nodeFs.readFileSync(target.file);
        packReadCounts.wholeReads++;
      }
      const value = Reflect.get(whole, key, whole) as unknown;
      return typeof value === 'function' ? value.bind(whole) : value;
    },
  });
}

/** What is used of isomorphic-git's GitPackIndex here. */
interface LoadingPackIndex {
  offsets: unknown;
  hashes?: unknown;
  pack?: unknown;
  _checksumVerification?: unknown;
}

function isPackIndex(value: unknown): value is LoadingPackIndex {
  return !!value && typeof value === 'object' && (value as LoadingPackIndex).offsets instanceof Map;
}

/**
 * Give a pack index isomorphic-git has just loaded from `idxFile` its compact id table and its pack read by
 * position. Done in the first callback of its loading promise, before isomorphic-git's own (which loads
 * the whole pack when it finds none).
 */
function adoptPackIndex(idxFile: string, index: unknown): void {
  if (!isPackIndex(index) || index.pack) return;
  const packFile = idxFile.replace(/\.idx$/, '.pack');
  let length: number;
  try {
    length = nodeFs.statSync(packFile).size;
  } catch {
    return; // isomorphic-git reports the missing pack itself
  }
  const compact = CompactPackOffsets.from(index.offsets as Map<unknown, unknown>);
  let objectStarts: () => Uint32Array;
  if (compact) {
    index.offsets = compact;
    // The same ids as the Map's keys, made again only if something asks for the list.
    Object.defineProperty(index, 'hashes', { get: () => compact.idList(), set: (value) => Object.defineProperty(index, 'hashes', { value, writable: true, enumerable: true, configurable: true }), enumerable: true, configurable: true });
    objectStarts = () => compact.sortedOffsets();
  } else {
    const offsets = index.offsets as Map<string, number>;
    objectStarts = () => Uint32Array.from(offsets.values()).sort();
  }
  index.pack = Promise.resolve(withWholeFileFallback(new PackByPosition(packFile, length, objectStarts)));
  forgetFailedChecks(index);
}

/**
 * isomorphic-git checks a pack's checksum once and keeps the promise of that check (`_checksumVerification`)
 * for every later read. It checked bytes already in memory; read by position, the check reads the file, and
 * a read that fails (an I/O error, a pack another process's gc removed) would fail every later read of the
 * pack for as long as its index is cached. So a check that failed is forgotten, and the next read checks
 * again.
 */
function forgetFailedChecks(index: LoadingPackIndex): void {
  let check: unknown = index._checksumVerification;
  Object.defineProperty(index, '_checksumVerification', {
    get: () => check,
    set: (value: unknown) => {
      check = value;
      if (value instanceof Promise) {
        value.catch(() => {
          if (check === value) check = undefined;
        });
      }
    },
    enumerable: true,
    configurable: true,
  });
}

/** isomorphic-git's Map of pack indexes, each adopted as it starts loading. */
class AdoptingPackIndexes extends Map<unknown, unknown> {
  override set(filename: unknown, loading: unknown): this {
    if (typeof filename === 'string' && filename.endsWith('.idx') && loading instanceof Promise) {
      loading.then((index: unknown) => adoptPackIndex(filename, index), () => undefined);
    }
    return super.set(filename, loading);
  }
}

/** The description of the symbol isomorphic-git keeps its pack indexes under in its cache object. */
const PACK_INDEXES = 'PackfileCache';

/**
 * A cache object to hand isomorphic-git (its `cache` argument) whose packs are read by position and whose
 * pack indexes keep compact id tables.
 */
export function packReadingCache(): object {
  return new Proxy<Record<PropertyKey, unknown>>(
    {},
    {
      set(target, key, value) {
        if (typeof key === 'symbol' && key.description === PACK_INDEXES && value instanceof Map && !(value instanceof AdoptingPackIndexes)) {
          value = new AdoptingPackIndexes(value);
        }
        return Reflect.set(target, key, value);
      },
    },
  );
}
