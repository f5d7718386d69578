import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCommitMessage } from '../commit-message';
import { isMemoryFile } from './file-diffs';
import type { LeanCommit } from '../lean-commit';
import { diffTrees, FileChange, ObjectStore, ReadCommitResult } from '../objects';
import { ConsecutiveTrees, diffTreesRaw } from '../raw-tree-diff';
import { SerialQueue } from '../write-lock';
import { BlameIndex } from './blame-index';
import { HistoryEntry, makeEntry } from './entry';
import { computeFacts, fileFacts, FileFact } from './facts';
import { Progress, terminalProgress } from './progress';
import { HistorySnapshot, SnapshotRow } from './snapshot';

export { makeEntry } from './entry';
export type { HistoryEntry } from './entry';

/**
 * An index of the store's history — by commit, tool_use id, session and path — so that audit pages,
 * idempotent retries and blame never walk all commits. It is a cache of git: kept in memory, persisted
 * as an append-only JSON-lines file under `.git/memgit/`, appended in the same step as each commit, and
 * brought up to date incrementally from the last indexed commit when a store opens.
 *
 * Each entry also carries the facts that were known when the commit was written (see facts.ts:
 * per file, the blobs before and after, sizes, lines added and removed, rename pairs), so list pages are
 * lookups. Entries indexed from git rather than written here (a cold open of a cloned store, or an index
 * of the previous format) get their facts lazily — on first use, or from `backfillFacts()` — and those
 * are appended to a side file so that they are computed once per store, not once per process.
 *
 * A large index also keeps a snapshot of its lookup structures next to the file (snapshot.ts): a
 * cache of the JSON lines, checked against their bytes, from which an open builds its maps without parsing
 * every line; an entry's line is then parsed when the entry is first asked for, and kept.
 */


const INDEX_VERSION = 2;
const PREVIOUS_VERSIONS = [1];
const FACTS_BATCH = 256;
/** Entries the file must hold before a snapshot is written, and lines past it before it is written again. */
const SNAPSHOT_MIN_ENTRIES = 2000;
const SNAPSHOT_STALE_LINES = 1000;
const BACKFILL_BLOBS = 8192;
const BACKFILL_BYTES = 64 * 1024 * 1024;
/** all() reads the lines it parses in runs of about this many bytes. */
const ALL_READ_BYTES = 1024 * 1024;
/** How a line of the history file names the calls its commit undid. */
const REVERTS_KEY = Buffer.from('"reverts":');
let rewriteCounter = 0;

export interface HistoryIndexOptions {
  /** Progress of a long catch-up (default: a progress line on stderr when it is a terminal). */
  progress?: (label: string) => Progress;
  /** Write a snapshot once the file holds this many entries (default 2000; tests lower it). */
  snapshotMinEntries?: number;
  /** Write it again once this many lines follow the part it describes (default 1000). */
  snapshotStaleLines?: number;
}

export class HistoryIndex {
  /** Entries by position; with a snapshot, those not asked for yet are holes (parsed from `baseLines` on demand). */
  private entries: Array<HistoryEntry | undefined> = [];
  /** The snapshot the first `base.n` positions were loaded from, and the JSON-lines bytes it describes. */
  private base: HistorySnapshot | null = null;
  /**
   * The JSON-lines file the snapshot describes, open, read line by line at the snapshot's positions: not held
   * in memory (49 MB at 100,000 commits, most of it never asked for by a running server). The descriptor
   * keeps the very file that was loaded even if it is replaced (a rewrite renames a new file into place).
   */
  private baseLines: LineFile | null = null;
  /** Every line of the snapshot's part is parsed (all() was called since it was taken). */
  private baseParsed = false;
  /** Positions not in the snapshot (commit and tool_use lookups of the snapshot's own are its hash tables). */
  private readonly byCommit = new Map<string, number>();
  private readonly byToolUse = new Map<string, number>();
  private readonly bySessionIds = new Map<string, number[]>();
  private readonly byPathIds = new Map<string, number[]>();
  /** Memory files at HEAD: repository path → position of the commit that last wrote it. */
  private readonly live = new Map<string, number>();
  readonly file: string;
  readonly factsFile: string;
  readonly snapshotFile: string;
  readonly blame: BlameIndex;
  /** The persisted file had a torn or inconsistent tail: rewrite it whole rather than append after it. */
  private fileNeedsRewrite = false;
  private readonly queue = new SerialQueue();
  private fileLoaded = false;
  private readonly progress: (label: string) => Progress;
  private backfill: Promise<void> | null = null;
  private readonly snapshotMinEntries: number;
  private readonly snapshotStaleLines: number;

  constructor(
    private readonly objects: ObjectStore,
    private readonly gitdir: string,
    options: HistoryIndexOptions = {},
  ) {
    this.file = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}.jsonl`);
    this.factsFile = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}-facts.jsonl`);
    this.snapshotFile = path.join(gitdir, 'memgit', `history-v${INDEX_VERSION}.snapshot`);
    this.snapshotMinEntries = options.snapshotMinEntries ?? SNAPSHOT_MIN_ENTRIES;
    this.snapshotStaleLines = options.snapshotStaleLines ?? SNAPSHOT_STALE_LINES;
    this.blame = new BlameIndex(gitdir, this);
    this.progress = options.progress ?? ((label) => terminalProgress(label));
  }

  get size(): number {
    return this.entries.length;
  }

  /** How many entries the last load took from the snapshot rather than by parsing their lines (diagnostics). */
  get snapshotEntries(): number {
    return this.base?.n ?? 0;
  }

  get head(): HistoryEntry | undefined {
    return this.at(this.entries.length - 1);
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
      await this.load();
      await this.readFactsFile();
      this.fileLoaded = true;
    }
    const loaded = this.entries.length;
    // Walk back from HEAD to the newest commit the index knows, keeping each commit read (it is described
    // from the same object below: one read per commit).
    const missing: Array<{ oid: string; commit: LeanCommit }> = [];
    let cursor: string | null = headCommit;
    const walking = this.progress('reading history');
    while (cursor && this.position(cursor) === undefined) {
      const commit = await this.objects.readLeanCommit(cursor);
      missing.push({ oid: cursor, commit });
      cursor = commit.parent[0] ?? null;
      if (missing.length % 1000 === 0) {
        onProgress?.(missing.length);
        walking.update(missing.length);
      }
    }
    walking.done();
    const keep = cursor === null ? 0 : this.position(cursor)! + 1;
    const rewrite = keep !== this.entries.length || this.fileNeedsRewrite;
    if (rewrite) this.truncate(keep); // history was rewritten under us: drop what HEAD no longer reaches
    const added: HistoryEntry[] = [];
    missing.reverse();
    let parentTree: string | null = null;
    if (missing.length && missing[0].commit.parent[0]) {
      const parent = missing[0].commit.parent[0];
      parentTree = this.get(parent)?.tree ?? (await this.objects.readLeanCommit(parent)).tree;
    }
    const indexing = this.progress('indexing history');
    const trees = new ConsecutiveTrees(this.objects); // each commit's diff starts where its parent's ended
    for (const [k, { oid, commit }] of missing.entries()) {
      const changes = await diffTreesRaw(this.objects, parentTree, commit.tree, '', trees);
      trees.next();
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
      await fs.promises.rm(this.snapshotFile, { force: true });
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
      if (this.position(entry.commit) !== undefined) return;
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
    const i = this.position(commit);
    return i === undefined ? undefined : this.at(i);
  }

  byToolUseId(id: string): HistoryEntry | undefined {
    // Newer positions (not in the snapshot) first: the newest entry with an id wins, as in one map.
    const i = this.byToolUse.get(id) ?? this.base?.toolUsePosition(id);
    if (i === undefined) return undefined;
    const entry = this.at(i)!;
    if (entry.toolUseId !== id) this.inconsistent(i);
    return entry;
  }

  /** Position of a commit in history (0 = oldest); a stable cursor for pagination. */
  position(commit: string): number | undefined {
    return this.byCommit.get(commit) ?? this.base?.commitPosition(commit);
  }

  at(position: number): HistoryEntry | undefined {
    const entry = this.entries[position];
    return entry !== undefined || !this.base ? entry : this.materialise(position);
  }

  all(): readonly HistoryEntry[] {
    if (this.base && !this.baseParsed) {
      // The lines not parsed yet, a run of them per read (up to ALL_READ_BYTES), not one read per line nor
      // one of the whole part the snapshot describes (49 MB at 100,000 commits, beside the entries parsed).
      let i = 0;
      while (i < this.base.n) {
        if (this.entries[i] !== undefined) {
          i++;
          continue;
        }
        const run = this.unparsedRun(i);
        for (let k = i; k < run.end; k++) this.materialise(k, run.bytes, run.start);
        i = run.end;
      }
      this.baseParsed = true;
      this.closeLines(); // every line is parsed: the file is not needed any more
    }
    return this.entries as HistoryEntry[];
  }

  /**
   * Each commit from `from` on that names calls it undid (its Memory-Reverts trailer), oldest first. For
   * the revert index (src/history/reverts.ts), which reads the whole history once: parsing every entry for
   * this one field kept all of them resident (about 60 MB at 100,000 commits, on the audit UI's first
   * page). Lines of the snapshot not parsed yet are read in runs and only those that hold the key are
   * parsed; entries parsed already are read as they are.
   */
  revertsFrom(from: number): Array<{ commit: string; reverts: string[] }> {
    const found: Array<{ commit: string; reverts: string[] }> = [];
    const note = (entry: HistoryEntry | undefined) => {
      if (entry?.reverts && entry.reverts.length > 0) found.push({ commit: entry.commit, reverts: entry.reverts });
    };
    const base = this.base && !this.baseParsed ? this.base : null;
    let i = Math.max(0, from);
    while (i < this.size) {
      if (!base || i >= base.n || this.entries[i] !== undefined) {
        note(this.at(i));
        i++;
        continue;
      }
      const { start, end: j, bytes } = this.unparsedRun(i);
      const lineEnd = (k: number) => (k + 1 < base.n ? base.lineAt(k + 1) : base.covered) - start;
      // Every line of the run that holds the key (JSON.stringify writes it so; inside a string its quotes
      // would be escaped), in order: one search per hit, not per line.
      let k = i;
      for (let hit = bytes.indexOf(REVERTS_KEY); hit !== -1 && k < j; ) {
        while (k < j && lineEnd(k) <= hit) k++;
        if (k >= j) break;
        note(this.materialise(k, bytes, start));
        hit = bytes.indexOf(REVERTS_KEY, lineEnd(k));
        k++;
      }
      i = j;
    }
    return found;
  }

  /**
   * The snapshot's lines from position `from` (not parsed yet) up to the next parsed one or about
   * ALL_READ_BYTES, in one read: `bytes` starts at byte `start` of the file and holds the lines of
   * positions `from` to `end - 1`.
   */
  private unparsedRun(from: number): { start: number; end: number; bytes: Buffer } {
    const base = this.base!;
    const start = base.lineAt(from);
    let end = from + 1;
    while (end < base.n && this.entries[end] === undefined && base.lineAt(end) - start < ALL_READ_BYTES) end++;
    return { start, end, bytes: this.linesFile().readRange(start, end < base.n ? base.lineAt(end) : base.covered) };
  }

  /** Let go of the history file held open for the snapshot's lines (the store closes). */
  close(): void {
    this.closeLines();
  }

  private closeLines(): void {
    this.baseLines?.close();
    this.baseLines = null;
  }

  /** The open lines file; once closed (after close()), the file at its path, read anew (checked against the snapshot as ever). */
  private linesFile(): LineFile {
    return this.baseLines ?? LineFile.once(this.file);
  }

  sessions(): string[] {
    return [...this.bySessionIds.keys()];
  }

  /** The first commit of a session (it tells who began the session), if it made one. */
  firstOfSession(session: string): HistoryEntry | undefined {
    const ids = this.bySessionIds.get(session);
    return ids && ids.length > 0 ? this.at(ids[0]) : undefined;
  }

  bySession(session: string): HistoryEntry[] {
    return (this.bySessionIds.get(session) ?? []).map((i) => this.at(i)!);
  }

  /** Commits that changed a file (repository path), oldest first. */
  byPath(repoPath: string): HistoryEntry[] {
    return (this.byPathIds.get(repoPath) ?? []).map((i) => this.at(i)!);
  }

  /** Commits after `position` that changed a file (repository path), oldest first: a binary search of its list. */
  byPathAfter(repoPath: string, position: number): HistoryEntry[] {
    const list = this.byPathIds.get(repoPath);
    if (!list) return [];
    const entries: HistoryEntry[] = [];
    for (let k = countAtOrBefore(list, position); k < list.length; k++) entries.push(this.at(list[k])!);
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
    const count = countAtOrBefore(list, position);
    return count > 0 ? this.at(list[count - 1]) : undefined;
  }

  /** The memory files at HEAD (repository paths) with their blob and the entry that last wrote each. */
  liveFiles(): Array<{ path: string; oid: string; entry: HistoryEntry }> {
    const files: Array<{ path: string; oid: string; entry: HistoryEntry }> = [];
    for (const [repoPath, position] of this.live) {
      const entry = this.at(position)!;
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
    // Remembered for the next process; a store this process may not write (a reader's copy) still answers.
    await this.appendFacts([entry]).catch(() => undefined);
    return fileFacts(entry)!;
  }

  /** How many entries still lack facts. */
  missingFacts(): number {
    let n = 0;
    for (let i = 0; i < this.entries.length; i++) {
      const e = this.entries[i];
      if (e === undefined ? !this.base!.facts[i] : !e.facts) n++;
    }
    return n;
  }

  /**
   * Compute the facts of every entry that lacks them (after a cold open), oldest first, in batches that
   * yield to other work; one pass per process at a time. Returns when all are done.
   */
  backfillFacts(onProgress?: (done: number, total: number) => void): Promise<void> {
    this.backfill ??= (async () => {
      const todo = this.all().filter((e) => !fileFacts(e));
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
    if (this.missingFacts() > 0) return;
    await this.persistAll();
    await fs.promises.rm(this.factsFile, { force: true });
  }

  /** Index an entry; false if it was already there. */
  private add(entry: HistoryEntry): boolean {
    if (this.position(entry.commit) !== undefined) return false;
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
    const kept: HistoryEntry[] = [];
    for (let i = 0; i < keep && i < this.entries.length; i++) kept.push(this.at(i)!);
    this.base = null;
    this.closeLines();
    this.entries = [];
    this.byCommit.clear();
    this.byToolUse.clear();
    this.bySessionIds.clear();
    this.byPathIds.clear();
    this.live.clear();
    for (const entry of kept) this.add(entry);
  }

  /**
   * Load the persisted file: through its snapshot when one describes it (then only the lines after it are
   * parsed), otherwise line by line — and then write a snapshot for the next open when it is large.
   */
  private async load(): Promise<void> {
    let file: Buffer;
    let lines: LineFile;
    try {
      lines = LineFile.open(this.file);
      file = lines.readAll();
    } catch {
      for (const entry of this.parseLines(await this.readPreviousVersion(), 0, undefined).entries) this.add(entry);
      return;
    }
    const data = await fs.promises.readFile(this.snapshotFile).catch(() => null);
    const snapshot = data && HistorySnapshot.parse(data, file);
    const used = snapshot !== null && this.entries.length === 0;
    if (used) this.useSnapshot(snapshot, lines);
    else lines.close();
    const tail = this.parseLines(file, used ? snapshot.covered : 0, used && snapshot.n ? snapshot.commitAt(snapshot.n - 1) : undefined);
    const rows: SnapshotRow[] = [];
    let complete = !this.fileNeedsRewrite;
    for (let k = 0; k < tail.entries.length; k++) {
      const entry = tail.entries[k];
      if (!this.add(entry)) complete = false; // a commit twice: the rows would not match positions
      if (!complete) continue;
      const row = snapshotRow(entry, tail.starts[k]);
      if (row) rows.push(row);
      else complete = false;
    }
    if (tail.covered !== file.length) complete = false; // an unterminated last line is not described
    const stale = used ? tail.entries.length >= this.snapshotStaleLines : this.entries.length >= this.snapshotMinEntries;
    if (!complete || !stale) {
      // One that does not describe the file is not left behind (it may hold what a redaction erased).
      if (data && !used) await fs.promises.rm(this.snapshotFile, { force: true }).catch(() => undefined);
      return;
    }
    const all = used ? Array.from({ length: snapshot.n }, (_, i) => this.baseRow(snapshot, i)).concat(rows) : rows;
    await this.writeSnapshot(all, file, tail.covered);
  }

  /**
   * Parse JSON lines from byte `from` on, checking that they form a chain from `expectedParent`; stop at a
   * torn or inconsistent line (the file is then rewritten). `covered`: the end of the last whole line taken.
   */
  private parseLines(file: Buffer, from: number, expectedParent: string | null | undefined): { entries: HistoryEntry[]; starts: number[]; covered: number } {
    const entries: HistoryEntry[] = [];
    const starts: number[] = [];
    let covered = from;
    let pos = from;
    while (pos < file.length) {
      let end = file.indexOf(10, pos);
      const whole = end >= 0;
      if (!whole) end = file.length;
      if (end > pos) {
        let entry: HistoryEntry;
        try {
          entry = JSON.parse(file.toString('utf8', pos, end)) as HistoryEntry;
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
        starts.push(pos);
      }
      pos = end + 1;
      if (whole) covered = pos;
    }
    return { entries, starts, covered: Math.min(covered, file.length) };
  }

  /** Take the snapshot's positions: the maps by session and path are built here, entries stay unparsed. */
  private useSnapshot(snapshot: HistorySnapshot, lines: LineFile): void {
    this.base = snapshot;
    this.closeLines();
    this.baseLines = lines;
    this.baseParsed = false;
    this.entries = new Array<HistoryEntry | undefined>(snapshot.n);
    const { n, sessionOf, sessions, changeEnd, changePath, changeWritten, paths } = snapshot;
    const bySession: number[][] = sessions.map(() => []);
    for (let i = 0; i < n; i++) if (sessionOf[i] >= 0) bySession[sessionOf[i]].push(i);
    // Table order is first appearance, so the maps keep the order adding the entries one by one gives.
    for (let s = 0; s < sessions.length; s++) if (bySession[s].length) this.bySessionIds.set(sessions[s], bySession[s]);
    const memory = paths.map((p) => isMemoryFile(p));
    const byPath: number[][] = paths.map(() => []);
    let k = 0;
    for (let i = 0; i < n; i++) {
      for (; k < changeEnd[i]; k++) {
        const p = changePath[k];
        byPath[p].push(i);
        if (!memory[p]) continue;
        if (changeWritten[k]) this.live.set(paths[p], i);
        else this.live.delete(paths[p]);
      }
    }
    for (let p = 0; p < paths.length; p++) if (byPath[p].length) this.byPathIds.set(paths[p], byPath[p]);
  }

  /** Parse a snapshot position's line (once: the entry object is kept, facts may be set on it later). */
  private materialise(position: number, whole?: Buffer, wholeStart = 0): HistoryEntry | undefined {
    const base = this.base!;
    if (!Number.isInteger(position) || position < 0 || position >= base.n) return undefined;
    const start = base.lineAt(position);
    // A line ends before the next one starts (the last before the end of what the snapshot describes).
    const next = position + 1 < base.n ? base.lineAt(position + 1) : base.covered;
    let entry: HistoryEntry | undefined;
    try {
      const bytes = whole ? whole.subarray(start - wholeStart, next - wholeStart) : this.linesFile().readRange(start, next);
      const end = bytes.indexOf(10);
      entry = JSON.parse(bytes.toString('utf8', 0, end < 0 ? bytes.length : end)) as HistoryEntry;
    } catch {
      entry = undefined;
    }
    if (typeof entry?.commit !== 'string' || entry.commit !== base.commitAt(position)) this.inconsistent(position);
    this.entries[position] = this.share(entry!, position);
    return entry;
  }

  /**
   * Let a parsed entry use strings the index already holds where its own are equal to them, so that its
   * copies can be collected: every string of a parsed line is a new one, and once a page has asked for all
   * entries (summary, calls, points) they stay resident (about 780 bytes an entry at 10,000 commits). The
   * parent is the previous entry's commit, the tool_use id the title, a changed file's old blob the new blob
   * of that file's previous change, paths and sessions the snapshot's tables (held for its lookups anyway),
   * and the commit's command, path and facts-free fields a small table of their own. Values stay equal:
   * only which copy of a string the entry points to changes.
   */
  private share(entry: HistoryEntry, position: number): HistoryEntry {
    const base = this.base!;
    if (typeof entry.parent === 'string' && position > 0) {
      const previous = this.entries[position - 1];
      if (previous?.commit === entry.parent) entry.parent = previous.commit;
    }
    if (typeof entry.toolUseId === 'string' && entry.toolUseId === entry.title) entry.toolUseId = entry.title;
    const session = base.sessionOf[position];
    if (session >= 0 && entry.session === base.sessions[session]) entry.session = base.sessions[session];
    if (typeof entry.command === 'string') entry.command = this.common(entry.command);
    if (typeof entry.path === 'string') entry.path = this.common(entry.path);
    if (Array.isArray(entry.changes)) {
      const first = position === 0 ? 0 : base.changeEnd[position - 1];
      for (let k = 0; k < entry.changes.length; k++) {
        const change = entry.changes[k];
        if (typeof change !== 'object' || change === null) continue;
        const known = first + k < base.changeEnd[position] ? base.paths[base.changePath[first + k]] : undefined;
        if (known !== undefined && change.path === known) change.path = known;
        if (typeof change.oldOid === 'string') {
          const before = this.previousChange(change.path, position);
          if (before?.newOid === change.oldOid) change.oldOid = before.newOid;
        }
      }
    }
    return entry;
  }

  /** Strings of few distinct values (commands, the paths calls name), one copy each. */
  private readonly commonStrings = new Map<string, string>();

  private common(value: string): string {
    const known = this.commonStrings.get(value);
    if (known !== undefined) return known;
    if (this.commonStrings.size < 100_000) this.commonStrings.set(value, value);
    return value;
  }

  /** The change of `repoPath` in the newest entry before `position` that changed it, if that entry is parsed. */
  private previousChange(repoPath: string, position: number): FileChange | undefined {
    const list = this.byPathIds.get(repoPath);
    if (!list) return undefined;
    const count = countAtOrBefore(list, position - 1);
    if (count === 0) return undefined;
    return this.entries[list[count - 1]]?.changes?.find?.((c) => c?.path === repoPath);
  }

  /**
   * A snapshot that passed its checks but does not describe its lines (only a forged one can): fail loudly
   * and drop it, so that the next open loads the JSON lines.
   */
  private inconsistent(position: number): never {
    fs.rmSync(this.snapshotFile, { force: true });
    throw new Error(`the history snapshot ${this.snapshotFile} does not match ${this.file} at entry ${position}; it was removed, reopen the store`);
  }

  private baseRow(snapshot: HistorySnapshot, i: number): SnapshotRow {
    const paths: string[] = [];
    const written: boolean[] = [];
    for (let k = i === 0 ? 0 : snapshot.changeEnd[i - 1]; k < snapshot.changeEnd[i]; k++) {
      paths.push(snapshot.paths[snapshot.changePath[k]]);
      written.push(snapshot.changeWritten[k] === 1);
    }
    const session = snapshot.sessionOf[i];
    return {
      commit: snapshot.commitAt(i),
      toolUseId: snapshot.toolAt(i),
      session: session < 0 ? undefined : snapshot.sessions[session],
      paths,
      written,
      facts: snapshot.facts[i] === 1,
      start: snapshot.lineAt(i),
    };
  }

  /** Write the snapshot (a cache: a failure leaves the next open to parse the lines). */
  private async writeSnapshot(rows: SnapshotRow[], file: Buffer, covered: number): Promise<void> {
    const data = HistorySnapshot.build(rows, file, covered);
    if (!data) {
      await fs.promises.rm(this.snapshotFile, { force: true }).catch(() => undefined);
      return;
    }
    const temp = `${this.snapshotFile}.rewrite-${process.pid}-${++rewriteCounter}`;
    try {
      await fs.promises.writeFile(temp, data, { mode: 0o600 });
      await fs.promises.rename(temp, this.snapshotFile);
    } catch {
      await fs.promises.rm(temp, { force: true }).catch(() => undefined);
    }
  }

  /**
   * An index in an earlier format: its entries (commit, trailers, changed blobs) are still right, only the
   * facts are missing; they are filled in lazily. It is rewritten in this format and the old file removed.
   */
  private async readPreviousVersion(): Promise<Buffer> {
    for (const version of PREVIOUS_VERSIONS) {
      const old = path.join(path.dirname(this.file), `history-v${version}.jsonl`);
      try {
        const text = await fs.promises.readFile(old);
        this.fileNeedsRewrite = true;
        this.afterRewrite = () => fs.promises.rm(old, { force: true });
        return text;
      } catch {
        // not there: try the next
      }
    }
    return Buffer.alloc(0);
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
      await fs.promises.writeFile(temp, this.all().map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
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


/** What a snapshot records of an entry parsed from a line; null when it cannot be recorded exactly. */
function snapshotRow(entry: HistoryEntry, start: number): SnapshotRow | null {
  try {
    // As add() reads them: a falsy id or session is not indexed.
    const toolUseId = entry.toolUseId || undefined;
    const session = entry.session || undefined;
    if ((toolUseId !== undefined && typeof toolUseId !== 'string') || (session !== undefined && typeof session !== 'string')) return null;
    if (!Array.isArray(entry.changes)) return null;
    const paths: string[] = [];
    const written: boolean[] = [];
    for (const change of entry.changes) {
      if (typeof change !== 'object' || change === null || typeof change.path !== 'string') return null;
      paths.push(change.path);
      written.push(Boolean(change.newOid));
    }
    return { commit: entry.commit, toolUseId, session, paths, written, facts: Boolean(entry.facts), start };
  } catch {
    return null;
  }
}

function pushTo(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * A file read at positions with a descriptor of its own (synchronously: entries are materialised inside
 * synchronous lookups). `once`: a file opened for each read (after the index was closed).
 */
class LineFile {
  private constructor(
    private fd: number | null,
    private readonly file: string,
  ) {}

  static open(file: string): LineFile {
    return new LineFile(fs.openSync(file, 'r'), file);
  }

  static once(file: string): LineFile {
    return new LineFile(null, file);
  }

  /** The whole file, as it is now. */
  readAll(): Buffer {
    return this.with((fd) => fs.readFileSync(fd));
  }

  /** Bytes [start, end) (fewer if the file is shorter). */
  readRange(start: number, end: number): Buffer {
    return this.with((fd) => {
      const buffer = Buffer.allocUnsafe(Math.max(0, end - start));
      let got = 0;
      while (got < buffer.length) {
        const n = fs.readSync(fd, buffer, got, buffer.length - got, start + got);
        if (n === 0) break;
        got += n;
      }
      return buffer.subarray(0, got);
    });
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }

  private with<T>(read: (fd: number) => T): T {
    if (this.fd !== null) return read(this.fd);
    const fd = fs.openSync(this.file, 'r');
    try {
      return read(fd);
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** How many positions of an ascending list are at or before `position` (a binary search). */
function countAtOrBefore(list: ArrayLike<number>, position: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] <= position) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
