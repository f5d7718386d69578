import * as fs from 'node:fs';
import * as path from 'node:path';
import { advance } from './blame-step';
import type { HistoryEntry } from './entry';
import type { FileFact } from './facts';
import { utf8 } from './facts';
import { splitLines } from './line-stats';

/**
 * The persisted incremental blame: per file, the origin (commit) of each line at the file's latest
 * revision. Every write extends the records of the files it changed by its diff (rename: the record
 * moves; create: every line is the new commit's); blame at HEAD is then a lookup plus the blob's text.
 *
 * It is a cache, kept as an append-only JSON-lines file under `.git/memgit/` (last record of a path
 * wins; compacted on load when mostly superseded). Every record names the revision it was taken at and is
 * only used when that revision is in the file's chain of revisions in the history index (with the same
 * blob), so a missing, stale or foreign record costs a replay (src/history/blame.ts), never a wrong answer.
 */

export interface BlameRecord {
  /** Repository path of the file. */
  path: string;
  /** The commit of the revision this is the blame of. */
  rev: string;
  /** The file's blob at that revision. */
  oid: string;
  /** Per line, the commit that wrote it. */
  origins: string[];
}

/** What the blame records need of the history index: which commits exist, where, and which last wrote a path. */
export interface BlameHistory {
  get(commit: string): HistoryEntry | undefined;
  position(commit: string): number | undefined;
  lastChange(repoPath: string, position: number): HistoryEntry | undefined;
}

const BLAME_VERSION = 1;
const COMPACT_SLACK = 256;
let compactCounter = 0;

interface Line {
  p: string;
  r: string;
  o: string;
  /** Distinct commits, and runs of [index into c, count]. */
  c: string[];
  l: number[];
}

export class BlameIndex {
  readonly file: string;
  private readonly records = new Map<string, BlameRecord>();
  private loading: Promise<void> | null = null;
  /** Bytes of the file read so far, and its complete lines. */
  private offset = 0;
  private lines = 0;

  constructor(
    gitdir: string,
    private readonly history: BlameHistory,
  ) {
    this.file = path.join(gitdir, 'memgit', `blame-v${BLAME_VERSION}.jsonl`);
  }

  /** Forget every record, on disk too (the history was rewritten by a redaction). */
  async reset(): Promise<void> {
    await this.loading;
    this.records.clear();
    this.offset = 0;
    this.lines = 0;
    this.loading = null;
    await fs.promises.rm(this.file, { force: true });
  }

  /** The record of a file, if there is one whose commits are all in the history index. */
  async get(repoPath: string): Promise<BlameRecord | undefined> {
    await this.load();
    await this.readTail(); // another process may have extended it
    const record = this.records.get(repoPath);
    if (!record) return undefined;
    if (!this.history.get(record.rev) || commitsOf(record).some((c) => !this.history.get(c))) return undefined;
    return record;
  }

  /** Remember (and persist) the blame of a file at a revision. */
  async put(record: BlameRecord): Promise<void> {
    await this.load();
    this.accept(record);
    await this.append([record]);
  }

  /**
   * Extend the records of the files a just-recorded commit changed. A file whose record was not current
   * just before this commit is left to be replayed when someone asks for its blame.
   */
  async extend(entry: HistoryEntry, facts: FileFact[], readBlob: (oid: string) => Promise<Uint8Array>): Promise<void> {
    await this.load();
    await this.readTail();
    const position = this.history.position(entry.commit)!;
    const commit = entry.commit;
    const updated: BlameRecord[] = [];
    const currentBefore = (repoPath: string, oid: string | null): BlameRecord | undefined => {
      const record = this.records.get(repoPath);
      if (!record || !oid || record.oid !== oid) return undefined;
      return this.history.lastChange(repoPath, position - 1)?.commit === record.rev ? record : undefined;
    };
    const extended = async (before: BlameRecord, oldOid: string, newOid: string, newPath: string): Promise<BlameRecord> => {
      if (oldOid === newOid) return { path: newPath, rev: commit, oid: newOid, origins: before.origins };
      const oldLines = splitLines(utf8(await readBlob(oldOid)));
      const newLines = splitLines(utf8(await readBlob(newOid)));
      if (oldLines.length !== before.origins.length) throw new Error('blame record does not match its blob');
      return { path: newPath, rev: commit, oid: newOid, origins: advance({ lines: oldLines, origins: before.origins }, newLines, commit).origins };
    };
    for (const fact of facts) {
      const oldPath = fact.oldPath?.slice(1) ?? null;
      const newPath = fact.newPath?.slice(1) ?? null;
      const before = oldPath ? currentBefore(oldPath, fact.oldOid) : undefined;
      if (oldPath && oldPath !== newPath) this.records.delete(oldPath);
      if (!newPath || !fact.newOid) {
        if (oldPath) this.records.delete(oldPath);
        continue;
      }
      let record: BlameRecord | undefined;
      if (fact.status === 'added') {
        const count = splitLines(utf8(await readBlob(fact.newOid))).length;
        record = { path: newPath, rev: commit, oid: fact.newOid, origins: new Array<string>(count).fill(commit) };
      } else if (before) {
        record = await extended(before, fact.oldOid!, fact.newOid, newPath).catch(() => undefined);
      }
      if (record) {
        this.records.set(newPath, record);
        updated.push(record);
      } else {
        this.records.delete(newPath);
      }
    }
    await this.append(updated);
  }

  private load(): Promise<void> {
    this.loading ??= this.readAll();
    return this.loading;
  }

  private async readAll(): Promise<void> {
    this.records.clear();
    this.offset = 0;
    this.lines = 0;
    await this.readTail();
    if (this.lines > 2 * this.records.size + COMPACT_SLACK) await this.compact();
  }

  private async readTail(): Promise<void> {
    let size: number;
    try {
      size = (await fs.promises.stat(this.file)).size;
    } catch {
      return;
    }
    if (size < this.offset) {
      // Compacted by another process: read it again from the start.
      this.records.clear();
      this.offset = 0;
      this.lines = 0;
    }
    if (size === this.offset) return;
    const handle = await fs.promises.open(this.file, 'r');
    let chunk: Buffer;
    try {
      chunk = Buffer.alloc(size - this.offset);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, this.offset);
      chunk = chunk.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
    const end = chunk.lastIndexOf(0x0a);
    if (end < 0) return; // only a line still being written
    this.offset += end + 1;
    for (const text of chunk.subarray(0, end).toString('utf8').split('\n')) {
      if (!text) continue;
      this.lines++;
      const record = decode(text);
      if (record) this.accept(record);
    }
  }

  /** Keep the newer of two records of a path (appends from several processes need not be in order). */
  private accept(record: BlameRecord): void {
    const existing = this.records.get(record.path);
    if (existing) {
      const a = this.history.position(existing.rev);
      const b = this.history.position(record.rev);
      if (a !== undefined && b !== undefined && b < a) return;
    }
    this.records.set(record.path, record);
  }

  private async append(records: BlameRecord[]): Promise<void> {
    if (!records.length) return;
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true });
    const text = records.map((r) => JSON.stringify(encode(r)) + '\n').join('');
    await fs.promises.appendFile(this.file, text, { mode: 0o600 });
    // Our own lines are already in memory: skip them when reading the tail, unless others wrote meanwhile.
    const size = (await fs.promises.stat(this.file)).size;
    if (size === this.offset + Buffer.byteLength(text)) {
      this.offset = size;
      this.lines += records.length;
    }
  }

  private async compact(): Promise<void> {
    const temp = `${this.file}.compact-${process.pid}-${++compactCounter}`;
    const text = [...this.records.values()].map((r) => JSON.stringify(encode(r)) + '\n').join('');
    await fs.promises.writeFile(temp, text, { mode: 0o600 });
    await fs.promises.rename(temp, this.file);
    this.offset = Buffer.byteLength(text);
    this.lines = this.records.size;
  }
}

function encode(record: BlameRecord): Line {
  const index = new Map<string, number>();
  const commits: string[] = [];
  const runs: number[] = [];
  for (const origin of record.origins) {
    let i = index.get(origin);
    if (i === undefined) {
      i = commits.length;
      index.set(origin, i);
      commits.push(origin);
    }
    if (runs.length && runs[runs.length - 2] === i) runs[runs.length - 1]++;
    else runs.push(i, 1);
  }
  return { p: record.path, r: record.rev, o: record.oid, c: commits, l: runs };
}

/**
 * A record from its line. Its origins are expanded from the runs only when asked for: loading the file
 * decodes every line, most of them superseded by later records of the same path (a 1 MiB file of half
 * a million lines written 24 times would otherwise be 12 million strings put in arrays at every load).
 */
function decode(text: string): BlameRecord | null {
  let line: Line;
  try {
    line = JSON.parse(text) as Line;
  } catch {
    return null; // a torn or foreign line: that file's blame is replayed instead
  }
  if (typeof line !== 'object' || line === null) return null;
  if (typeof line.p !== 'string' || typeof line.r !== 'string' || typeof line.o !== 'string') return null;
  if (!Array.isArray(line.c) || !Array.isArray(line.l) || line.l.length % 2 !== 0) return null;
  if (!line.c.every((commit) => typeof commit === 'string')) return null;
  let total = 0;
  for (let k = 0; k < line.l.length; k += 2) {
    const index = line.l[k];
    const count = line.l[k + 1];
    if (!Number.isSafeInteger(index) || index < 0 || index >= line.c.length || !Number.isSafeInteger(count) || count < 1) return null;
    total += count;
    if (total > 10_000_000) return null;
  }
  let origins: string[] | undefined;
  const record = {
    path: line.p,
    rev: line.r,
    oid: line.o,
    get origins(): string[] {
      if (!origins) {
        origins = [];
        for (let k = 0; k < line.l.length; k += 2) {
          const commit = line.c[line.l[k]];
          for (let n = line.l[k + 1]; n > 0; n--) origins.push(commit);
        }
      }
      return origins;
    },
  };
  distinctCommits.set(record, line.c);
  return record;
}

/** The distinct commits of a record's origins (known from its line when decoded; counted otherwise). */
const distinctCommits = new WeakMap<BlameRecord, string[]>();

function commitsOf(record: BlameRecord): string[] {
  let commits = distinctCommits.get(record);
  if (!commits) distinctCommits.set(record, (commits = [...new Set(record.origins)]));
  return commits;
}
