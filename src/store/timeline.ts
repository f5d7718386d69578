import * as fs from 'node:fs';
import * as path from 'node:path';
import { isValidId } from '../contract/paths';
import { syncDir } from './durable-fs';
import { SerialQueue } from './write-lock';

/**
 * A session's timeline: what happened to the agent's *context* beside its memory calls — each summary the
 * Messages API's server-side compaction wrote, each context-editing clear the API reported. These are not
 * changes to the memory, so they are not commits; they are kept in an append-only JSON-lines file under
 * `.git/memgit/` (one event per line, each with a format version), written through `store.recordEvent`
 * under the store's write lock and read by the audit UI.
 *
 * Unlike the history index this file is primary data: nothing else holds it, so there is no rebuild path.
 * A torn last line (a crash mid-append) is ignored by readers and closed off before the next append, and a
 * line that does not parse or validate is skipped, never trusted. Every text in it came from the API (and
 * possibly from a prompt-injected model): it is bounded here and escaped wherever it is shown.
 *
 * Each event names the moment it happened relative to the session's memory calls — the last commit the
 * session had made (`afterCommit`) and its last memory call of any kind (`afterToolUseId`) — because
 * commit times have one-second resolution and a compaction and the write after it often share a second.
 */

export const TIMELINE_VERSION = 1;
/** Longest summary kept, in UTF-16 code units; the rest is dropped and `truncated` says so. */
export const MAX_SUMMARY_CHARS = 64 * 1024;
/** A line longer than this (bytes) cannot have been written by this module, and is skipped. */
const MAX_LINE_BYTES = 4 * MAX_SUMMARY_CHARS + 4096;
const COMMIT_ID = /^[0-9a-f]{40}$/;
const EDIT_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

/** The API replaced older context with a summary (a `compaction` block). `summary` null = the compaction failed. */
export interface CompactionEvent {
  kind: 'compaction';
  summary: string | null;
  /** Length of the whole summary, even when only the first MAX_SUMMARY_CHARS are kept. */
  summaryChars: number;
  truncated: boolean;
  /** The block carried opaque `encrypted_content` (kept in the conversation, not here). */
  encryptedContent: boolean;
}

/** A context-editing strategy the API applied (`context_management.applied_edits`). */
export interface ContextClearedEvent {
  kind: 'context_cleared';
  /** The strategy, e.g. `clear_tool_uses_20250919`. */
  edit: string;
  clearedInputTokens: number;
  clearedToolUses?: number;
  clearedThinkingTurns?: number;
}

export type TimelineEvent = CompactionEvent | ContextClearedEvent;

export interface EventAnchor {
  /** The session's last commit before the event, or null when it had made none yet. */
  afterCommit: string | null;
  /** The session's last memory call (any command, failed ones too) before the event, or null. */
  afterToolUseId: string | null;
}

/** What a caller records: the event, where it falls among the session's calls and, optionally, when it was observed. */
export type NewTimelineEvent = (
  | { kind: 'compaction'; summary: string | null; encryptedContent?: boolean }
  | ContextClearedEvent
) &
  Partial<EventAnchor> & { time?: number };

/** One stored line. */
export type TimelineRecord = TimelineEvent &
  EventAnchor & {
    v: typeof TIMELINE_VERSION;
    session: string;
    /** Milliseconds since the epoch. */
    time: number;
  };

export class Timeline {
  readonly file: string;
  private readonly fsync: boolean;
  private readonly bySession = new Map<string, TimelineRecord[]>();
  /** Bytes of the file already read; only complete lines are consumed. */
  private offset = 0;
  private skippedLines = 0;
  private readonly readQueue = new SerialQueue();

  constructor(gitdir: string, options: { fsync?: boolean } = {}) {
    this.file = path.join(gitdir, 'memgit', `timeline-v${TIMELINE_VERSION}.jsonl`);
    this.fsync = options.fsync ?? true;
  }

  /** Lines that were skipped because they did not parse or validate (a sign of tampering or a bug). */
  get skipped(): number {
    return this.skippedLines;
  }

  /**
   * Append one event. The caller must hold the store's write lock (MemoryStore.recordEvent does), so that
   * appends from several processes never interleave. Resolves once the line is durable.
   */
  async append(session: string, event: NewTimelineEvent): Promise<TimelineRecord> {
    const record = toRecord(session, event);
    const line = `${JSON.stringify(record)}\n`;
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true });
    const created = !fs.existsSync(this.file);
    const handle = await fs.promises.open(this.file, 'a+', 0o600); // owner-only, as every file of a store
    try {
      const { size } = await handle.stat();
      // A crash mid-append leaves a line without its newline: close it off so the new line stays whole.
      let prefix = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n';
      }
      await handle.write(prefix + line);
      if (this.fsync) await handle.datasync();
    } finally {
      await handle.close();
    }
    if (created && this.fsync) await syncDir(path.dirname(this.file));
    return record;
  }

  /** The session's events in the order they were recorded, including those other processes appended. */
  async forSession(session: string): Promise<TimelineRecord[]> {
    await this.readQueue.run(() => this.catchUp());
    return [...(this.bySession.get(session) ?? [])];
  }

  /** Read whatever complete lines were appended since the last read. */
  private async catchUp(): Promise<void> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(this.file, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      if (size < this.offset) {
        // The file shrank: it was replaced (restored from a backup, say). Start over.
        this.bySession.clear();
        this.offset = 0;
        this.skippedLines = 0;
      }
      if (size === this.offset) return;
      const buffer = Buffer.alloc(size - this.offset);
      await handle.read(buffer, 0, buffer.length, this.offset);
      const end = buffer.lastIndexOf(0x0a);
      if (end < 0) return; // only a torn (or still being written) line
      let start = 0;
      while (start <= end) {
        const next = buffer.indexOf(0x0a, start);
        this.ingest(buffer.subarray(start, next));
        start = next + 1;
      }
      this.offset += end + 1;
    } finally {
      await handle.close();
    }
  }

  private ingest(line: Buffer): void {
    if (line.length === 0) return; // the newline that closed off a torn line
    const record = line.length <= MAX_LINE_BYTES ? parseRecord(line.toString('utf8')) : null;
    if (!record) {
      this.skippedLines += 1;
      return;
    }
    let list = this.bySession.get(record.session);
    if (!list) this.bySession.set(record.session, (list = []));
    list.push(record);
  }
}

/** Validate and normalise what a caller records; a malformed event is a bug in the caller. */
function toRecord(session: string, event: NewTimelineEvent): TimelineRecord {
  if (!isValidId(session)) throw new TypeError(`invalid session id ${JSON.stringify(session)}`);
  const afterCommit = event.afterCommit ?? null;
  const afterToolUseId = event.afterToolUseId ?? null;
  if (afterCommit !== null && !(typeof afterCommit === 'string' && COMMIT_ID.test(afterCommit))) {
    throw new TypeError(`afterCommit must be a full commit id, got ${JSON.stringify(afterCommit)}`);
  }
  if (afterToolUseId !== null && !isValidId(afterToolUseId)) {
    throw new TypeError(`invalid afterToolUseId ${JSON.stringify(afterToolUseId)}`);
  }
  const time = event.time ?? Date.now();
  if (!Number.isSafeInteger(time) || time < 0) throw new TypeError(`invalid event time ${JSON.stringify(time)}`);
  const base = { v: TIMELINE_VERSION, session, time, afterCommit, afterToolUseId } as const;
  if (event.kind === 'compaction') {
    const whole = event.summary;
    if (whole !== null && typeof whole !== 'string') throw new TypeError('a compaction summary is a string or null');
    const summary = whole === null ? null : boundText(whole, MAX_SUMMARY_CHARS);
    return {
      ...base,
      kind: 'compaction',
      summary,
      summaryChars: whole === null ? 0 : whole.length,
      truncated: whole !== null && summary !== whole,
      encryptedContent: Boolean(event.encryptedContent),
    };
  }
  if (event.kind === 'context_cleared') {
    if (typeof event.edit !== 'string' || !EDIT_TYPE.test(event.edit)) {
      throw new TypeError(`invalid context edit type ${JSON.stringify(event.edit)}`);
    }
    const record: TimelineRecord = { ...base, kind: 'context_cleared', edit: event.edit, clearedInputTokens: count(event.clearedInputTokens) };
    if (event.clearedToolUses !== undefined) record.clearedToolUses = count(event.clearedToolUses);
    if (event.clearedThinkingTurns !== undefined) record.clearedThinkingTurns = count(event.clearedThinkingTurns);
    return record;
  }
  throw new TypeError(`unknown timeline event kind ${JSON.stringify((event as { kind?: unknown }).kind)}`);
}

function count(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`expected a count (a non-negative integer), got ${JSON.stringify(value)}`);
  }
  return value;
}

/** At most `max` code units, never splitting a surrogate pair. */
function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[max - 1]) ? max - 1 : max;
  return text.slice(0, cut);
}

/** A stored line, re-validated field by field: the file may have been edited by hand or by an attacker. */
function parseRecord(line: string): TimelineRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const raw = value as Record<string, unknown>;
  if (raw.v !== TIMELINE_VERSION || typeof raw.session !== 'string') return null;
  try {
    const record = toRecord(raw.session, raw as unknown as NewTimelineEvent);
    if (record.kind === 'compaction') {
      // Kept as written (toRecord would recount a stored, already truncated summary).
      if (typeof raw.summaryChars !== 'number' || typeof raw.truncated !== 'boolean') return null;
      record.summaryChars = count(raw.summaryChars);
      record.truncated = raw.truncated;
    }
    return record;
  } catch {
    return null;
  }
}
