import * as fs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';

/**
 * Writes to one store are serialised twice over: a promise queue orders the calls of this process, and a
 * lock directory (proper-lockfile) excludes other processes. The lock's mtime is refreshed while held, so
 * a lock left by a killed process is taken over once it is `staleMs` old.
 */

export interface WriteLockOptions {
  staleMs?: number;
  /** How long to wait for another process before giving up. */
  timeoutMs?: number;
}

export class LockTimeoutError extends Error {
  constructor(readonly lockPath: string, waitedMs: number) {
    super(`memgit: the store is locked by another writer (${lockPath}); gave up after ${waitedMs} ms`);
    this.name = 'LockTimeoutError';
  }
}

export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task, task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

export class WriteLock {
  private readonly queue = new SerialQueue();
  readonly lockPath: string;
  private readonly staleMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly target: string,
    options: WriteLockOptions = {},
  ) {
    this.lockPath = `${target}.lock`;
    this.staleMs = Math.max(options.staleMs ?? 5000, 5000);
    this.timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** Run `task` alone: after every earlier task of this process and with no other process writing. */
  withLock<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      const release = await this.acquire();
      try {
        return await task();
      } finally {
        await release().catch(() => undefined);
      }
    });
  }

  /** Order `task` after this process's earlier writes without taking the cross-process lock (reads). */
  inOrder<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  private async acquire(): Promise<() => Promise<void>> {
    await fs.promises.mkdir(path.dirname(this.target), { recursive: true });
    const started = Date.now();
    let delay = 2;
    for (;;) {
      try {
        return await lockfile.lock(this.target, {
          realpath: false,
          stale: this.staleMs,
          lockfilePath: this.lockPath,
          // A compromised lock means another process took it over: this one's write may race. Report it
          // instead of throwing from a timer, which would crash the process.
          onCompromised: (error) => process.emitWarning(`memgit: write lock compromised: ${error.message}`),
        });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
        const waited = Date.now() - started;
        if (waited > this.timeoutMs) throw new LockTimeoutError(this.lockPath, waited);
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 50);
      }
    }
  }
}
