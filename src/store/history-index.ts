import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommitMeta, parseCommitMessage } from './commit-message';
import { diffTrees, FileChange, ObjectStore } from './objects';
import { SerialQueue } from './write-lock';

/**
 * An index of the store's history — by commit, tool_use id, session and path — so that audit pages,
 * idempotent retries and blame never walk all commits. It is a cache of git: kept in memory, persisted
 * as an append-only JSON-lines file under `.git/memgit/`, appended in the same step as each commit, and
 * brought up to date incrementally from the last indexed commit when a store opens.
 */

export interface HistoryEntry extends CommitMeta {
  commit: string;
  parent: string | null;
  /** Commit time, seconds since the epoch. */
  time: number;
  /** The tool_use id for agent calls (the title of a commit that carries a Memory-Command trailer). */
  toolUseId?: string;
  /** Files changed, as repository paths with blob oids. */
  changes: FileChange[];
}

const INDEX_VERSION = 1;
let rewriteCounter = 0;

export class HistoryIndex {
  private entries: HistoryEntry[] = [];
  private readonly byCommit = new Map<string, number>();
  private readonly byToolUse = new Map<string, number>();
  private readonly bySessionIds = new Map<string, number[]>();
  private readonly byPathIds = new Map<string, number[]>();
  readonly file: string;
  /** The persisted file had a torn or inconsistent tail: rewrite it whole rather than append after it. */
  private fileNeedsRewrite = false;
  private readonly queue = new SerialQueue();
  private fileLoaded = false;

  constructor(
    private readonly objects: ObjectStore,
    gitdir: string,
  ) {
    this.file = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}.jsonl`);
  }

  get size(): number {
    return this.entries.length;
  }

  get head(): HistoryEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  /** Load the persisted index and index any commits between it and `headCommit`. */
  open(headCommit: string, onProgress?: (done: number) => void): Promise<{ loaded: number; added: number }> {
    // Serialised with record(): concurrent catch-ups (web requests while another process writes) would
    // otherwise append the same entries twice and race on the rewrite.
    return this.queue.run(() => this.catchUp(headCommit, onProgress));
  }

  private async catchUp(headCommit: string, onProgress?: (done: number) => void): Promise<{ loaded: number; added: number }> {
    // The file is read once. Later catch-ups (another process wrote) describe just the new commits from
    // git rather than re-reading a file that grows with history, and leave appending them to the writer
    // that made them; a gap that a writer's crash left is found and healed by the next load's rewrite.
    const firstLoad = !this.fileLoaded;
    if (firstLoad) {
      for (const entry of await this.readPersisted()) this.add(entry);
      this.fileLoaded = true;
    }
    const loaded = this.entries.length;
    // Walk back from HEAD to the newest commit the index knows.
    const missing: string[] = [];
    let cursor: string | null = headCommit;
    while (cursor && !this.byCommit.has(cursor)) {
      missing.push(cursor);
      const { commit } = await this.objects.readCommit(cursor);
      cursor = commit.parent[0] ?? null;
      if (onProgress && missing.length % 1000 === 0) onProgress(missing.length);
    }
    const keep = cursor === null ? 0 : this.byCommit.get(cursor)! + 1;
    const rewrite = keep !== this.entries.length || this.fileNeedsRewrite;
    if (rewrite) this.truncate(keep); // history was rewritten under us: drop what HEAD no longer reaches
    const added: HistoryEntry[] = [];
    for (const commit of missing.reverse()) {
      const entry = await this.describe(commit);
      if (this.add(entry)) added.push(entry);
    }
    if (rewrite) {
      await this.persistAll();
      this.fileNeedsRewrite = false;
    }
    else if (added.length && firstLoad) await this.persist(added);
    return { loaded, added: added.length };
  }

  /** Forget everything, on disk too: the history was rewritten (a redaction); `open` rebuilds it from git. */
  reset(): Promise<void> {
    return this.queue.run(async () => {
      this.truncate(0);
      this.fileNeedsRewrite = false;
      await fs.promises.rm(this.file, { force: true });
      this.fileLoaded = false; // the next open rebuilds from git and writes the file anew
    });
  }

  /**
   * Record a commit that was just written. The entry is in memory before the file is touched, so a failed
   * append (a full disk) still leaves the call findable by its tool_use id; the file is then rewritten
   * whole by `heal()` or the next record, rather than appended after a possibly torn line.
   */
  record(entry: HistoryEntry): Promise<void> {
    return this.queue.run(async () => {
      if (!this.add(entry)) return;
      await this.persistPending([entry]);
    });
  }

  /** Rewrite the persisted file if an earlier append failed (no-op otherwise). */
  heal(): Promise<void> {
    return this.queue.run(() => this.persistPending([]));
  }

  get needsHealing(): boolean {
    return this.fileNeedsRewrite;
  }

  private async persistPending(added: HistoryEntry[]): Promise<void> {
    try {
      if (this.fileNeedsRewrite) await this.persistAll();
      else if (added.length) await this.persist(added);
      this.fileNeedsRewrite = false;
    } catch (error) {
      this.fileNeedsRewrite = true;
      throw error;
    }
  }

  /** Describe a commit from git: its message trailers and the files it changed. */
  async describe(commit: string): Promise<HistoryEntry> {
    const { commit: c } = await this.objects.readCommit(commit);
    const parent = c.parent[0] ?? null;
    const parentTree = parent ? (await this.objects.readCommit(parent)).commit.tree : null;
    const changes = await diffTrees(this.objects, parentTree, c.tree);
    return makeEntry(commit, parent, c.committer.timestamp, parseCommitMessage(c.message), changes);
  }

  get(commit: string): HistoryEntry | undefined {
    const i = this.byCommit.get(commit);
    return i === undefined ? undefined : this.entries[i];
  }

  byToolUseId(id: string): HistoryEntry | undefined {
    const i = this.byToolUse.get(id);
    return i === undefined ? undefined : this.entries[i];
  }

  /** Position of a commit in history (0 = oldest); a stable cursor for pagination. */
  position(commit: string): number | undefined {
    return this.byCommit.get(commit);
  }

  at(position: number): HistoryEntry | undefined {
    return this.entries[position];
  }

  all(): readonly HistoryEntry[] {
    return this.entries;
  }

  sessions(): string[] {
    return [...this.bySessionIds.keys()];
  }

  bySession(session: string): HistoryEntry[] {
    return (this.bySessionIds.get(session) ?? []).map((i) => this.entries[i]);
  }

  /** Commits that changed a file (repository path), oldest first. */
  byPath(repoPath: string): HistoryEntry[] {
    return (this.byPathIds.get(repoPath) ?? []).map((i) => this.entries[i]);
  }

  /** Every indexed file path (repository paths) that ever existed. */
  paths(): string[] {
    return [...this.byPathIds.keys()];
  }

  /** Index an entry; false if it was already there. */
  private add(entry: HistoryEntry): boolean {
    if (this.byCommit.has(entry.commit)) return false;
    const i = this.entries.length;
    this.entries.push(entry);
    this.byCommit.set(entry.commit, i);
    if (entry.toolUseId) this.byToolUse.set(entry.toolUseId, i);
    if (entry.session) pushTo(this.bySessionIds, entry.session, i);
    for (const change of entry.changes) pushTo(this.byPathIds, change.path, i);
    return true;
  }

  private truncate(keep: number): void {
    const kept = this.entries.slice(0, keep);
    this.entries = [];
    this.byCommit.clear();
    this.byToolUse.clear();
    this.bySessionIds.clear();
    this.byPathIds.clear();
    for (const entry of kept) this.add(entry);
  }

  private async readPersisted(): Promise<HistoryEntry[]> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.file, 'utf8');
    } catch {
      return [];
    }
    const entries: HistoryEntry[] = [];
    let expectedParent: string | null | undefined;
    for (const line of text.split('\n')) {
      if (!line) continue;
      let entry: HistoryEntry;
      try {
        entry = JSON.parse(line) as HistoryEntry;
      } catch {
        this.fileNeedsRewrite = true; // a line torn by a crash: everything from here is re-derived from git
        break;
      }
      // The file is a chain; a broken link means it no longer describes one history.
      if (typeof entry?.commit !== 'string' || (expectedParent !== undefined && entry.parent !== expectedParent)) {
        this.fileNeedsRewrite = true;
        break;
      }
      expectedParent = entry.commit;
      entries.push(entry);
    }
    return entries;
  }

  private async persist(added: HistoryEntry[]): Promise<void> {
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    await fs.promises.appendFile(this.file, added.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
  }

  private async persistAll(): Promise<void> {
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temp = `${this.file}.rewrite-${process.pid}-${++rewriteCounter}`;
    try {
      await fs.promises.writeFile(temp, this.entries.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
      await fs.promises.rename(temp, this.file);
    } catch (error) {
      await fs.promises.rm(temp, { force: true }).catch(() => undefined);
      throw error;
    }
  }
}

export function makeEntry(
  commit: string,
  parent: string | null,
  time: number,
  meta: CommitMeta,
  changes: FileChange[],
): HistoryEntry {
  const entry: HistoryEntry = { ...meta, commit, parent, time, changes };
  if (meta.command && !meta.actor) entry.toolUseId = meta.title;
  return entry;
}

function pushTo(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
