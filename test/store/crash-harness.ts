/**
 * Fault injection: run crash-writer.ts against a store, SIGKILL it at random moments (during start-up,
 * open and recovery, and while it has calls queued and large objects in flight), then reopen the store
 * and check what a crash must never break:
 *
 * - the real `git fsck --full` finds no problem (dangling objects from the killed write are allowed);
 * - HEAD resolves and `git status --porcelain` is empty (working tree and index equal HEAD);
 * - the next write succeeds at once (no stale lock in the way; the wait is measured);
 * - every tool_result the writer printed before dying is what the in-memory model says, and each
 *   acknowledged mutation is a commit; the commits are exactly the model's mutations in order (nothing
 *   half-applied, lost or duplicated) and the memory files equal the model's.
 *
 * The writer resumes from its first unacknowledged call, so calls committed but not acknowledged are
 * retried with the same tool_use id and must replay, not apply twice.
 */
import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyEdits, DEFAULT_CONTRACT_OPTIONS, MemoryTree, runCommand } from '../../src/contract';
import { MemoryStore, ToolResult } from '../../src/store/memory-store';
import type { AckLine } from './crash-writer';
import { indexOfToolUseId, workloadCall } from './crash-workload';
import { gitReport } from './git-helpers';
import { mulberry32 as random } from '../support/random';

export const WRITER_SCRIPT = path.resolve(
  __dirname,
  __filename.endsWith('.ts') ? '../../dist/test/store/crash-writer.js' : 'crash-writer.js',
);

export interface CrashTally {
  kills: number;
  /** Kills of a writer creating a brand-new store (during `git init` and the first commit). */
  initKills: number;
  acknowledged: number;
  commits: number;
  /** Calls committed but not acknowledged when the writer died, then retried with the same id. */
  retriedAfterCrash: number;
  repairsLogged: number;
  lockTakeoversLogged: number;
  maxReopenMs: number;
  maxFirstWriteMs: number;
  fsckProblems: number;
  failures: string[];
}

export interface CrashOptions {
  kills: number;
  initKills: number;
  seed: number;
  /** Called after every kill with a one-line summary. */
  progress?: (line: string) => void;
}

/** The workload replayed through the in-memory model, advanced monotonically as the writer goes on. */
class SequenceModel {
  readonly tree = new MemoryTree();
  readonly commits: string[] = [];
  private next = 0;
  private readonly outcomes = new Map<number, { text: string; isError: boolean }>();

  constructor(private readonly seed: number) {}

  async advanceTo(index: number): Promise<void> {
    for (; this.next <= index; this.next += 1) {
      const call = workloadCall(this.seed, this.next);
      const outcome = await runCommand(call.input, this.tree, DEFAULT_CONTRACT_OPTIONS);
      if (!outcome.isError && outcome.edits) {
        applyEdits(this.tree, outcome.edits);
        this.commits.push(call.id);
      }
      this.outcomes.set(this.next, { text: outcome.text, isError: outcome.isError });
    }
  }

  /** The model's outcome of call `index` (consumed: each call is acknowledged once). */
  async outcome(index: number): Promise<{ text: string; isError: boolean }> {
    await this.advanceTo(index);
    const outcome = this.outcomes.get(index)!;
    this.outcomes.delete(index);
    return outcome;
  }

  files(): Map<string, string> {
    const files = new Map<string, string>();
    for (const item of this.tree.items()) if (item.kind === 'file' && item.path.startsWith('w/')) files.set(item.path, item.content!);
    return files;
  }
}

function memoryFiles(repo: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string): void => {
    const full = path.join(repo, 'memories', rel);
    const stat = fs.lstatSync(full);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(full)) walk(rel ? `${rel}/${name}` : name);
    } else if (path.basename(rel) !== '.keep') {
      files.set(rel, fs.readFileSync(full, 'utf8'));
    }
  };
  if (fs.existsSync(path.join(repo, 'memories', 'w'))) walk('w');
  return files;
}

interface WriterRun {
  acks: AckLine[];
  stderr: string;
}

/** Start the writer at call `start`; kill it after `killAfterMs`, or once it has acknowledged `killAfterAcks` calls. */
function runAndKill(repo: string, seed: number, start: number, kill: { afterMs?: number; afterAcks?: number; jitterMs: number }): Promise<WriterRun> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [WRITER_SCRIPT, repo, String(seed), String(start), '1000000', '4'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: AckLine[] = [];
    let buffered = '';
    let stderr = '';
    let killing = false;
    const killSoon = (): void => {
      if (killing) return;
      killing = true;
      setTimeout(() => child.kill('SIGKILL'), kill.jitterMs);
    };
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        acks.push(JSON.parse(buffered.slice(0, newline)) as AckLine);
        buffered = buffered.slice(newline + 1);
        if (kill.afterAcks !== undefined && acks.length >= kill.afterAcks) killSoon();
      }
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => (stderr += chunk));
    if (kill.afterMs !== undefined) setTimeout(killSoon, kill.afterMs);
    child.on('error', reject);
    // 'close' comes after the exit and after both pipes are drained: every line printed has been read.
    child.on('close', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`crash-writer exited by itself (code ${code}): ${stderr}`));
      // A partial last line was never acknowledged (it was being written when the process died).
      else resolve({ acks, stderr });
    });
  });
}

class Campaign {
  private readonly model: SequenceModel;
  private nextIndex = 0;
  private probes = 0;
  private committedAtLastCheck = new Set<string>();

  constructor(
    readonly repo: string,
    private readonly seed: number,
    private readonly tally: CrashTally,
    private readonly liveStore: MemoryStore | null,
    private readonly log: (message: string) => void,
  ) {
    this.model = new SequenceModel(seed);
  }

  private fail(message: string): void {
    this.tally.failures.push(`${this.repo} seed ${this.seed}: ${message}`);
  }

  /** One kill and every check after it. `reopen`: check through a freshly opened store, else the live one. */
  async killAndCheck(kill: { afterMs?: number; afterAcks?: number; jitterMs: number }, reopen: boolean): Promise<string> {
    const run = await runAndKill(this.repo, this.seed, this.nextIndex, kill);
    this.countLog(run.stderr);
    await this.checkAcks(run.acks);

    let store = this.liveStore;
    let reopenMs = 0;
    if (reopen || !store) {
      const started = Date.now();
      store = await MemoryStore.open(this.repo, { log: this.log });
      reopenMs = Date.now() - started;
      this.tally.maxReopenMs = Math.max(this.tally.maxReopenMs, reopenMs);
    }
    // The next write goes through at once: no lock left by the dead writer is in the way.
    const started = Date.now();
    this.probes += 1;
    const probe = await store.execute(
      { type: 'tool_use', id: `probe_${this.seed}_${this.probes}`, name: 'memory', input: { command: 'create', path: '/memories/probe.md', file_text: `probe ${this.probes}\n` } },
      { session: 'sess_probe' },
    );
    const firstWriteMs = Date.now() - started;
    this.tally.maxFirstWriteMs = Math.max(this.tally.maxFirstWriteMs, firstWriteMs);
    if (probe.is_error) this.fail(`the write after the kill failed: ${probe.content}`);
    for (const ack of run.acks) {
      if (!ack.result.is_error && this.model.commits.includes(ack.result.tool_use_id) && !store.history.byToolUseId(ack.result.tool_use_id)) {
        this.fail(`acknowledged ${ack.result.tool_use_id} is not in the history index`);
      }
    }
    // The probe's working-tree file follows its result under the write lock; git is checked once it is there.
    if (store !== this.liveStore) await store.close();
    else await store.settled();

    await this.checkGit();
    return `acks ${run.acks.length}, reopen ${reopenMs} ms, first write ${firstWriteMs} ms, commits ${this.model.commits.length}`;
  }

  private countLog(text: string): void {
    for (const line of text.split('\n')) this.countLogLine(line);
  }

  countLogLine(line: string): void {
    if (line.includes('repaired ') || line.includes('temporary file(s)') || line.includes('finishing the initialisation')) this.tally.repairsLogged += 1;
    if (line.includes('took over the write lock')) this.tally.lockTakeoversLogged += 1;
  }

  private async checkAcks(acks: AckLine[]): Promise<void> {
    for (const ack of acks) {
      if (ack.index !== this.nextIndex) this.fail(`acknowledgement ${ack.index} out of order (expected ${this.nextIndex})`);
      this.nextIndex = ack.index + 1;
      this.tally.acknowledged += 1;
      // Each call is acknowledged once; one already committed was committed by a writer killed before it could say so.
      if (this.committedAtLastCheck.has(ack.result.tool_use_id)) this.tally.retriedAfterCrash += 1;
      const expected = await this.model.outcome(ack.index);
      const result: ToolResult = ack.result;
      if (result.content !== expected.text || Boolean(result.is_error) !== expected.isError) {
        this.fail(`call ${ack.index}: got ${JSON.stringify(result.content.slice(0, 200))}, model says ${JSON.stringify(expected.text.slice(0, 200))}`);
      }
    }
  }

  private async checkGit(): Promise<void> {
    const report = gitReport(this.repo);
    // Dangling objects are what a killed write leaves unreachable; git itself treats them as harmless.
    const fsckProblems = report.fsckOutput.split('\n').filter((line) => line && !line.startsWith('dangling '));
    this.tally.fsckProblems += fsckProblems.length + (report.fsckCode === 0 ? 0 : 1);
    if (report.fsckCode !== 0 || fsckProblems.length) this.fail(`git fsck: code ${report.fsckCode}: ${fsckProblems.join(' | ')}`);
    if (report.branch !== 'refs/heads/main' || report.commits.length === 0) this.fail(`HEAD does not resolve to main: ${report.branch}`);
    if (report.status !== '') this.fail(`git status is not clean:\n${report.status}`);
    const titles = report.commits.map((c) => c.message.split('\n')[0]).filter((t) => !t.startsWith('probe_') && t !== 'memgit: initialise store');
    const lastCommitted = titles.length ? indexOfToolUseId(this.seed, titles[titles.length - 1]) : null;
    if (titles.length && lastCommitted === null) this.fail(`unexpected commit ${titles[titles.length - 1]}`);
    // Calls past the last acknowledgement may have been committed before the kill; the model follows.
    await this.model.advanceTo(Math.max(this.nextIndex - 1, lastCommitted ?? -1));
    const expected = this.model.commits;
    if (titles.length !== expected.length || titles.some((t, i) => t !== expected[i])) {
      const at = Math.max(0, titles.findIndex((t, i) => t !== expected[i]));
      this.fail(`commits differ from the model at #${at}: git ${titles[at]}, model ${expected[at]} (git ${titles.length}, model ${expected.length})`);
    }
    const onDisk = memoryFiles(this.repo);
    const wanted = this.model.files();
    const differ = [...new Set([...onDisk.keys(), ...wanted.keys()])].filter((f) => onDisk.get(f) !== wanted.get(f));
    if (differ.length) this.fail(`memory files differ from the model: ${differ.join(', ')}`);
    this.committedAtLastCheck = new Set(titles);
    this.tally.commits = expected.length;
  }
}

export function emptyTally(): CrashTally {
  return {
    kills: 0,
    initKills: 0,
    acknowledged: 0,
    commits: 0,
    retriedAfterCrash: 0,
    repairsLogged: 0,
    lockTakeoversLogged: 0,
    maxReopenMs: 0,
    maxFirstWriteMs: 0,
    fsckProblems: 0,
    failures: [],
  };
}

export async function runCrashCampaign(options: CrashOptions): Promise<CrashTally> {
  const tally = emptyTally();
  const rand = random(options.seed);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-crash-'));
  try {
    // Brand-new stores killed early: during `git init`, configuration and the first commit.
    for (let i = 0; i < options.initKills; i += 1) {
      const repo = path.join(root, `init-${i}`);
      fs.mkdirSync(repo);
      const campaign: Campaign = new Campaign(repo, options.seed + 1 + i, tally, null, (m) => campaign.countLogLine(m));
      const summary = await campaign.killAndCheck({ afterMs: 40 + Math.floor(rand() * 360), jitterMs: 0 }, true);
      tally.initKills += 1;
      options.progress?.(`init kill ${i + 1}/${options.initKills}: ${summary}`);
    }

    // One long-lived store, killed over and over. Half the checks go through a store this process
    // keeps open across the kills (it must repair before its next write), half through a fresh open.
    const repo = path.join(root, 'main');
    fs.mkdirSync(repo);
    let campaign: Campaign | undefined;
    const live = await MemoryStore.open(repo, { log: (m) => campaign?.countLogLine(m) });
    campaign = new Campaign(repo, options.seed, tally, live, (m) => campaign!.countLogLine(m));
    for (let k = 0; k < options.kills; k += 1) {
      const byTime = rand() < 0.4;
      const kill = byTime
        ? { afterMs: Math.floor(rand() * 700), jitterMs: 0 }
        : { afterAcks: 1 + Math.floor(rand() * 30), jitterMs: Math.floor(rand() * 4) };
      const summary = await campaign.killAndCheck(kill, k % 2 === 0);
      tally.kills += 1;
      options.progress?.(`kill ${k + 1}/${options.kills} (${byTime ? `after ${kill.afterMs} ms` : `after ${kill.afterAcks} acks`}): ${summary}`);
    }
    await live.close();
  } finally {
    if (tally.failures.length === 0) fs.rmSync(root, { recursive: true, force: true });
    else tally.failures.push(`stores kept for inspection in ${root}`);
  }
  return tally;
}
