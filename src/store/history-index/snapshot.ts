import * as crypto from 'node:crypto';
import * as os from 'node:os';

/**
 * A compact snapshot of the history index's lookup structures, derived from the JSON-lines file so that a
 * warm open neither parses every line nor builds a million small objects. It is a cache and never the
 * source of truth: it names the exact bytes of the file it describes (their length and SHA-1) and carries
 * a checksum of its own, so any change to either file makes it unusable and the index is loaded from the
 * JSON lines (and the snapshot written again). Entries themselves stay in the JSON lines: a line is parsed
 * when its entry is first asked for (and then kept), and its commit is checked against the snapshot.
 *
 * Per entry it keeps the byte offset of its line, its commit, tool_use id and session (as indexes into
 * string tables) and, per changed file, the path and whether the change wrote a blob, plus whether the line
 * carries facts; commit and tool_use lookups are open-addressing hash tables over the raw bytes.
 */

const MAGIC = 'memgit-history-snapshot 1\n';
const DIGEST = 20;

/** What the snapshot records of one entry (from the parsed line). */
export interface SnapshotRow {
  commit: string;
  toolUseId: string | undefined;
  session: string | undefined;
  paths: string[];
  written: boolean[];
  /** The line has facts (truthy). */
  facts: boolean;
  /** Byte offset of the entry's line in the JSON-lines file. */
  start: number;
}

interface Header {
  n: number;
  m: number;
  covered: number;
  prefix: string;
  sessions: string[];
  paths: string[];
  commitBytes: number;
  toolBytes: number;
  /** Seed of the key hashes stored with the snapshot (random per snapshot). */
  seed: number;
}

export class HistorySnapshot {
  private readonly commitTable: KeyTable;
  private readonly toolTable: KeyTable;

  private constructor(
    /** Entries described. */
    readonly n: number,
    /** Bytes of the JSON-lines file described (its first `covered` bytes, ending with a newline). */
    readonly covered: number,
    private readonly lineStart: Float64Array,
    private readonly commitBlob: Buffer,
    private readonly commitEnd: Int32Array,
    private readonly toolBlob: Buffer,
    private readonly toolEnd: Int32Array,
    readonly sessionOf: Int32Array,
    readonly sessions: string[],
    readonly changeEnd: Int32Array,
    readonly changePath: Int32Array,
    readonly changeWritten: Uint8Array,
    readonly paths: string[],
    readonly facts: Uint8Array,
    seed: number,
    commitHash: Uint32Array,
    toolHash: Uint32Array,
  ) {
    this.commitTable = new KeyTable(commitBlob, commitEnd, commitHash, n, seed);
    this.toolTable = new KeyTable(toolBlob, toolEnd, toolHash, n, seed);
  }

  commitAt(i: number): string {
    return this.commitBlob.toString('utf8', i === 0 ? 0 : this.commitEnd[i - 1], this.commitEnd[i]);
  }

  lineAt(i: number): number {
    return this.lineStart[i];
  }

  /** The entry's tool_use id, if it has one. */
  toolAt(i: number): string | undefined {
    const start = i === 0 ? 0 : this.toolEnd[i - 1];
    return this.toolEnd[i] === start ? undefined : this.toolBlob.toString('utf8', start, this.toolEnd[i]);
  }

  /** Position of a commit, or undefined. */
  commitPosition(commit: string): number | undefined {
    return this.commitTable.find(commit);
  }

  /** Position of the newest entry with this tool_use id, or undefined. */
  toolUsePosition(id: string): number | undefined {
    return this.toolTable.find(id);
  }

  /** Serialise rows describing the first `covered` bytes of `file` (null when a row cannot be described exactly). */
  static build(rows: SnapshotRow[], file: Buffer, covered: number): Buffer | null {
    if (os.endianness() !== 'LE') return null;
    const sessions: string[] = [];
    const sessionIds = new Map<string, number>();
    const paths: string[] = [];
    const pathIds = new Map<string, number>();
    const n = rows.length;
    let m = 0;
    for (const row of rows) m += row.paths.length;
    const lineStart = new Float64Array(n);
    const commitEnd = new Int32Array(n);
    const toolEnd = new Int32Array(n);
    const sessionOf = new Int32Array(n);
    const changeEnd = new Int32Array(n);
    const changePath = new Int32Array(m);
    const changeWritten = new Uint8Array(m);
    const facts = new Uint8Array(n);
    const seed = crypto.randomBytes(4).readUInt32LE(0);
    const commitHash = new Uint32Array(n);
    const toolHash = new Uint32Array(n);
    let commitBytes = 0;
    let toolBytes = 0;
    for (const row of rows) {
      if (!exact(row.commit) || (row.toolUseId !== undefined && !exact(row.toolUseId))) return null;
      commitBytes += Buffer.byteLength(row.commit, 'utf8');
      if (row.toolUseId !== undefined) toolBytes += Buffer.byteLength(row.toolUseId, 'utf8');
    }
    if (commitBytes > 0x7fffffff || toolBytes > 0x7fffffff) return null;
    const commitBlob = Buffer.alloc(commitBytes);
    const toolBlob = Buffer.alloc(toolBytes);
    let commitAt = 0;
    let toolAt = 0;
    let c = 0;
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      lineStart[i] = row.start;
      const start = commitAt;
      commitAt += commitBlob.write(row.commit, commitAt, 'utf8');
      commitHash[i] = hashBytes(seed, commitBlob, start, commitAt);
      commitEnd[i] = commitAt;
      if (row.toolUseId !== undefined) {
        const from = toolAt;
        toolAt += toolBlob.write(row.toolUseId, toolAt, 'utf8');
        toolHash[i] = hashBytes(seed, toolBlob, from, toolAt);
      }
      toolEnd[i] = toolAt;
      if (row.session === undefined) sessionOf[i] = -1;
      else {
        let id = sessionIds.get(row.session);
        if (id === undefined) sessionIds.set(row.session, (id = sessions.push(row.session) - 1));
        sessionOf[i] = id;
      }
      for (let k = 0; k < row.paths.length; k++, c++) {
        let id = pathIds.get(row.paths[k]);
        if (id === undefined) pathIds.set(row.paths[k], (id = paths.push(row.paths[k]) - 1));
        changePath[c] = id;
        changeWritten[c] = row.written[k] ? 1 : 0;
      }
      changeEnd[i] = c;
      facts[i] = row.facts ? 1 : 0;
    }
    const header: Header = {
      n,
      m,
      covered,
      prefix: crypto.createHash('sha1').update(file.subarray(0, covered)).digest('hex'),
      sessions,
      paths,
      commitBytes,
      toolBytes,
      seed,
    };
    const body = Buffer.concat([
      Buffer.from(MAGIC + JSON.stringify(header) + '\n', 'utf8'),
      bytesOf(lineStart),
      bytesOf(commitEnd),
      bytesOf(toolEnd),
      bytesOf(sessionOf),
      bytesOf(changeEnd),
      bytesOf(changePath),
      bytesOf(changeWritten),
      bytesOf(facts),
      bytesOf(commitHash),
      bytesOf(toolHash),
      commitBlob,
      toolBlob,
    ]);
    return Buffer.concat([body, crypto.createHash('sha1').update(body).digest()]);
  }

  /**
   * Read a snapshot and check it against the JSON-lines file it claims to describe: null when it is not
   * one, is damaged, or describes other bytes than the start of `file`.
   */
  static parse(data: Buffer, file: Buffer): HistorySnapshot | null {
    try {
      if (os.endianness() !== 'LE' || data.length < MAGIC.length + DIGEST) return null;
      if (data.toString('latin1', 0, MAGIC.length) !== MAGIC) return null;
      const body = data.subarray(0, data.length - DIGEST);
      if (!crypto.createHash('sha1').update(body).digest().equals(data.subarray(data.length - DIGEST))) return null;
      const eol = body.indexOf(10, MAGIC.length);
      if (eol < 0) return null;
      const header = JSON.parse(body.toString('utf8', MAGIC.length, eol)) as Header;
      const { n, m, covered, commitBytes, toolBytes, sessions, paths, seed } = header;
      const count = (x: unknown) => Number.isSafeInteger(x) && (x as number) >= 0;
      if (![n, m, covered, commitBytes, toolBytes, seed].every(count) || seed > 0xffffffff) return null;
      if (!isStrings(sessions) || !isStrings(paths) || typeof header.prefix !== 'string') return null;
      if (covered > file.length || (covered > 0 && file[covered - 1] !== 10)) return null;
      if (eol + 1 + n * 8 + n * 4 * 6 + m * 4 + m + n + commitBytes + toolBytes !== body.length) return null;
      let at = eol + 1;
      const take = (bytes: number): ArrayBuffer => {
        const copy = body.buffer.slice(body.byteOffset + at, body.byteOffset + at + bytes) as ArrayBuffer;
        at += bytes;
        return copy;
      };
      const lineStart = new Float64Array(take(n * 8));
      const commitEnd = new Int32Array(take(n * 4));
      const toolEnd = new Int32Array(take(n * 4));
      const sessionOf = new Int32Array(take(n * 4));
      const changeEnd = new Int32Array(take(n * 4));
      const changePath = new Int32Array(take(m * 4));
      const changeWritten = new Uint8Array(take(m));
      const facts = new Uint8Array(take(n));
      const commitHash = new Uint32Array(take(n * 4));
      const toolHash = new Uint32Array(take(n * 4));
      const commitBlob = Buffer.from(take(commitBytes));
      const toolBlob = Buffer.from(take(toolBytes));
      // Structure: offsets rise and stay inside what they index (a damaged table must not read out of bounds).
      let prevLine = -1;
      let prevCommit = 0;
      let prevTool = 0;
      let prevChange = 0;
      for (let i = 0; i < n; i++) {
        const line = lineStart[i];
        if (!Number.isSafeInteger(line) || line <= prevLine || line >= covered) return null;
        if (commitEnd[i] <= prevCommit || toolEnd[i] < prevTool || changeEnd[i] < prevChange) return null;
        if (sessionOf[i] < -1 || sessionOf[i] >= sessions.length) return null;
        prevLine = line;
        prevCommit = commitEnd[i];
        prevTool = toolEnd[i];
        prevChange = changeEnd[i];
      }
      if (prevCommit !== commitBytes || prevTool !== toolBytes || prevChange !== m) return null;
      for (let k = 0; k < m; k++) if (changePath[k] < 0 || changePath[k] >= paths.length) return null;
      // Last: the bytes it describes are the file's (the costliest check).
      if (crypto.createHash('sha1').update(file.subarray(0, covered)).digest('hex') !== header.prefix) return null;
      return new HistorySnapshot(n, covered, lineStart, commitBlob, commitEnd, toolBlob, toolEnd, sessionOf, sessions, changeEnd, changePath, changeWritten, paths, facts, seed, commitHash, toolHash);
    } catch {
      return null;
    }
  }
}

/** A string that survives UTF-8 both ways (no lone surrogates), so that its bytes identify it. */
function exact(s: string): boolean {
  if (typeof s !== 'string' || s.length === 0) return false;
  return !/[\uD800-\uDFFF]/.test(s) || Buffer.from(s, 'utf8').toString('utf8') === s;
}

function isStrings(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((s) => typeof s === 'string');
}

function bytesOf(array: ArrayBufferView): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}

/** A seeded hash (the seed is random per snapshot: keys cannot be crafted to collide without reading it). */
function hashBytes(seed: number, bytes: Buffer, start: number, end: number): number {
  let h = seed ^ (end - start);
  for (let i = start; i < end; i++) {
    h = Math.imul(h ^ bytes[i], 0x5bd1e995);
    h ^= h >>> 15;
  }
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Keys (byte ranges of a blob, key i ending at ends[i]; empty = no key) → the last position holding each,
 * in an open-addressing table over their stored hashes (checked with the snapshot's checksum; a lookup
 * compares the bytes, so a wrong hash — only a forged file has one — could hide a key, never match another).
 */
class KeyTable {
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(
    private readonly blob: Buffer,
    private readonly ends: Int32Array,
    hashes: Uint32Array,
    n: number,
    private readonly seed: number,
  ) {
    let size = 16;
    while (size < n * 2) size *= 2;
    this.mask = size - 1;
    this.slots = new Int32Array(size).fill(-1);
    for (let i = 0; i < n; i++) {
      const start = i === 0 ? 0 : ends[i - 1];
      const end = ends[i];
      if (end === start) continue;
      let j = hashes[i] & this.mask;
      for (;;) {
        const other = this.slots[j];
        if (other === -1 || (hashes[other] === hashes[i] && this.equal(other, blob, start, end))) {
          this.slots[j] = i; // a later entry with the same key wins, as with a Map
          break;
        }
        j = (j + 1) & this.mask;
      }
    }
  }

  find(key: string): number | undefined {
    if (typeof key !== 'string' || !key) return undefined;
    const bytes = Buffer.from(key, 'utf8');
    // Every stored key is well-formed; one with a lone surrogate would encode like another key.
    if (bytes.toString('utf8') !== key) return undefined;
    let j = hashBytes(this.seed, bytes, 0, bytes.length) & this.mask;
    for (;;) {
      const i = this.slots[j];
      if (i === -1) return undefined;
      if (this.equal(i, bytes, 0, bytes.length)) return i;
      j = (j + 1) & this.mask;
    }
  }

  private equal(i: number, bytes: Buffer, start: number, end: number): boolean {
    const s = i === 0 ? 0 : this.ends[i - 1];
    const e = this.ends[i];
    return e - s === end - start && this.blob.compare(bytes, start, end, s, e) === 0;
  }
}
