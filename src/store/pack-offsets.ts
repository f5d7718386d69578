/**
 * A pack index's table of object ids and offsets, kept compactly: what isomorphic-git's GitPackIndex holds
 * as `offsets`, a Map from each id (a 40-character hex string) to its offset in the pack.
 *
 * As a Map that table costs about 86 bytes per object (the id's string, the Map's entry, the `hashes`
 * array beside it): 43 MB for a 500,000-object pack, resident from the first read of the pack until the
 * process ends. Here the ids are 20 bytes each in one sorted array and the offsets 4 bytes each: 12 MB.
 * It is built from the Map isomorphic-git parsed out of the .idx file (memgit reads no index format) and
 * answers what isomorphic-git and memgit ask of that Map — `get`, `has`, `size` and iteration — with the
 * same answers: a lookup is a binary search within the ids that share the first byte.
 */

const ID_WORDS = 5;
/** The value of each lowercase hex digit by character code; -1 for every other character. */
const HEX_DIGIT = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_DIGIT['0123456789abcdef'.charCodeAt(digit)] = digit;

/**
 * Write `oid` as five 32-bit words at `out[at]`; false (nothing meaningful written) when it is not what
 * isomorphic-git spells an id: 40 lowercase hex digits (any other key is simply not in the table).
 */
function writeWords(oid: string, out: Uint32Array, at: number): boolean {
  if (oid.length !== 40) return false;
  for (let word = 0; word < ID_WORDS; word++) {
    let value = 0;
    for (let k = word * 8; k < word * 8 + 8; k++) {
      const code = oid.charCodeAt(k);
      const digit = code < 128 ? HEX_DIGIT[code] : -1;
      if (digit < 0) return false;
      value = (value << 4) | digit;
    }
    out[at + word] = value; // stored unsigned
  }
  return true;
}
/** isomorphic-git reads offsets as 32-bit unsigned numbers (packs over 2 GiB are refused). */
const MAX_OFFSET = 0xffffffff;

export class CompactPackOffsets implements ReadonlyMap<string, number> {
  /** Where the ids with each first byte begin, and (at 256) the count. */
  private readonly fanout = new Uint32Array(257);
  /** Each id as five big-endian 32-bit words: compared in JavaScript, without a native call per step. */
  private readonly words: Uint32Array;
  /** The id being looked up, as words (no allocation per lookup). */
  private readonly probe = new Uint32Array(ID_WORDS);
  /** The last id looked up and where it was: isomorphic-git asks `has` and then `get` twice for one read. */
  private lastOid: unknown = undefined;
  private lastIndex = -1;

  private constructor(
    words: Uint32Array,
    private readonly offsetOf: Uint32Array,
  ) {
    this.words = words;
    const count = offsetOf.length;
    let at = 0;
    for (let first = 0; first < 256; first++) {
      this.fanout[first] = at;
      while (at < count && words[at * ID_WORDS] >>> 24 === first) at++;
    }
    this.fanout[256] = count;
  }

  /**
   * The same table as `map`, compact; null when a key or value is not what a pack index holds (the Map is
   * then kept as it is).
   */
  static from(map: ReadonlyMap<unknown, unknown>): CompactPackOffsets | null {
    // Filled in the Map's order (a .idx lists its ids sorted); sorted afterwards only if it was not. No copy
    // of the entries: the table is built at a page's first read of a large pack, and a copy of 500,000
    // entries would be garbage as large as what it saves.
    const words = new Uint32Array(map.size * ID_WORDS);
    const offsets = new Uint32Array(map.size);
    let sorted = true;
    let previous = '';
    let i = 0;
    for (const [key, value] of map) {
      if (typeof key !== 'string' || !writeWords(key, words, i * ID_WORDS)) return null;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_OFFSET) return null;
      if (key <= previous) sorted = false;
      previous = key;
      offsets[i++] = value;
    }
    if (!sorted) {
      const entries = [...map].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1)) as Array<[string, number]>;
      entries.forEach(([oid, offset], at) => {
        writeWords(oid, words, at * ID_WORDS);
        offsets[at] = offset;
      });
    }
    return new CompactPackOffsets(words, offsets);
  }

  get size(): number {
    return this.offsetOf.length;
  }

  /** The position of `oid` in the table, or -1. */
  private indexOf(oid: unknown): number {
    if (oid === this.lastOid) return this.lastIndex;
    const index = this.search(oid);
    this.lastOid = oid;
    this.lastIndex = index;
    return index;
  }

  private search(oid: unknown): number {
    const probe = this.probe;
    if (typeof oid !== 'string' || !writeWords(oid, probe, 0)) return -1;
    const [w0, w1, w2, w3, w4] = probe;
    const words = this.words;
    let low = this.fanout[w0 >>> 24];
    let high = this.fanout[(w0 >>> 24) + 1] - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = middle * ID_WORDS;
      let order = w0 - words[at];
      if (order === 0) order = w1 - words[at + 1];
      if (order === 0) order = w2 - words[at + 2];
      if (order === 0) order = w3 - words[at + 3];
      if (order === 0) order = w4 - words[at + 4];
      if (order === 0) return middle;
      if (order > 0) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }

  get(oid: string): number | undefined {
    const index = this.indexOf(oid);
    return index < 0 ? undefined : this.offsetOf[index];
  }

  has(oid: string): boolean {
    return this.indexOf(oid) >= 0;
  }

  private idAt(index: number): string {
    let oid = '';
    for (let word = 0; word < ID_WORDS; word++) oid += this.words[index * ID_WORDS + word].toString(16).padStart(8, '0');
    return oid;
  }

  *keys(): MapIterator<string> {
    for (let i = 0; i < this.offsetOf.length; i++) yield this.idAt(i);
  }

  *values(): MapIterator<number> {
    for (let i = 0; i < this.offsetOf.length; i++) yield this.offsetOf[i];
  }

  *entries(): MapIterator<[string, number]> {
    for (let i = 0; i < this.offsetOf.length; i++) yield [this.idAt(i), this.offsetOf[i]];
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }

  forEach(callback: (value: number, key: string, map: ReadonlyMap<string, number>) => void, thisArg?: unknown): void {
    for (let i = 0; i < this.offsetOf.length; i++) callback.call(thisArg, this.offsetOf[i], this.idAt(i), this);
  }

  /** The ids in the table's order (isomorphic-git's `hashes`, made only when something asks for it). */
  idList(): string[] {
    return Array.from(this.keys());
  }

  /** Every offset, ascending: where each object starts, so where the one before it ends. */
  sortedOffsets(): Uint32Array {
    return Uint32Array.from(this.offsetOf).sort();
  }

  get [Symbol.toStringTag](): string {
    return 'CompactPackOffsets';
  }
}
