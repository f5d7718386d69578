/**
 * The test environment of every test file (jest.config.js): node's, plus a check that the file left no
 * FileHandle open. Node closes a FileHandle that is garbage collected while open and warns "Closing file
 * descriptor N on garbage collection": in a long-running server that is a descriptor leak. Every handle a
 * file opens (fs.promises.open) is tracked, and one still open when the file is torn down fails the file,
 * named by its descriptor (and, with MEMGIT_TRACE_HANDLES=1, where it was opened): open and unreachable, or
 * held by the file's modules, either way it outlived the file. A warning from a collection (whenever the
 * collector runs) fails the file that was running, or the next one in the same worker.
 *
 * No collection is forced: the check once forced three full collections a file to make the warnings fire,
 * and workers' heaps made them cost 173 s of the suite's CPU; tracking the handles finds every leak they
 * found, at the file that leaked, without them.
 */
import type { Circus } from '@jest/types';
import NodeEnvironment from 'jest-environment-node';
import { AsyncLocalStorage } from 'node:async_hooks';
import * as fs from 'node:fs';

const LEAK_WARNING = /^Closing file descriptor \d+ on garbage collection/;

/**
 * Every FileHandle the file opened with fs.promises.open (weakly: the collector may still take one, which
 * the warning above reports), so that its teardown can name those still open; and, when
 * MEMGIT_TRACE_HANDLES is set, where each was opened (a handle is made natively when the open completes,
 * where no hook sees who asked for it).
 */
const openedThisFile: Array<WeakRef<fs.promises.FileHandle>> = [];
const openedAt = new Map<number, string>();
{
  const open = fs.promises.open;
  fs.promises.open = async function trackedOpen(...args: Parameters<typeof open>) {
    let stack: string | undefined;
    if (process.env.MEMGIT_TRACE_HANDLES) {
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 15;
      stack = new Error('opened').stack!.split('\n').slice(2).join('\n');
      Error.stackTraceLimit = limit;
    }
    const handle = await open(...args);
    openedThisFile.push(new WeakRef(handle));
    if (stack) openedAt.set(handle.fd, stack);
    return handle;
  };
}

/**
 * The AsyncLocalStorage instances enabled while a test file ran, disabled when it is torn down. jest-circus
 * makes one for every test file (in the file's own module registry) and never disables it, and Node 20
 * keeps every enabled instance in one process-wide list: each async resource made afterwards (every
 * promise) is given a slot for each of them, so a worker's 50th file paid 50 stores per promise, and any
 * long-lived resource made during a test (a worker thread's port) kept that file's whole module graph
 * alive. Workers ended up with 300 MB heaps, where every collection costs in proportion. (Node 20's `_enable`
 * is where an instance joins the list; without it nothing is tracked.)
 */
const storagesOfThisFile: AsyncLocalStorage<unknown>[] = [];
{
  type Storage = AsyncLocalStorage<unknown> & { enabled?: boolean };
  const prototype = AsyncLocalStorage.prototype as unknown as { _enable?: (this: Storage) => void };
  const enable = prototype._enable;
  if (typeof enable === 'function') {
    prototype._enable = function trackedEnable(this: Storage) {
      if (!this.enabled) storagesOfThisFile.push(this);
      return enable.call(this);
    };
  }
}

/** Every such warning in this worker process, until a test file takes it as its own. */
const pending: string[] = [];
process.on('warning', (warning: Error) => {
  if (!LEAK_WARNING.test(warning.message)) return;
  const fd = Number(/\d+/.exec(warning.message)![0]);
  const where = openedAt.get(fd);
  pending.push(where ? `${warning.message}, opened\n${where}` : warning.message);
});
/** The test file this worker ran last: a handle its modules held is collected only after it ended. */
let previousFile: string | null = null;

/** `found`: one line (or more, with where it was opened) per handle; `when`: how they were found. */
function leakError(found: string[], what: string, when = '; node closed them on garbage collection'): Error {
  return new Error(
    `${what} left ${found.length} FileHandle(s) open${when}:\n` +
      found.map((message) => `  ${message}`).join('\n') +
      '\nClose every FileHandle in a finally (MEMGIT_TRACE_HANDLES=1 shows where each was opened).',
  );
}

export default class LeakCheckEnvironment extends NodeEnvironment {
  private readonly testPath: string;
  private inherited: Error | null = null;

  constructor(...args: ConstructorParameters<typeof NodeEnvironment>) {
    super(...args);
    this.testPath = args[1].testPath;
  }

  override async setup(): Promise<void> {
    await super.setup();
    // Reported since the previous file's teardown, by a collection of the collector's own choosing (a
    // handle the previous file never tracked): this file fails for it.
    const found = pending.splice(0);
    if (found.length > 0) this.inherited = leakError(found, `a test file run before ${this.testPath} in this worker (${previousFile ?? 'unknown'})`);
    previousFile = this.testPath;
  }

  /**
   * After the file's last test and hook: a FileHandle it opened that is still open outlives it (unreachable,
   * or held by its modules or a leaked object) and the file fails for it, whoever holds it. Named here, at
   * the file that leaked, not after a collection in a later file of the same worker: jest replaces a worker
   * whose heap outgrew workerIdleMemoryLimit (jest.config.js), and that worker runs no later file.
   */
  override async teardown(): Promise<void> {
    for (const storage of storagesOfThisFile.splice(0)) storage.disable();
    const stillOpen = openedThisFile.splice(0).flatMap((ref) => {
      const handle = ref.deref();
      return handle !== undefined && handle.fd !== -1 ? [handle.fd] : [];
    });
    await super.teardown();
    if (stillOpen.length > 0) {
      const handles = stillOpen.map((fd) => `descriptor ${fd}${openedAt.has(fd) ? `, opened\n${openedAt.get(fd)}` : ''}`);
      throw leakError(handles, this.testPath, ' after its last test');
    }
    // Collected since its last test (this file's, and no later file may run in this worker).
    const found = pending.splice(0);
    if (found.length > 0) throw leakError(found, this.testPath);
  }

  async handleTestEvent(event: Circus.Event, state: Circus.State): Promise<void> {
    if (event.name !== 'run_finish') return;
    if (this.inherited) state.unhandledErrors.push(this.inherited);
    const found = pending.splice(0);
    if (found.length > 0) state.unhandledErrors.push(leakError(found, this.testPath));
  }
}
