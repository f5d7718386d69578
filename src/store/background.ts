import * as fs from 'node:fs';
import type { DurableFs } from './durable-fs';
import type { FlagIndex } from './flags';
import { estimateLooseObjects } from './gc';
import type { HistoryIndex } from './history-index';
import { listRemotes, Replicator } from './replication';
import type { ReplicationPort, ReplicatorOptions } from './replication';
import { configFlag } from './repo-config';

/** Counting loose objects costs a readdir: do it once per this many commits. */
const GC_CHECK_EVERY_COMMITS = 256;
/** On close, how long a flag scan under way is waited for (the rest is left for the next process). */
const FLAG_SCAN_CLOSE_WAIT_MS = 2000;

export interface BackgroundParts {
  gitdir: string;
  gitFs: DurableFs['gitFs'];
  /** Pack once about this many loose objects piled up (0: never automatically). */
  autoGcLooseObjects: number;
  closed: () => boolean;
  /** `gc()` of the loose objects, under the write lock. */
  repack: () => Promise<unknown>;
  log: (message: string) => void;
}

/**
 * What a store does after a call is acknowledged, off the caller's path: automatic packing of loose
 * objects, pushes to replicas added with `--auto`, and flagging calls that wrote likely secrets. Each
 * starts from a commit notification (`committed`, after every commit this process writes; `announce`,
 * after a redaction rewrote history), and none of them can fail a call: their failures are only logged.
 */
export class BackgroundJobs {
  private readonly listeners = new Set<() => void>();
  private commitsSinceGcCheck = 0;
  private pendingGc: Promise<void> | null = null;
  private replicator: Replicator | null = null;
  private flagScan: (() => void) | null = null;
  /** Flag personal data too (`StoreOptions.flagPersonalData`, else the store's `memgit.flagpersonaldata`). */
  personalData = false;

  constructor(private readonly parts: BackgroundParts) {}

  /** Called after every commit this process writes. */
  committed(): void {
    this.maybeScheduleGc();
    this.announce();
  }

  /** Tell the listeners (replicas, flags) that history changed. */
  announce(): void {
    for (const listener of this.listeners) listener();
  }

  /** Listen for commits; returns an unsubscribe function. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Queue a gc behind the current call (which is acknowledged first) once loose objects pile up. */
  private maybeScheduleGc(): void {
    const { autoGcLooseObjects, gitdir } = this.parts;
    if (autoGcLooseObjects <= 0 || this.pendingGc) return;
    if (++this.commitsSinceGcCheck < GC_CHECK_EVERY_COMMITS) return;
    this.commitsSinceGcCheck = 0;
    this.pendingGc = estimateLooseObjects(gitdir)
      .then((loose) => {
        if (loose < autoGcLooseObjects || this.parts.closed()) return;
        return this.parts.repack().then(() => undefined);
      })
      .catch((error: Error) => this.parts.log(`automatic gc failed (the store is unaffected): ${error.message}`))
      .finally(() => {
        this.pendingGc = null;
      });
  }

  /** An automatic gc already under way (a closing store lets it finish first). */
  async gcUnderWay(): Promise<void> {
    await this.pendingGc;
  }

  /** Push to the remotes added with `--auto` after every commit (none for a read-only clone). */
  async startReplication(port: () => ReplicationPort, replicate: boolean | ReplicatorOptions, readOnly: boolean): Promise<void> {
    if (!replicate || readOnly) return;
    const remotes = (await listRemotes({ fs, gitdir: this.parts.gitdir })).filter((r) => r.auto);
    if (remotes.length) this.replicator = new Replicator(port(), remotes, replicate === true ? {} : replicate);
  }

  /** Scan every commit for likely secrets (and personal data where the store opts in), now and after each commit. */
  async startFlagging(flags: FlagIndex, history: HistoryIndex, options: { flags?: boolean; flagPersonalData?: boolean }): Promise<void> {
    if (options.flags === false) return;
    const configured = await configFlag(this.parts.gitFs, this.parts.gitdir, 'memgit.flagpersonaldata');
    this.personalData = options.flagPersonalData ?? configured;
    const scan = () => void flags.catchUp(history);
    this.flagScan = scan;
    this.listeners.add(scan);
    scan();
  }

  /** Scan history for flags again (after they were reset), if flagging runs in this process. */
  rescanFlags(): void {
    this.flagScan?.();
  }

  /** The store closes: wait for a push under way or owed (up to `flushMs`) and briefly for a flag scan. */
  async stop(flags: FlagIndex, flushMs: number): Promise<void> {
    await Promise.all([this.replicator?.close(flushMs), waitAtMost(flags.idle(), FLAG_SCAN_CLOSE_WAIT_MS)]);
    flags.stop(); // a long scan of old history is left for the next process
  }
}

function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([promise.then(() => undefined), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()))]).finally(() => clearTimeout(timer));
}
