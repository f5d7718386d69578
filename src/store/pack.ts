import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';

/**
 * A git packfile (version 2) and its index (.idx version 2), built in memory.
 *
 * isomorphic-git can write a pack (packObjects) but stores every object whole: a store's trees are
 * rewritten on every call and differ by one entry, so without deltas a pack of 1,000 calls over 1,000
 * files still holds ~25 MB of trees. Here each object may be stored as an OFS_DELTA against the previous
 * version of the same path (the caller says which object that is), as git's own gc does, with chains
 * capped at `maxDepth` so that reading an old version stays cheap. Readers are unchanged: git and
 * isomorphic-git both read OFS_DELTA entries.
 */

export type PackObjectType = 'commit' | 'tree' | 'blob' | 'tag';

const TYPE_CODE: Record<PackObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };
const OFS_DELTA = 6;
const DEFAULT_MAX_DEPTH = 50;
/** A delta is kept only if it saves at least this share of the object's size. */
const MIN_DELTA_SAVING = 0.25;

interface Written {
  offset: number;
  depth: number;
  body: Buffer;
  type: PackObjectType;
}

export class PackBuilder {
  private readonly chunks: Buffer[] = [];
  private offset = 12;
  private readonly entries: Array<{ oid: string; offset: number; crc: number }> = [];
  private readonly oids = new Set<string>();
  /** The last object written under each delta key: the base for the next version of that path. */
  private readonly lastByKey = new Map<string, Written>();

  constructor(private readonly maxDepth = DEFAULT_MAX_DEPTH) {}

  get count(): number {
    return this.entries.length;
  }

  has(oid: string): boolean {
    return this.oids.has(oid);
  }

  /**
   * Add one object (its content, without git's "type size\0" header). `deltaKey` groups the versions of
   * one thing (a path, "commit"): the object is stored as a delta against the previous object of that
   * key when that is smaller.
   */
  add(oid: string, type: PackObjectType, body: Buffer, deltaKey?: string): void {
    if (this.oids.has(oid)) return;
    const base = deltaKey ? this.lastByKey.get(deltaKey) : undefined;
    let written: Written = { offset: this.offset, depth: 0, body, type };
    let entry: Buffer | null = null;
    if (base && base.type === type && base.depth < this.maxDepth && body.length >= 32) {
      const delta = createDelta(base.body, body);
      if (delta.length <= body.length * (1 - MIN_DELTA_SAVING)) {
        entry = Buffer.concat([typeAndSize(OFS_DELTA, delta.length), encodeOffset(this.offset - base.offset), deflateSync(delta)]);
        written = { ...written, depth: base.depth + 1 };
      }
    }
    entry ??= Buffer.concat([typeAndSize(TYPE_CODE[type], body.length), deflateSync(body)]);
    this.entries.push({ oid, offset: this.offset, crc: crc32(entry) });
    this.oids.add(oid);
    this.chunks.push(entry);
    this.offset += entry.length;
    if (deltaKey) this.lastByKey.set(deltaKey, written);
  }

  /** The finished pack, its index, and the pack's checksum (which names both files). */
  finish(): { pack: Buffer; idx: Buffer; checksum: string } {
    const header = Buffer.alloc(12);
    header.write('PACK', 0, 'latin1');
    header.writeUInt32BE(2, 4);
    header.writeUInt32BE(this.entries.length, 8);
    const body = Buffer.concat([header, ...this.chunks]);
    const packSum = createHash('sha1').update(body).digest();
    const pack = Buffer.concat([body, packSum]);
    return { pack, idx: buildIndex(this.entries, packSum), checksum: packSum.toString('hex') };
  }
}

function buildIndex(entries: Array<{ oid: string; offset: number; crc: number }>, packSum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const n = sorted.length;
  const large = sorted.filter((e) => e.offset >= 0x80000000);
  const out = Buffer.alloc(8 + 256 * 4 + n * 28 + large.length * 8 + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const e of sorted) fanout[parseInt(e.oid.slice(0, 2), 16)]++;
  let cumulative = 0;
  for (let i = 0; i < 256; i++) {
    cumulative += fanout[i];
    out.writeUInt32BE(cumulative, 8 + i * 4);
  }
  let at = 8 + 256 * 4;
  for (const e of sorted) at += out.write(e.oid, at, 20, 'hex');
  for (const e of sorted) at = out.writeUInt32BE(e.crc >>> 0, at);
  let largeIndex = 0;
  for (const e of sorted) {
    at = out.writeUInt32BE(e.offset >= 0x80000000 ? (0x80000000 | largeIndex++) >>> 0 : e.offset, at);
  }
  for (const e of large) {
    at = out.writeUInt32BE(Math.floor(e.offset / 0x100000000), at);
    at = out.writeUInt32BE(e.offset >>> 0, at);
  }
  at += packSum.copy(out, at);
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/** The oids listed in a version-2 pack index. */
export function readIndexOids(idx: Buffer): string[] {
  if (idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) throw new Error('not a version 2 pack index');
  const n = idx.readUInt32BE(8 + 255 * 4);
  const oids: string[] = [];
  const start = 8 + 256 * 4;
  for (let i = 0; i < n; i++) oids.push(idx.toString('hex', start + i * 20, start + i * 20 + 20));
  return oids;
}

/** Pack entry header: type in bits 4–6 of the first byte, size as a little-endian base-128 number. */
function typeAndSize(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  size = Math.floor(size / 16);
  while (size > 0) {
    bytes.push(byte | 0x80);
    byte = size & 0x7f;
    size = Math.floor(size / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** OFS_DELTA's distance back to the base, in git's offset encoding (big-endian, each byte less one). */
function encodeOffset(distance: number): Buffer {
  const bytes = [distance & 0x7f];
  distance = Math.floor(distance / 128);
  while (distance > 0) {
    distance -= 1;
    bytes.unshift(0x80 | (distance & 0x7f));
    distance = Math.floor(distance / 128);
  }
  return Buffer.from(bytes);
}

const BLOCK = 16;
const MAX_COPY = 0xffff;
const MAX_INSERT = 0x7f;

/**
 * A git delta that rebuilds `target` from `base`: the base is indexed by 16-byte blocks, the target
 * scanned for them, each match extended both ways and emitted as a copy; the rest is inserted literally.
 * Simple (no rolling hash), and enough for git trees and memory files, which change a little per call.
 */
export function createDelta(base: Buffer, target: Buffer): Buffer {
  const out: number[] = [];
  pushVarint(out, base.length);
  pushVarint(out, target.length);
  const blocks = new Map<number, number>();
  for (let i = 0; i + BLOCK <= base.length; i += BLOCK) {
    const h = blockHash(base, i);
    if (!blocks.has(h)) blocks.set(h, i);
  }
  let pending = 0; // start of bytes not yet emitted
  let p = 0;
  while (p + BLOCK <= target.length) {
    const candidate = blocks.get(blockHash(target, p));
    if (candidate === undefined || base.compare(target, p, p + BLOCK, candidate, candidate + BLOCK) !== 0) {
      p++;
      continue;
    }
    let start = p;
    let baseStart = candidate;
    while (start > pending && baseStart > 0 && target[start - 1] === base[baseStart - 1]) {
      start--;
      baseStart--;
    }
    let end = p + BLOCK;
    let baseEnd = candidate + BLOCK;
    while (end < target.length && baseEnd < base.length && target[end] === base[baseEnd]) {
      end++;
      baseEnd++;
    }
    pushInsert(out, target, pending, start);
    pushCopy(out, baseStart, end - start);
    pending = p = end;
  }
  pushInsert(out, target, pending, target.length);
  return Buffer.from(out);
}

function blockHash(buf: Buffer, at: number): number {
  let h = Math.imul(buf.readUInt32LE(at), 0x9e3779b1);
  h = Math.imul(h ^ buf.readUInt32LE(at + 4), 0x85ebca6b);
  h = Math.imul(h ^ buf.readUInt32LE(at + 8), 0xc2b2ae35);
  return (h ^ buf.readUInt32LE(at + 12)) | 0;
}

function pushVarint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value & 0x7f) | 0x80);
    value = Math.floor(value / 128);
  }
  out.push(value);
}

function pushInsert(out: number[], data: Buffer, from: number, to: number): void {
  for (let at = from; at < to; at += MAX_INSERT) {
    const end = Math.min(to, at + MAX_INSERT);
    out.push(end - at);
    for (let i = at; i < end; i++) out.push(data[i]);
  }
}

function pushCopy(out: number[], offset: number, length: number): void {
  while (length > 0) {
    const size = Math.min(length, MAX_COPY);
    let op = 0x80;
    const args: number[] = [];
    for (let i = 0; i < 4; i++) {
      const byte = (offset >>> (8 * i)) & 0xff;
      if (byte) {
        op |= 1 << i;
        args.push(byte);
      }
    }
    for (let i = 0; i < 2; i++) {
      const byte = (size >>> (8 * i)) & 0xff;
      if (byte) {
        op |= 0x10 << i;
        args.push(byte);
      }
    }
    out.push(op, ...args);
    offset += size;
    length -= size;
  }
}
