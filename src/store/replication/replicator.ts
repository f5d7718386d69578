import { errorDetail, ReplicationStoppedError } from '../errors';
import type { ReplicationPort } from './port';
import { pushToRemote } from './push';
import type { RemoteConfig } from './remote-config';
import { localMemgitRefs, localReviewBranches } from './transport';

export interface ReplicatorOptions {
  /** Commits that arrive within this window go in one push (ms, default 50). */
  batchMs?: number;
  /** First retry delay after a failed push, doubled on each failure up to maxBackoffMs (ms). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

/**
 * Continuous replication: after each commit, push in the background. Pushes are batched (a commit that
 * arrives while a push runs is carried by the next one), retried with exponential backoff, and never
 * block or fail a memory call: the call is acknowledged before a push starts, and a push error only
 * reaches the log and the replication status.
 */
export class Replicator {
  private readonly loops: RemoteLoop[];
  private readonly unsubscribe: () => void;

  constructor(port: ReplicationPort, remotes: RemoteConfig[], options: ReplicatorOptions = {}) {
    this.loops = remotes.map((remote) => new RemoteLoop(port, remote, options));
    this.unsubscribe = port.onCommitted(() => this.notify());
    this.notify(); // catch up with commits made while no replicator ran
  }

  notify(): void {
    for (const loop of this.loops) loop.schedule();
  }

  /** Stop replicating; wait up to `flushMs` for a push under way (or a final one) to finish. */
  async close(flushMs = 0): Promise<void> {
    this.unsubscribe();
    await Promise.all(this.loops.map((loop) => loop.close(flushMs)));
  }
}

class RemoteLoop {
  private dirty = false;
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;
  private readonly batchMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly port: ReplicationPort,
    private readonly remote: RemoteConfig,
    options: ReplicatorOptions,
  ) {
    this.batchMs = options.batchMs ?? 50;
    this.minBackoffMs = options.minBackoffMs ?? 1000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
  }

  schedule(delay = this.batchMs): void {
    this.dirty = true;
    if (this.closed || this.running || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.run().finally(() => {
        this.running = null;
        if (this.dirty && !this.closed) this.schedule();
      });
    }, delay);
    this.timer.unref(); // a store being closed does not wait for the next attempt
  }

  /** What a push carries: HEAD, memgit's own refs and the review branches, as one string to compare. */
  private async refsState(): Promise<string> {
    const refs = [...(await localMemgitRefs(this.port.gitdir)), ...(await localReviewBranches(this.port.gitdir))];
    return `${await this.port.head()} ${refs.map(([ref, oid]) => `${ref}=${oid}`).join(' ')}`;
  }

  private async run(): Promise<void> {
    this.dirty = false;
    try {
      const before = await this.refsState();
      await pushToRemote(this.port, this.remote);
      this.failures = 0;
      // Commits notified while the push ran may all have been carried by it (it reads HEAD as it starts):
      // when HEAD (and memgit's own refs and review branches) have not moved since, another push would
      // only find the remote up to date.
      if (this.dirty && (await this.refsState()) === before) this.dirty = false;
    } catch (error) {
      if (error instanceof ReplicationStoppedError) return; // logged once by pushToRemote; needs an operator
      this.failures += 1;
      const delay = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** (this.failures - 1));
      if (this.failures === 1 || this.failures % 10 === 0) {
        this.port.log(`${errorDetail(error)}; retrying in ${Math.round(delay / 1000)} s (attempt ${this.failures})`);
      }
      if (!this.closed) {
        this.dirty = false;
        this.timer = setTimeout(() => {
          this.timer = null;
          this.schedule(0);
        }, delay);
        this.timer.unref();
      }
    }
  }

  async close(flushMs: number): Promise<void> {
    if (this.timer) this.dirty = true; // a scheduled push is owed
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.closed = true;
    if (flushMs <= 0) return;
    const deadline = Date.now() + flushMs;
    // A push under way may have read HEAD before the last commits (the catch-up push a store starts when
    // it opens, say): once it ends, one more carries them, within the same time limit. A remote that is
    // failing is not retried here.
    for (;;) {
      if (!this.running) {
        if (!this.dirty || this.failures > 0) return;
        this.running = this.run().finally(() => (this.running = null));
      }
      const left = deadline - Date.now();
      if (left <= 0) return;
      let timeout: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        this.running.then(() => true),
        new Promise<boolean>((resolve) => (timeout = setTimeout(() => resolve(false), left).unref())),
      ]);
      clearTimeout(timeout);
      if (!finished) return;
    }
  }
}
