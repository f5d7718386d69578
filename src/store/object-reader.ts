import * as fs from 'node:fs';
import * as path from 'node:path';
import { inflateSync } from 'node:zlib';

/**
 * Raw git objects by oid — loose files and version-2 packs (OFS_DELTA and REF_DELTA) — read
 * synchronously with node's zlib.
 *
 * isomorphic-git's read path costs about a millisecond per object (a gitdir stat, a failed loose open and a
 * pack-directory listing per read, pure-JS inflate with a fresh 64 KB window per object, and a cache of
 * every object it ever read). Audit pages read hundreds of blobs (blame of a 500-revision file), and the
 * history index reads every commit of a store when it is rebuilt; this reader makes those reads
 * cheap. It answers null for anything it does not know, and ObjectStore then asks isomorphic-git.
 */

export interface RawObject {
  type: 'commit' | 'tree' | 'blob' | 'tag';
  body: Buffer;
}

const TYPES = [undefined, 'commit', 'tree', 'blob', 'tag'] as const;
const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Delta bases kept for the next version of the same thing (bytes). */
const BASE_CACHE_BYTES = 64 * 1024 * 1024;

interface Pack {
  name: string;
  idx: Buffer;
  count: number;
  data: Buffer | null;
}

export class ObjectReader {
  private packs: Pack[] | null = null;
  private packListing = '';
  private readonly bases = new Map<string, RawObject>();
  private baseBytes = 0;

  constructor(private readonly gitdir: string) {}

  read(oid: string): RawObject | null {
    const loose = this.readLoose(oid);
    if (loose) return loose;
    const packed = this.readPacked(oid);
    if (packed) return packed;
    // A pack written since the listing (gc in this or another process): list again, once.
    return this.reloadPacks() ? this.readPacked(oid) : null;
  }

  private readLoose(oid: string): RawObject | null {
    let raw: Buffer;
    try {
      raw = fs.readFileSync(path.join(this.gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
    } catch {
      return null;
    }
    const wrapped = inflateSync(raw);
    const nul = wrapped.indexOf(0);
    const [type, size] = wrapped.toString('latin1', 0, nul).split(' ');
    const body = wrapped.subarray(nul + 1);
    if (Number(size) !== body.length || !(TYPES as readonly unknown[]).includes(type)) return null;
    return { type: type as RawObject['type'], body };
  }

  private readPacked(oid: string): RawObject | null {
    this.packs ??= this.listPacks();
    for (const pack of this.packs) {
      const offset = findOffset(pack, oid);
      if (offset !== null) return this.readAt(pack, offset);
    }
    return null;
  }

  private reloadPacks(): boolean {
    const before = this.packListing;
    this.packs = this.listPacks();
    return this.packListing !== before;
  }

  private listPacks(): Pack[] {
    const dir = path.join(this.gitdir, 'objects', 'pack');
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n)).sort();
    } catch {
      names = [];
    }
    this.packListing = names.join(',');
    const kept = new Map((this.packs ?? []).map((p) => [p.name, p]));
    const packs: Pack[] = [];
    for (const name of names) {
      const existing = kept.get(name);
      if (existing) {
        packs.push(existing);
        continue;
      }
      try {
        const idx = fs.readFileSync(path.join(dir, name));
        if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) continue;
        packs.push({ name, idx, count: idx.readUInt32BE(8 + 255 * 4), data: null });
      } catch {
        // removed meanwhile by a gc: its objects are in the pack that replaced it
      }
    }
    return packs;
  }

  private packData(pack: Pack): Buffer {
    pack.data ??= fs.readFileSync(path.join(this.gitdir, 'objects', 'pack', pack.name.replace(/\.idx$/, '.pack')));
    return pack.data;
  }

  /** The object at `offset`, resolving a delta chain from its nearest cached (or whole) base. */
  private readAt(pack: Pack, offset: number): RawObject | null {
    const data = this.packData(pack);
    const chain: Buffer[] = [];
    let base: RawObject | null = null;
    let at = offset;
    const firstKey = `${pack.name}:${offset}`;
    for (let depth = 0; depth < 10_000; depth++) {
      const cached = this.bases.get(`${pack.name}:${at}`);
      if (cached) {
        base = cached;
        break;
      }
      let pos = at;
      let byte = data[pos++];
      const type = (byte >> 4) & 7;
      while (byte & 0x80) byte = data[pos++];
      if (type === OFS_DELTA) {
        byte = data[pos++];
        let distance = byte & 0x7f;
        while (byte & 0x80) {
          byte = data[pos++];
          distance = ((distance + 1) * 128) + (byte & 0x7f);
        }
        chain.push(inflateSync(data.subarray(pos)));
        at -= distance;
      } else if (type === REF_DELTA) {
        const baseOid = data.toString('hex', pos, pos + 20);
        chain.push(inflateSync(data.subarray(pos + 20)));
        base = this.read(baseOid);
        if (!base) return null;
        break;
      } else {
        const name = TYPES[type];
        if (!name) return null;
        base = { type: name, body: inflateSync(data.subarray(pos)) };
        break;
      }
    }
    if (!base) return null;
    let result = base;
    for (let i = chain.length - 1; i >= 0; i--) {
      result = { type: result.type, body: applyDelta(result.body, chain[i]) };
    }
    // Keep what the next read of this thing is likely to build on: the object itself.
    if (chain.length > 0) this.remember(firstKey, result);
    return result;
  }

  private remember(key: string, object: RawObject): void {
    if (object.body.length > BASE_CACHE_BYTES / 16) return;
    this.bases.set(key, object);
    this.baseBytes += object.body.length;
    while (this.baseBytes > BASE_CACHE_BYTES) {
      const [oldest, value] = this.bases.entries().next().value!;
      this.bases.delete(oldest);
      this.baseBytes -= value.body.length;
    }
  }
}

function findOffset(pack: Pack, oid: string): number | null {
  const idx = pack.idx;
  const first = parseInt(oid.slice(0, 2), 16);
  let lo = first === 0 ? 0 : idx.readUInt32BE(8 + (first - 1) * 4);
  let hi = idx.readUInt32BE(8 + first * 4);
  const target = Buffer.from(oid, 'hex');
  const names = 8 + 256 * 4;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const cmp = idx.compare(target, 0, 20, names + mid * 20, names + mid * 20 + 20);
    if (cmp === 0) {
      const offsets = names + pack.count * 24;
      const small = idx.readUInt32BE(offsets + mid * 4);
      if (!(small & 0x80000000)) return small;
      const large = offsets + pack.count * 4 + (small & 0x7fffffff) * 8;
      return idx.readUInt32BE(large) * 0x100000000 + idx.readUInt32BE(large + 4);
    }
    if (cmp > 0) hi = mid;
    else lo = mid + 1;
  }
  return null;
}

/** Apply a git delta (copy/insert instructions) to `base`. */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let pos = 0;
  const varint = () => {
    let value = 0;
    let shift = 0;
    let byte: number;
    do {
      byte = delta[pos++];
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return value;
  };
  const baseSize = varint();
  if (baseSize !== base.length) throw new Error('delta: base size mismatch');
  const out = Buffer.allocUnsafe(varint());
  let outPos = 0;
  while (pos < delta.length) {
    const op = delta[pos++];
    if (op & 0x80) {
      let offset = 0;
      let size = 0;
      for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += delta[pos++] * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (0x10 << i)) size += delta[pos++] << (8 * i);
      if (size === 0) size = 0x10000;
      outPos += base.copy(out, outPos, offset, offset + size);
    } else if (op > 0) {
      outPos += delta.copy(out, outPos, pos, pos + op);
      pos += op;
    } else {
      throw new Error('delta: reserved opcode 0');
    }
  }
  if (outPos !== out.length) throw new Error('delta: result size mismatch');
  return out;
}
