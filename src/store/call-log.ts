import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The call log: every memory call the store answered — reads and failed calls too, which make no commit —
 * one JSON line each in `.git/memgit/calls-v1.jsonl`, beside the history (never as commits). Auditors use
 * it to see what the agent read before it wrote, and what it tried and failed.
 *
 * Cost: a write's line is appended (with any buffered lines, in order) before the call is acknowledged,
 * as the history index is; a write is durable anyway as its commit, and `calls()` fills in a write whose
 * line a crash lost from the history. Reads and failures are buffered and appended together a moment
 * later (or at close / process exit): no file operation, let alone an fsync, per view. A crash may lose
 * the last few buffered reads.
 *
 * Retention: the log keeps the newest `maxEntries` calls; it is compacted (rewritten whole, atomically)
 * when a store opens and finds it well over that.
 */

export const CALL_LOG_VERSION = 1;
export const DEFAULT_CALL_LOG_MAX_ENTRIES = 200_000;
const FLUSH_DELAY_MS = 50;
const MAX_BUFFERED = 1000;
/** A generous average line size: a file this many bytes per allowed entry is worth compacting. */
const COMPACT_BYTES_PER_ENTRY = 600;
const MAX_TEXT = 4096;

export interface CallEntry {
  /** The tool_use id as given (an invalid one is kept, cut short, for the audit). */
  id: string;
  session: string;
  /** Milliseconds since the epoch. */
  time: number;
  command: string | null;
  paths: string[];
  kind: 'read' | 'write' | 'failed';
  error: string | null;
  commit: string | null;
  readAt: string | null;
  /** The server key the call came with (`Memory-Key`); absent for local calls and older lines. */
  key?: string;
  /** A write held for review (docs/review.md): the review's id; absent for everything else. */
  review?: string;
}

/** The logs with possibly buffered lines, flushed by one exit handler for the whole process. */
const openLogs = new Set<CallLog>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  process.on('exit', () => {
    for (const log of openLogs) log.flushSync();
  });
}

export class CallLog {
  readonly file: string;
  private buffer: string[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    gitdir: string,
    private readonly maxEntries: number,
  ) {
    this.file = path.join(gitdir, 'memgit', `calls-v${CALL_LOG_VERSION}.jsonl`);
    if (this.enabled) {
      installExitHandler();
      openLogs.add(this);
    }
  }

  get enabled(): boolean {
    return this.maxEntries > 0;
  }

  /** Record one call: a write is appended before this resolves; reads and failures are buffered. */
  async record(entry: CallEntry): Promise<void> {
    if (!this.enabled) return;
    this.buffer.push(JSON.stringify(entry) + '\n');
    if (entry.kind === 'write' || this.buffer.length >= MAX_BUFFERED) return this.flush();
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush().catch(() => undefined), FLUSH_DELAY_MS);
      this.timer.unref();
    }
  }

  /**
   * Append everything buffered. Synchronously: a few hundred bytes into the page cache (no fsync), in
   * order by construction, and done before anything else runs, so that a write's acknowledgement does
   * not wait for the thread pool behind the working-tree work that follows it (see WriteProtocol.run).
   */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const lines = this.buffer.join('');
    this.buffer = [];
    if (!lines) return Promise.resolve();
    try {
      this.append(lines);
      return Promise.resolve();
    } catch (error) {
      // Reported to the caller; the next append is tried afresh.
      return Promise.reject(error);
    }
  }

  /** Every logged call, oldest first (this process's buffered ones included). */
  async read(): Promise<CallEntry[]> {
    if (!this.enabled) return [];
    await this.flush();
    const text = await fs.promises.readFile(this.file, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return '';
      throw error;
    });
    const entries: CallEntry[] = [];
    for (const line of text.split('\n')) {
      const entry = parseEntry(line);
      if (entry) entries.push(entry);
    }
    return entries;
  }

  /**
   * A cheap mark that changes whenever the log does (after flushing this process's buffered lines): for
   * caches of figures computed from `read()`.
   */
  async version(): Promise<string> {
    if (!this.enabled) return 'off';
    await this.flush().catch(() => undefined);
    const stat = await fs.promises.stat(this.file).catch(() => null);
    return stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : 'none';
  }

  /** Keep only the newest `maxEntries` calls when the file has grown well past them. */
  async compactIfNeeded(): Promise<number> {
    if (!this.enabled) return 0;
    const size = (await fs.promises.stat(this.file).catch(() => null))?.size ?? 0;
    if (size <= this.maxEntries * COMPACT_BYTES_PER_ENTRY) return 0;
    const entries = await this.read();
    if (entries.length <= this.maxEntries) return 0;
    const kept = entries.slice(entries.length - this.maxEntries);
    const temp = `${this.file}.tmp-${process.pid}`;
    await fs.promises.writeFile(temp, kept.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
    await fs.promises.rename(temp, this.file);
    return entries.length - kept.length;
  }

  async close(): Promise<void> {
    openLogs.delete(this);
    await this.flush();
  }

  private append(lines: string): void {
    try {
      fs.appendFileSync(this.file, lines, { mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      fs.appendFileSync(this.file, lines, { mode: 0o600 });
    }
  }

  /** At process exit: append what is still buffered, synchronously. */
  flushSync(): void {
    const lines = this.buffer.join('');
    this.buffer = [];
    if (!lines) return;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      fs.appendFileSync(this.file, lines, { mode: 0o600 });
    } catch {
      // exiting: nothing better to do than lose the buffered reads
    }
  }
}

/** The call-log entry of one answered call. */
export function callEntry(
  toolUse: { id: unknown; input: unknown },
  session: unknown,
  report: { result: { content: string; is_error?: true }; commit?: string; readAt?: string; review?: { id: string } },
  time: number = Date.now(),
  key?: string,
): CallEntry {
  const input = isRecord(toolUse.input) ? toolUse.input : {};
  const paths = ['path', 'old_path', 'new_path'].map((key) => input[key]).filter((p): p is string => typeof p === 'string');
  const failed = report.result.is_error === true;
  return {
    id: cut(typeof toolUse.id === 'string' ? toolUse.id : JSON.stringify(toolUse.id) ?? 'undefined', 256),
    session: cut(typeof session === 'string' ? session : JSON.stringify(session) ?? 'undefined', 256),
    time,
    command: typeof input.command === 'string' ? cut(input.command, 64) : null,
    paths: paths.map((p) => cut(p, 1024)),
    kind: failed ? 'failed' : report.commit ? 'write' : 'read',
    error: failed ? cut(report.result.content, MAX_TEXT) : null,
    commit: failed ? null : (report.commit ?? null),
    readAt: report.readAt ?? null,
    ...(key !== undefined ? { key } : {}),
    ...(report.review && !failed ? { review: report.review.id } : {}),
  };
}

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseEntry(line: string): CallEntry | null {
  if (!line) return null;
  try {
    const value = JSON.parse(line) as CallEntry;
    return typeof value.id === 'string' && typeof value.time === 'number' ? value : null;
  } catch {
    return null; // a torn last line (a crash mid-append)
  }
}
