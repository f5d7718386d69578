import * as fs from 'node:fs';
import * as path from 'node:path';
import { CommitMeta, parseCommitMessage } from './commit-message';
import { isMemoryFile } from './commit-diff';
import { diffTrees, FileChange, ObjectStore, ReadCommitResult } from './objects';
import { SerialQueue } from './write-lock';
import { BlameIndex } from './history/blame-index';
import { computeFacts, fileFacts, FileFact } from './history/facts';
import { Progress, terminalProgress } from './history/progress';

/**
 * An index of the store's history — by commit, tool_use id, session and path — so that audit pages,
 * idempotent retries and blame never walk all commits. It is a cache of git: kept in memory, persisted
 * as an append-only JSON-lines file under `.git/memgit/`, appended in the same step as each commit, and
 * brought up to date incrementally from the last indexed commit when a store opens.
 *
 * Each entry also carries the facts that were known when the commit was written (see history/facts.ts:
 * per file, the blobs before and after, sizes, lines added and removed, rename pairs), so list pages are
 * lookups. Entries indexed from git rather than written here (a cold open of a cloned store, or an index
 * of the previous format) get their facts lazily — on first use, or from `backfillFacts()` — and those
 * are appended to a side file so that they are computed once per store, not once per process.
 */

export interface HistoryEntry extends CommitMeta {
  commit: string;
  parent: string | null;
  /** The commit's root tree (absent in entries migrated from format 1). */
  tree?: string;
  /** Commit time, seconds since the epoch. */
  time: number;
  /** The tool_use id for agent calls (the title of a commit that carries a Memory-Command trailer). */
  toolUseId?: string;
  /** Files changed, as repository paths with blob oids. */
  changes: FileChange[];
  /** Per memory-file facts (history/facts.ts); absent until computed. */
  facts?: number[];
}

const INDEX_VERSION = 2;
const PREVIOUS_VERSIONS = [1];
const FACTS_BATCH = 256;
const BACKFILL_BLOBS = 8192;
const BACKFILL_BYTES = 64 * 1024 * 1024;
let rewriteCounter = 0;

export interface HistoryIndexOptions {
  /** Progress of a long catch-up (default: a progress line on stderr when it is a terminal). */
  progress?: (label: string) => Progress;
}

export class HistoryIndex {
  private entries: HistoryEntry[] = [];
  private readonly byCommit = new Map<string, number>();
  private readonly byToolUse = new Map<string, number>();
  private readonly bySessionIds = new Map<string, number[]>();
  private readonly byPathIds = new Map<string, number[]>();
  /** Memory files at HEAD: repository path → position of the commit that last wrote it. */
  private readonly live = new Map<string, number>();
  readonly file: string;
  readonly factsFile: string;
  readonly blame: BlameIndex;
  /** The persisted file had a torn or inconsistent tail: rewrite it whole rather than append after it. */
  private fileNeedsRewrite = false;
  private readonly queue = new SerialQueue();
  private fileLoaded = false;
  private readonly progress: (label: string) => Progress;
  private backfill: Promise<void> | null = null;

  constructor(
    private readonly objects: ObjectStore,
    private readonly gitdir: string,
    options: HistoryIndexOptions = {},
  ) {
    this.file = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}.jsonl`);
    this.factsFile = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}-facts.jsonl`);
    this.blame = new BlameIndex(gitdir, this);
    this.progress = options.progress ?? ((label) => terminalProgress(label));
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
      await this.readFactsFile();
      this.fileLoaded = true;
    }
    const loaded = this.entries.length;
    // Walk back from HEAD to the newest commit the index knows, keeping each commit read (it is described
    // from the same object below: one read per commit).
    const missing: Array<{ oid: string; commit: ReadCommitResult['commit'] }> = [];
    let cursor: string | null = headCommit;
    const walking = this.progress('reading history');
    while (cursor && !this.byCommit.has(cursor)) {
      const { commit } = await this.objects.readCommit(cursor);
      missing.push({ oid: cursor, commit });
      cursor = commit.parent[0] ?? null;
      if (missing.length % 1000 === 0) {
        onProgress?.(missing.length);
        walking.update(missing.length);
      }
    }
    walking.done();
    const keep = cursor === null ? 0 : this.byCommit.get(cursor)! + 1;
    const rewrite = keep !== this.entries.length || this.fileNeedsRewrite;
    if (rewrite) this.truncate(keep); // history was rewritten under us: drop what HEAD no longer reaches
    const added: HistoryEntry[] = [];
    missing.reverse();
    let parentTree: string | null = null;
    if (missing.length && missing[0].commit.parent[0]) {
      const parent = missing[0].commit.parent[0];
      parentTree = this.get(parent)?.tree ?? (await this.objects.readCommit(parent)).commit.tree;
    }
    const indexing = this.progress('indexing history');
    for (const [k, { oid, commit }] of missing.entries()) {
      const changes = await diffTrees(this.objects, parentTree, commit.tree);
      const entry = makeEntry(oid, commit.parent[0] ?? null, commit.committer.timestamp, parseCommitMessage(commit.message), changes, commit.tree);
      if (this.add(entry)) added.push(entry);
      parentTree = commit.tree;
      if (k % 500 === 0) indexing.update(k, missing.length);
    }
    indexing.done();
    if (rewrite) {
      await this.persistAll();
      this.fileNeedsRewrite = false;
    } else if (added.length && firstLoad) await this.persist(added);
    return { loaded, added: added.length };
  }

  /** Forget everything, on disk too: the history was rewritten (a redaction); `open` rebuilds it from git. */
  reset(): Promise<void> {
    return this.queue.run(async () => {
      this.truncate(0);
      this.fileNeedsRewrite = false;
      await fs.promises.rm(this.file, { force: true });
      await this.blame.reset();
      this.fileLoaded = false; // the next open rebuilds from git and writes the file anew
    });
  }

  /**
   * Record a commit that was just written, with its facts (computed here from the blobs, which the call
   * has just read and written, so they come from memory) and the incremental blame of its files.
   * The entry is in memory before the file is touched, so a failed append (a full disk) still leaves the
   * call findable by its tool_use id; the file is then rewritten whole by `heal()` or the next record,
   * rather than appended after a possibly torn line. Facts and blame are caches: a failure computing them
   * leaves them to be computed on demand, never loses the entry.
   */
  record(entry: HistoryEntry): Promise<void> {
    return this.queue.run(async () => {
      if (this.byCommit.has(entry.commit)) return;
      const blobs = new Map<string, Uint8Array>();
      const readBlob = async (oid: string) => {
        let bytes = blobs.get(oid);
        if (!bytes) blobs.set(oid, (bytes = await this.objects.readBlob(oid)));
        return bytes;
      };
      if (entry.facts === undefined) entry.facts = await computeFacts(entry, readBlob).catch(() => undefined);
      if (!this.add(entry)) return;
      try {
        await this.persistPending([entry]);
      } finally {
        // The blame records are a cache: a failure there leaves a file to be replayed, never fails the call.
        await this.blame.extend(entry, fileFacts(entry) ?? [], readBlob).catch(() => undefined);
      }
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
    const parentTree = parent ? this.get(parent)?.tree ?? (await this.objects.readCommit(parent)).commit.tree : null;
    const changes = await diffTrees(this.objects, parentTree, c.tree);
    return makeEntry(commit, parent, c.committer.timestamp, parseCommitMessage(c.message), changes, c.tree);
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

  /** Commits after `position` that changed a file (repository path), oldest first: a binary search of its list. */
  byPathAfter(repoPath: string, position: number): HistoryEntry[] {
    const list = this.byPathIds.get(repoPath);
    if (!list) return [];
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] <= position) lo = mid + 1;
      else hi = mid;
    }
    const entries: HistoryEntry[] = [];
    for (let k = lo; k < list.length; k++) entries.push(this.entries[list[k]]);
    return entries;
  }

  /** Every indexed file path (repository paths) that ever existed. */
  paths(): string[] {
    return [...this.byPathIds.keys()];
  }

  /** The newest commit at or before `position` that changed this path: a binary search of its list. */
  lastChange(repoPath: string, position: number): HistoryEntry | undefined {
    const list = this.byPathIds.get(repoPath);
    if (!list) return undefined;
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (list[mid] <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? this.entries[list[lo - 1]] : undefined;
  }

  /** The memory files at HEAD (repository paths) with their blob and the entry that last wrote each. */
  liveFiles(): Array<{ path: string; oid: string; entry: HistoryEntry }> {
    const files: Array<{ path: string; oid: string; entry: HistoryEntry }> = [];
    for (const [repoPath, position] of this.live) {
      const entry = this.entries[position];
      const oid = entry.changes.find((c) => c.path === repoPath)?.newOid;
      if (oid) files.push({ path: repoPath, oid, entry });
    }
    return files;
  }

  /**
   * The size in bytes of the blob a commit wrote at `repoPath`, from its facts (computed first if this
   * entry has none yet).
   */
  async sizeWritten(entry: HistoryEntry, repoPath: string): Promise<number | null> {
    const facts = await this.factsOf(entry);
    const fact = facts.find((f) => f.newPath === `/${repoPath}`);
    return fact ? fact.newSize : null;
  }

  /** An entry's file facts, computed from git (and remembered) when it was indexed without them. */
  async factsOf(entry: HistoryEntry): Promise<FileFact[]> {
    const known = fileFacts(entry);
    if (known) return known;
    entry.facts = await computeFacts(entry, (oid) => this.objects.readBlob(oid));
    await this.appendFacts([entry]);
    return fileFacts(entry)!;
  }

  /** How many entries still lack facts. */
  missingFacts(): number {
    let n = 0;
    for (const e of this.entries) if (!e.facts) n++;
    return n;
  }

  /**
   * Compute the facts of every entry that lacks them (after a cold open), oldest first, in batches that
   * yield to other work; one pass per process at a time. Returns when all are done.
   */
  backfillFacts(onProgress?: (done: number, total: number) => void): Promise<void> {
    this.backfill ??= (async () => {
      const todo = this.entries.filter((e) => !fileFacts(e));
      // Oldest first: the blob a commit wrote is the "before" of the next change of that file, so keep
      // recent blobs for the pass and read each one about once.
      const recent = new Map<string, Uint8Array>();
      let recentBytes = 0;
      const readBlob = async (oid: string): Promise<Uint8Array> => {
        const known = recent.get(oid);
        if (known) return known;
        const bytes = await this.objects.readBlob(oid);
        recent.set(oid, bytes);
        recentBytes += bytes.byteLength;
        while (recent.size > BACKFILL_BLOBS || recentBytes > BACKFILL_BYTES) {
          const [first, dropped] = recent.entries().next().value!;
          recent.delete(first);
          recentBytes -= dropped.byteLength;
        }
        return bytes;
      };
      let lastYield = Date.now();
      for (let k = 0; k < todo.length; k += FACTS_BATCH) {
        const batch = todo.slice(k, k + FACTS_BATCH).filter((e) => !fileFacts(e));
        for (const entry of batch) {
          entry.facts = await computeFacts(entry, readBlob);
          if (Date.now() - lastYield > 20) {
            await new Promise((resolve) => setImmediate(resolve)); // a server keeps answering meanwhile
            lastYield = Date.now();
          }
        }
        await this.appendFacts(batch);
        onProgress?.(Math.min(k + FACTS_BATCH, todo.length), todo.length);
      }
      // Every entry has its facts now: write them into the index itself, so that an open reads one file.
      if (todo.length) await this.queue.run(() => this.foldFacts());
    })().finally(() => {
      this.backfill = null;
    });
    return this.backfill;
  }

  private async foldFacts(): Promise<void> {
    if (this.entries.some((e) => !e.facts)) return;
    await this.persistAll();
    await fs.promises.rm(this.factsFile, { force: true });
  }

  /** Index an entry; false if it was already there. */
  private add(entry: HistoryEntry): boolean {
    if (this.byCommit.has(entry.commit)) return false;
    const i = this.entries.length;
    this.entries.push(entry);
    this.byCommit.set(entry.commit, i);
    if (entry.toolUseId) this.byToolUse.set(entry.toolUseId, i);
    if (entry.session) pushTo(this.bySessionIds, entry.session, i);
    for (const change of entry.changes) {
      pushTo(this.byPathIds, change.path, i);
      if (!isMemoryFile(change.path)) continue;
      if (change.newOid) this.live.set(change.path, i);
      else this.live.delete(change.path);
    }
    return true;
  }

  private truncate(keep: number): void {
    const kept = this.entries.slice(0, keep);
    this.entries = [];
    this.byCommit.clear();
    this.byToolUse.clear();
    this.bySessionIds.clear();
    this.byPathIds.clear();
    this.live.clear();
    for (const entry of kept) this.add(entry);
  }

  private async readPersisted(): Promise<HistoryEntry[]> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.file, 'utf8');
    } catch {
      text = await this.readPreviousVersion();
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

  /**
   * An index in an earlier format: its entries (commit, trailers, changed blobs) are still right, only the
   * facts are missing; they are filled in lazily. It is rewritten in this format and the old file removed.
   */
  private async readPreviousVersion(): Promise<string> {
    for (const version of PREVIOUS_VERSIONS) {
      const old = path.join(path.dirname(this.file), `history-v${version}.jsonl`);
      try {
        const text = await fs.promises.readFile(old, 'utf8');
        this.fileNeedsRewrite = true;
        this.afterRewrite = () => fs.promises.rm(old, { force: true });
        return text;
      } catch {
        // not there: try the next
      }
    }
    return '';
  }

  private afterRewrite: (() => Promise<void>) | null = null;

  /** Facts computed after the fact (lazily or by backfill), by commit; lines for unknown commits are ignored. */
  private async readFactsFile(): Promise<void> {
    let text: string;
    try {
      text = await fs.promises.readFile(this.factsFile, 'utf8');
    } catch {
      return;
    }
    for (const line of text.split('\n')) {
      if (!line) continue;
      try {
        const { c, f } = JSON.parse(line) as { c: string; f: number[] };
        const entry = this.get(c);
        // fileFacts() checks the shape when the facts are used, and ignores facts that do not fit.
        if (entry && !entry.facts && Array.isArray(f) && f.every((n) => Number.isSafeInteger(n))) entry.facts = f;
      } catch {
        // a torn line: those facts are computed again when needed
      }
    }
  }

  private async appendFacts(entries: HistoryEntry[]): Promise<void> {
    if (!entries.length) return;
    // Not recursive: a background pass must not recreate a store that was removed meanwhile.
    await fs.promises.mkdir(path.dirname(this.factsFile)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    await fs.promises.appendFile(this.factsFile, entries.map((e) => JSON.stringify({ c: e.commit, f: e.facts }) + '\n').join(''));
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
    if (this.afterRewrite) {
      await this.afterRewrite();
      this.afterRewrite = null;
    }
  }
}

export function makeEntry(
  commit: string,
  parent: string | null,
  time: number,
  meta: CommitMeta,
  changes: FileChange[],
  tree?: string,
): HistoryEntry {
  const entry: HistoryEntry = { ...meta, commit, parent, time, changes };
  if (tree) entry.tree = tree;
  if (meta.command && !meta.actor) entry.toolUseId = meta.title;
  return entry;
}

function pushTo(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
