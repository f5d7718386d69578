import * as fs from 'node:fs';
import * as path from 'node:path';
import { MEMORY_REPO_ROOT } from '../../contract/paths';
import type { HistoryEntry, HistoryIndex } from '../history-index';
import type { ObjectStore } from '../objects';
import { findPersonalData, mask } from './personal-data';
import { SecretScanner } from './secret-scanner';

/**
 * Flags on write: every call whose writing adds a likely secret (or, where the store opts in, personal
 * data) is flagged for operators, with a masked sample, never the value. The agent's result is never
 * affected: scanning happens after the call is acknowledged, off the calling thread, and a scan that
 * fails only logs. Flags live in `.git/memgit/flags-v1.jsonl` (one line per flagged commit) with a small
 * state file saying how far history was scanned, so an old store is scanned once, in the background.
 */
export interface Finding {
  kind: 'secret' | 'personal';
  /** secretlint rule (e.g. `anthropic`, `aws`, `github`) or `email`, `phone`, `iban`, `card`. */
  rule: string;
  path: string;
  line: number;
  masked: string;
}

export interface FlagRecord {
  commit: string;
  toolUseId: string | null;
  session: string | null;
  time: number;
  findings: Finding[];
}

const FILE = 'flags-v1.jsonl';
const STATE = 'flags-state-v1.json';
const MAX_SCANNED_BYTES = 1024 * 1024;

let sharedScanner: SecretScanner | null = null;
/** One worker per process, shared by every store in it (secretlint loads once). */
function scanner(): SecretScanner {
  sharedScanner ??= new SecretScanner();
  return sharedScanner;
}

/** Scan a text for likely secrets with the process's shared secretlint worker (review's detectors use it). */
export function scanForSecrets(text: string): Promise<Array<{ rule: string; start: number; end: number }>> {
  return scanner().scan(text);
}

export class FlagIndex {
  private records: FlagRecord[] = [];
  private readonly byToolUse = new Map<string, FlagRecord>();
  private readonly byCommit = new Map<string, FlagRecord>();
  private through: string | null = null;
  private loaded = false;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly gitdir: string,
    private readonly objects: ObjectStore,
    private readonly options: { personalData: () => boolean; log: (m: string) => void },
  ) {}

  private get file(): string {
    return path.join(this.gitdir, 'memgit', FILE);
  }

  private get stateFile(): string {
    return path.join(this.gitdir, 'memgit', STATE);
  }

  private load(): void {
    if (this.loaded) return;
    this.loaded = true;
    let lines: string[] = [];
    try {
      lines = fs.readFileSync(this.file, 'utf8').split('\n');
    } catch {
      // nothing flagged yet
    }
    for (const line of lines) {
      if (!line) continue;
      try {
        this.add(JSON.parse(line) as FlagRecord);
      } catch {
        // a torn last line: that commit is scanned again
      }
    }
    // Read whether or not anything was flagged: a history without findings is scanned once, not by every
    // process that opens the store.
    try {
      this.through = (JSON.parse(fs.readFileSync(this.stateFile, 'utf8')) as { through: string | null }).through;
    } catch {
      // nothing scanned yet
    }
  }

  private add(record: FlagRecord): void {
    this.records.push(record);
    if (record.toolUseId) this.byToolUse.set(record.toolUseId, record);
    this.byCommit.set(record.commit, record);
  }

  /** Every flagged call, oldest first. */
  all(): readonly FlagRecord[] {
    this.load();
    return this.records;
  }

  forCall(toolUseId: string): FlagRecord | undefined {
    this.load();
    return this.byToolUse.get(toolUseId);
  }

  forCommit(commit: string): FlagRecord | undefined {
    this.load();
    return this.byCommit.get(commit);
  }

  /** Scan whatever history has that was not scanned yet (in the background; resolves when done). */
  catchUp(history: Pick<HistoryIndex, 'at' | 'size' | 'position'>): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.scanPending(history)
      .catch((error: Error) => this.options.log(`flagging secrets failed (memory calls are unaffected): ${error.message}`))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.catchUp(history);
        }
      });
    return this.running;
  }

  /** Stop after the commit being scanned (the store closes); the next process scans the rest. */
  stop(): void {
    this.stopped = true;
  }

  /** Wait for scanning under way. */
  idle(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** History was rewritten (a redaction): forget the flags and scan the new history again. */
  reset(): void {
    this.records = [];
    this.byToolUse.clear();
    this.byCommit.clear();
    this.through = null;
    this.loaded = true;
    fs.rmSync(this.file, { force: true });
    fs.rmSync(this.stateFile, { force: true });
  }

  private async scanPending(history: Pick<HistoryIndex, 'at' | 'size' | 'position'>): Promise<void> {
    this.load();
    let start = 0;
    if (this.through) {
      // A lookup, not a search: this runs after every commit, and history only grows.
      const at = history.position(this.through) ?? -1;
      start = at < 0 ? 0 : at + 1;
      if (at < 0) this.reset();
    }
    // By position, not all(): a warm open leaves entries unparsed until they are asked for.
    for (let i = start; i < history.size && !this.stopped; i++) {
      const entry = history.at(i)!;
      const record = await this.scanEntry(entry);
      if (record) {
        this.add(record);
        fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
        fs.appendFileSync(this.file, JSON.stringify(record) + '\n', { mode: 0o600 });
      }
      this.through = entry.commit;
      if (record || i === history.size - 1 || i % 200 === 0) fs.writeFileSync(this.stateFile, JSON.stringify({ through: this.through }) + '\n', { mode: 0o600 });
    }
  }

  private async scanEntry(entry: HistoryEntry): Promise<FlagRecord | null> {
    const findings: Finding[] = [];
    for (const change of entry.changes) {
      if (!change.newOid || !change.path.startsWith(`${MEMORY_REPO_ROOT}/`)) continue;
      const after = Buffer.from(await this.objects.readBlob(change.newOid)).toString('utf8');
      if (after.length > MAX_SCANNED_BYTES) continue;
      const before = change.oldOid ? new Set(Buffer.from(await this.objects.readBlob(change.oldOid)).toString('utf8').split('\n')) : new Set<string>();
      const lines = after.split('\n');
      const added = lines.map((text, i) => ({ text, line: i + 1 })).filter((l) => l.text.trim() !== '' && !before.has(l.text));
      if (added.length === 0) continue;
      const text = added.map((l) => l.text).join('\n');
      const lineAt = (offset: number) => added[text.slice(0, offset).split('\n').length - 1]?.line ?? 1;
      for (const f of await scanner().scan(text)) {
        findings.push({ kind: 'secret', rule: f.rule, path: `/${change.path}`, line: lineAt(f.start), masked: mask(text.slice(f.start, f.end)) });
      }
      if (this.options.personalData()) {
        for (const f of findPersonalData(text)) {
          findings.push({ kind: 'personal', rule: f.rule, path: `/${change.path}`, line: lineAt(f.start), masked: mask(text.slice(f.start, f.end)) });
        }
      }
    }
    if (findings.length === 0) return null;
    return { commit: entry.commit, toolUseId: entry.toolUseId ?? null, session: entry.session ?? null, time: entry.time, findings };
  }
}
