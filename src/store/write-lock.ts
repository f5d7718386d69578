import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { LockTimeoutError } from './errors';
import { isProcessAlive } from './process-alive';

export { LockTimeoutError };

/**
 * Writes to one store are serialised twice over: a promise queue orders the calls of this process, and a
 * lock directory (proper-lockfile) excludes other processes. The lock's mtime is refreshed while held, so
 * a lock left by a killed process is taken over once it is `staleMs` old.
 *
 * Waiting `staleMs` after every crash is slow, so the holder also records its pid and host in an `owner`
 * file inside the lock directory. A waiter on the same host that finds the owner dead removes the lock at
 * once — under a second, exclusive `.takeover` directory so that two waiters cannot both remove it, and
 * only while the lock is younger than `staleMs - 1 s`, so this never races proper-lockfile's own takeover.
 *
 * Between creating the lock directory and writing `owner` (and while releasing) the lock has no owner.
 * To judge that case too, every process announces each attempt with an intent file
 * (`<lock>.intents/<host>-<pid>-<n>`) before it can create the lock and removes it only after releasing:
 * an ownerless lock whose announced processes are all dead was left by one of them.
 */

export interface WriteLockOptions {
  staleMs?: number;
  /** How long to wait for another process before giving up. */
  timeoutMs?: number;
  /** Told when a dead process's lock is taken over. */
  log?: (message: string) => void;
}

const OWNER_FILE = 'owner';
let intentCounter = 0;

/** proper-lockfile removes its lock with rmdir; ours holds the owner file, so remove it with its content. */
// Inheriting from `fs` (rather than copying it) looks each function up when it is called.
const lockFs = Object.create(fs, {
  rmdir: {
    value: (dir: string, callback: (error: NodeJS.ErrnoException | null) => void) => fs.rm(dir, { recursive: true }, callback),
  },
  rmdirSync: { value: (dir: string) => fs.rmSync(dir, { recursive: true }) },
  // Owner-only whatever the umask, like everything else memgit creates in a store.
  mkdir: {
    value: (dir: string, ...rest: unknown[]) =>
      fs.mkdir(dir, { mode: 0o700 }, rest[rest.length - 1] as (error: NodeJS.ErrnoException | null) => void),
  },
}) as typeof fs;

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
  private readonly log: (message: string) => void;

  constructor(
    private readonly target: string,
    options: WriteLockOptions = {},
  ) {
    this.lockPath = `${target}.lock`;
    this.staleMs = Math.max(options.staleMs ?? 5000, 5000);
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.log = options.log ?? (() => undefined);
  }

  /** Run `task` alone: after every earlier task of this process and with no other process writing. */
  withLock<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(async () => {
      await this.cleanUpLeftovers();
      const intent = path.join(this.intentsDir, `${os.hostname()}-${process.pid}-${++intentCounter}`);
      // The lock's small files are written synchronously: page-cache metadata, where each round trip through
      // the thread pool costs more than the operation (they are on every write's path).
      try {
        fs.writeFileSync(intent, '', { mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        fs.mkdirSync(this.intentsDir, { recursive: true, mode: 0o700 });
        fs.writeFileSync(intent, '', { mode: 0o600 });
      }
      let outcome: { value: T } | { error: unknown };
      try {
        const release = await this.acquire(intent);
        try {
          outcome = { value: await task() };
        } catch (error) {
          outcome = { error };
        }
        // What the task did stands whether or not the lock's removal works: a failure here must not turn
        // an applied write into an error. The lock left behind is ours; it is removed before our next write.
        await release().catch((error: Error) => {
          this.leftoverLockSince = Date.now();
          this.log(`could not release the write lock (${error.message}); it is removed before the next write`);
        });
      } catch (error) {
        outcome = { error };
      }
      await fs.promises.rm(intent, { force: true }).catch((error: Error) => {
        this.leftoverIntents.add(intent);
        this.log(`could not remove the lock intent file (${error.message}); retried before the next write`);
      });
      if ('error' in outcome) throw outcome.error;
      return outcome.value;
    });
  }

  /** Our own lock directory or intent files that an earlier release could not remove (a failing disk). */
  private leftoverLockSince: number | null = null;
  private readonly leftoverIntents = new Set<string>();

  private async cleanUpLeftovers(): Promise<void> {
    for (const intent of this.leftoverIntents) {
      await fs.promises.rm(intent, { force: true });
      this.leftoverIntents.delete(intent);
    }
    if (this.leftoverLockSince === null) return;
    // Only while it is still ours: had it gone stale, another process may have taken it over (and then
    // it names that process), or created it anew after our failed release (and then it is newer).
    const owner = await fs.promises.readFile(path.join(this.lockPath, OWNER_FILE), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw error;
    });
    if (owner === `${process.pid}@${os.hostname()}\n`) {
      await fs.promises.rm(this.lockPath, { recursive: true, force: true });
    } else if (owner === null) {
      const mtime = await fs.promises.stat(this.lockPath).then((stat) => stat.mtimeMs, () => null);
      if (mtime !== null && mtime <= this.leftoverLockSince) await fs.promises.rmdir(this.lockPath).catch(() => undefined);
    }
    this.leftoverLockSince = null;
  }

  private get intentsDir(): string {
    return `${this.lockPath}.intents`;
  }

  /** Order `task` after this process's earlier writes without taking the cross-process lock (reads). */
  inOrder<T>(task: () => Promise<T>): Promise<T> {
    return this.queue.run(task);
  }

  private async acquire(intent: string): Promise<() => Promise<void>> {
    fs.mkdirSync(path.dirname(this.target), { recursive: true, mode: 0o700 });
    const started = Date.now();
    let delay = 2;
    for (;;) {
      try {
        const release = await lockfile.lock(this.target, {
          realpath: false,
          stale: this.staleMs,
          lockfilePath: this.lockPath,
          fs: lockFs,
          // A compromised lock means another process took it over: this one's write may race. Report it
          // instead of throwing from a timer, which would crash the process.
          onCompromised: (error) => process.emitWarning(`memgit: write lock compromised: ${error.message}`),
        });
        // Killed before this line, the lock has no owner and is taken over by age alone.
        await this.writeOwner().catch(async (error: unknown) => {
          await release().catch(() => undefined);
          throw error;
        });
        return release;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
        if (await this.takeOverIfHolderDied(intent)) continue;
        const waited = Date.now() - started;
        if (waited > this.timeoutMs) throw new LockTimeoutError(this.lockPath, waited);
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 50);
      }
    }
  }

  /**
   * Record the holder in the lock directory. Adding a file changes the directory's mtime, which
   * proper-lockfile compares with the one it set when it took the lock: at its first refresh it would
   * call the lock compromised and stop refreshing it, so that a lock held longer than `staleMs` (a cold
   * open or a gc of a large store) could be taken over by age. Put the mtime back.
   */
  private async writeOwner(): Promise<void> {
    const { atime, mtime } = fs.statSync(this.lockPath);
    fs.writeFileSync(path.join(this.lockPath, OWNER_FILE), `${process.pid}@${os.hostname()}\n`, { mode: 0o600 });
    await fs.promises.utimes(this.lockPath, atime, mtime);
  }

  /** Remove the lock if its holder is certainly a process of this host that no longer exists. */
  private async takeOverIfHolderDied(ownIntent: string): Promise<boolean> {
    if (!(await this.holderIsDead(ownIntent))) return false;
    const guard = `${this.lockPath}.takeover`;
    try {
      await fs.promises.mkdir(guard, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A guard left by a waiter killed mid-takeover (its work takes microseconds) is cleared by age.
      const age = await ageMs(guard);
      if (age !== null && age > this.staleMs) await fs.promises.rm(guard, { recursive: true, force: true });
      return false;
    }
    try {
      // Judge again under the guard: another waiter may have taken over, and a live process hold it now.
      const holder = await this.holderIsDead(ownIntent);
      const age = await ageMs(this.lockPath);
      if (!holder || age === null || age >= this.staleMs - 1000) return false;
      await fs.promises.rm(this.lockPath, { recursive: true, force: true });
      for (const file of holder.deadIntents) await fs.promises.rm(file, { force: true });
      this.log(`took over the write lock ${this.lockPath} from ${holder.who}, which has died`);
      return true;
    } finally {
      await fs.promises.rm(guard, { recursive: true, force: true });
    }
  }

  /** The dead holder of the lock (and the intents dead processes left), or null if it may be alive. */
  private async holderIsDead(ownIntent: string): Promise<{ who: string; deadIntents: string[] } | null> {
    const owner = await readOwner(this.lockPath);
    const intents = await readIntents(this.intentsDir);
    const deadIntents = intents.filter((i) => i.pid !== null && !isAlive(i.pid)).map((i) => i.file);
    if (owner === 'foreign') return null;
    if (owner) return isAlive(owner.pid) ? null : { who: `process ${owner.pid}`, deadIntents };
    // No owner (yet, or any more): the holder is one of the processes that announced an attempt.
    const othersAlive = intents.some((i) => i.file !== ownIntent && (i.pid === null || isAlive(i.pid)));
    if (othersAlive || deadIntents.length === 0) return null;
    return { who: `one of processes ${intents.filter((i) => deadIntents.includes(i.file)).map((i) => i.pid).join(', ')}`, deadIntents };
  }
}

/** Intent files; `pid` is null for another host's, whose liveness cannot be known from here. */
async function readIntents(dir: string): Promise<Array<{ file: string; pid: number | null }>> {
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  const host = os.hostname();
  return names.map((name) => {
    const match = /^(.*)-(\d+)-\d+$/.exec(name);
    return { file: path.join(dir, name), pid: match && match[1] === host ? Number(match[2]) : null };
  });
}

/** The recorded holder: null when there is none (or it is half written), 'foreign' for another host's. */
async function readOwner(lockPath: string): Promise<{ pid: number } | 'foreign' | null> {
  const text = await fs.promises.readFile(path.join(lockPath, OWNER_FILE), 'utf8').catch(() => null);
  const match = text?.match(/^(\d+)@(.*)\n$/);
  if (!match) return null;
  // A pid means nothing on another host (a store on a shared file system): leave that to the lock's age.
  return match[2] === os.hostname() ? { pid: Number(match[1]) } : 'foreign';
}

const isAlive = isProcessAlive;

async function ageMs(file: string): Promise<number | null> {
  try {
    return Date.now() - (await fs.promises.stat(file)).mtimeMs;
  } catch {
    return null;
  }
}
