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

/** Ids isomorphic-git spells: 40 lowercase hex digits (any other key is simply not in the table). */
const OID = /^[0-9a-f]{40}$/;
const ID_BYTES = 20;
/** isomorphic-git reads offsets as 32-bit unsigned numbers (packs over 2 GiB are refused). */
const MAX_OFFSET = 0xffffffff;

export class CompactPackOffsets implements ReadonlyMap<string, number> {
  /** Where the ids with each first byte begin, and (at 256) the count. */
  private readonly fanout = new Uint32Array(257);
  /** Each id as five big-endian 32-bit words: compared in JavaScript, without a native call per step. */
  private readonly words: Uint32Array;
  /** One scratch buffer for the id being looked up (no allocation per lookup). */
  private readonly probe = Buffer.alloc(ID_BYTES);
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
      while (at < count && words[at * 5] >>> 24 === first) at++;
    }
    this.fanout[256] = count;
  }

  /**
   * The same table as `map`, compact; null when a key or value is not what a pack index holds (the Map is
   * then kept as it is).
   */
  static from(map: ReadonlyMap<unknown, unknown>): CompactPackOffsets | null {
    // Checked first without copying: the table is built at a page's first read of a large pack, and a copy of
    // 500,000 entries would be garbage as large as what it saves.
    let sorted = true;
    let previous = '';
    for (const [key, value] of map) {
      if (typeof key !== 'string' || !OID.test(key)) return null;
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_OFFSET) return null;
      if (key <= previous) sorted = false;
      previous = key;
    }
    // A .idx lists its ids sorted; any other order is sorted here all the same.
    const entries: Iterable<[unknown, unknown]> = sorted ? map : [...map].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1));
    const words = new Uint32Array(map.size * 5);
    const offsets = new Uint32Array(map.size);
    const id = Buffer.alloc(ID_BYTES);
    let i = 0;
    for (const [oid, offset] of entries) {
      id.write(oid as string, 0, ID_BYTES, 'hex');
      for (let word = 0; word < 5; word++) words[i * 5 + word] = id.readUInt32BE(word * 4);
      offsets[i++] = offset as number;
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
    if (typeof oid !== 'string' || !OID.test(oid)) return -1;
    const probe = this.probe;
    probe.write(oid, 0, ID_BYTES, 'hex');
    const w0 = probe.readUInt32BE(0);
    const w1 = probe.readUInt32BE(4);
    const w2 = probe.readUInt32BE(8);
    const w3 = probe.readUInt32BE(12);
    const w4 = probe.readUInt32BE(16);
    const words = this.words;
    let low = this.fanout[probe[0]];
    let high = this.fanout[probe[0] + 1] - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const at = middle * 5;
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
    for (let word = 0; word < 5; word++) oid += this.words[index * 5 + word].toString(16).padStart(8, '0');
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
