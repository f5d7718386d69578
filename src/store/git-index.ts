import { createHash } from 'node:crypto';
import type { BigIntStats } from 'node:fs';

/**
 * Git's index file (version 2), read and written in one pass for the working-tree projection.
 *
 * isomorphic-git's updateIndex serialises and hashes the whole index once per changed file (about 3 ms
 * for 1,000 files, the largest share of a call), and it takes its stats either from the file or from an
 * oid, not both. Here a call's changes are applied to the parsed entries and the file is written once,
 * with the real stats of the files just written (so `git status` needs no re-hash). Only the plain
 * format memgit configures is handled (version 2, stage 0, no split index); anything else — an index a
 * user's git rewrote with other settings — is reported as unsupported and the caller falls back to
 * isomorphic-git. Optional extensions (the TREE cache, …) are dropped, which git allows.
 */

export interface IndexEntry {
  readonly path: string;
  readonly oid: string;
  readonly mode: number;
  readonly ctimeSec: number;
  readonly ctimeNsec: number;
  readonly mtimeSec: number;
  readonly mtimeNsec: number;
  readonly dev: number;
  readonly ino: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
}

const SIGNATURE = 0x44495243; // 'DIRC'
const ENTRY_FIXED = 62;
const NAME_MASK = 0xfff;

/** Entries by path, or null when the file uses a feature this reader does not handle. */
export function parseIndex(buffer: Buffer): Map<string, IndexEntry> | null {
  if (buffer.length < 32 || buffer.readUInt32BE(0) !== SIGNATURE || buffer.readUInt32BE(4) !== 2) return null;
  const body = buffer.subarray(0, buffer.length - 20);
  const checksum = createHash('sha1').update(body).digest();
  if (!checksum.equals(buffer.subarray(buffer.length - 20))) return null;
  const count = buffer.readUInt32BE(8);
  const entries = new Map<string, IndexEntry>();
  let offset = 12;
  for (let i = 0; i < count; i++) {
    if (offset + ENTRY_FIXED > body.length) return null;
    const flags = buffer.readUInt16BE(offset + 60);
    if (flags & 0x7000) return null; // merge stages or the extended flag (a v3 feature)
    const nameStart = offset + ENTRY_FIXED;
    const nameEnd = buffer.indexOf(0, nameStart);
    if (nameEnd < 0 || nameEnd > body.length) return null;
    const path = buffer.toString('utf8', nameStart, nameEnd);
    entries.set(path, {
      path,
      ctimeSec: buffer.readUInt32BE(offset),
      ctimeNsec: buffer.readUInt32BE(offset + 4),
      mtimeSec: buffer.readUInt32BE(offset + 8),
      mtimeNsec: buffer.readUInt32BE(offset + 12),
      dev: buffer.readUInt32BE(offset + 16),
      ino: buffer.readUInt32BE(offset + 20),
      mode: buffer.readUInt32BE(offset + 24),
      uid: buffer.readUInt32BE(offset + 28),
      gid: buffer.readUInt32BE(offset + 32),
      size: buffer.readUInt32BE(offset + 36),
      oid: buffer.toString('hex', offset + 40, offset + 60),
    });
    offset += entryLength(nameEnd - nameStart);
  }
  // Extensions: an uppercase first letter marks an optional one (safe to drop); any other is required.
  while (offset + 8 <= body.length) {
    const first = buffer[offset];
    if (!(first >= 0x41 && first <= 0x5a)) return null;
    offset += 8 + buffer.readUInt32BE(offset + 4);
  }
  return entries;
}

export function serializeIndex(entries: Iterable<IndexEntry>): Buffer {
  const sorted = sortByPathBytes([...entries], (entry) => entry.path);
  const header = Buffer.alloc(12);
  header.writeUInt32BE(SIGNATURE, 0);
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(sorted.length, 8);
  const body = Buffer.concat([header, ...sorted.map(entryBytes)]);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/** Entries are immutable once made; a call changes one or two, so the others' bytes are reused. */
const encoded = new WeakMap<IndexEntry, Buffer>();

function entryBytes(entry: IndexEntry): Buffer {
  const cached = encoded.get(entry);
  if (cached) return cached;
  const name = Buffer.from(entry.path, 'utf8');
  const out = Buffer.alloc(entryLength(name.length)); // the padding NULs are already zero
  const fields = [entry.ctimeSec, entry.ctimeNsec, entry.mtimeSec, entry.mtimeNsec, entry.dev, entry.ino, entry.mode, entry.uid, entry.gid, entry.size];
  for (let i = 0; i < fields.length; i++) out.writeUInt32BE(fields[i] >>> 0, i * 4);
  out.write(entry.oid, 40, 20, 'hex');
  out.writeUInt16BE(Math.min(name.length, NAME_MASK), 60);
  name.copy(out, ENTRY_FIXED);
  encoded.set(entry, out);
  return out;
}

/**
 * Sort by the UTF-8 bytes of a key, git's order. JavaScript's string order is the same except for
 * characters beyond the BMP (surrogates sort below U+E000–U+FFFF), so bytes are compared only then.
 */
export function sortByPathBytes<T>(items: T[], key: (item: T) => string): T[] {
  const keys = items.map(key);
  const order = items.map((_, i) => i);
  // eslint-disable-next-line no-control-regex
  const astral = keys.some((k) => /[\ud800-\udfff]/.test(k));
  if (astral) {
    const bytes = keys.map((k) => Buffer.from(k, 'utf8'));
    order.sort((a, b) => Buffer.compare(bytes[a], bytes[b]));
  } else {
    order.sort((a, b) => (keys[a] < keys[b] ? -1 : keys[a] > keys[b] ? 1 : 0));
  }
  return order.map((i) => items[i]);
}

/** An index entry for a regular file from its lstat (taken with `{ bigint: true }` for nanoseconds). */
export function entryFromStats(path: string, oid: string, stats: BigIntStats): IndexEntry {
  const u32 = (value: bigint) => Number(value & 0xffffffffn);
  return {
    path,
    oid,
    mode: 0o100644,
    ctimeSec: u32(stats.ctimeNs / 1_000_000_000n),
    ctimeNsec: u32(stats.ctimeNs % 1_000_000_000n),
    mtimeSec: u32(stats.mtimeNs / 1_000_000_000n),
    mtimeNsec: u32(stats.mtimeNs % 1_000_000_000n),
    dev: u32(stats.dev),
    ino: u32(stats.ino),
    uid: u32(stats.uid),
    gid: u32(stats.gid),
    size: u32(stats.size),
  };
}

/** 62 fixed bytes, the name, and 1–8 NULs so that the entry is a multiple of 8 bytes long. */
function entryLength(nameLength: number): number {
  return Math.floor((ENTRY_FIXED + nameLength + 8) / 8) * 8;
}
