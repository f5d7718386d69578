/**
 * A fault injector for node:fs: every function the store reaches (its DurableFs, isomorphic-git through
 * it, the working tree, the history index, the write lock through proper-lockfile) is wrapped once, for
 * the whole test process, so that a call on a path under `root` can be counted and made to fail.
 *
 * Import this module before anything that imports the store: some callers bind fs functions when they
 * load. Calls on other paths (jest, the git CLI checks) are never counted or failed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export type FaultCode = 'EIO' | 'ENOSPC';

/** How a wrapped function takes its target: a path argument, or a file descriptor opened from one. */
type Target = 'path' | 'fd' | 'handle' | 'two-paths';

interface Spec {
  name: string;
  target: Target;
  /** Can this call fail with ENOSPC (it allocates space)? */
  writes: boolean;
  /** Does the function report failure by returning false instead of throwing (existsSync)? */
  returnsFalse?: boolean;
  /** Does a failure go to a callback (last argument) rather than being thrown or rejected? */
  callback?: boolean;
  /** Does the function return a promise? */
  promise?: boolean;
}

export interface Call {
  name: string;
  file: string;
  writes: boolean;
  /** Bytes a write asks to store (0 for calls that store no data). */
  bytes: number;
}

class Injector {
  /** Only calls on paths below this folder are counted and failed; null = injector idle. */
  root: string | null = null;
  calls: Call[] = [];
  /** 1-based index of the call to fail, 0 for none. */
  failAt = 0;
  code: FaultCode = 'EIO';
  /** Fail every call the predicate accepts (a persistently full disk), independently of failAt. */
  persistent: ((call: Call) => FaultCode | null) | null = null;
  failed: Call | null = null;
  /**
   * Skip the fsyncs the store asks for under `root` (they are still counted and can be failed): what is
   * tested is what the store does when a call fails, not the disk, and fsyncs dominate a sweep's time.
   */
  skipSync = true;
  /** Also skip fsyncs below this folder while no call is watched (a sweep's setup, retries and reopens). */
  syncFreeRoot: string | null = null;
  readonly fdPaths = new Map<number, string>();

  /** Decide for one call: the error to raise, or null to run it. */
  check(name: string, file: string | undefined, writes: boolean, bytes = 0): NodeJS.ErrnoException | null {
    if (this.root === null || file === undefined) return null;
    const resolved = path.resolve(file);
    if (resolved !== this.root && !resolved.startsWith(this.root + path.sep)) return null;
    const call = { name, file: resolved, writes, bytes };
    this.calls.push(call);
    const persistent = this.persistent?.(call) ?? null;
    if (persistent) return makeError(persistent, name, resolved);
    if (this.calls.length !== this.failAt) return null;
    if (this.code === 'ENOSPC' && !writes) return null;
    this.failed = call;
    return makeError(this.code, name, resolved);
  }

  reset(root: string | null): void {
    this.root = root === null ? null : path.resolve(root);
    this.calls = [];
    this.failAt = 0;
    this.code = 'EIO';
    this.persistent = null;
    this.failed = null;
  }
}

function isUnder(file: string, root: string | null): boolean {
  const resolved = path.resolve(file);
  return root !== null && (resolved === root || resolved.startsWith(root + path.sep));
}

function syncIsSkipped(file: string): boolean {
  return (injector.skipSync && isUnder(file, injector.root)) || isUnder(file, injector.syncFreeRoot);
}

function makeError(code: FaultCode, name: string, file: string): NodeJS.ErrnoException {
  const text = code === 'EIO' ? 'i/o error' : 'no space left on device';
  return Object.assign(new Error(`${code}: ${text}, ${name} '${file}'`), { code, errno: code === 'EIO' ? -5 : -28, syscall: name, path: file });
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const fsModule = require('node:fs') as Record<string, unknown>;
/**
 * One injector per process: jest gives every test file its own module registry but the same node:fs, so
 * a later file must find the wrappers (installed once, below) wired to the injector they call.
 */
export const injector: Injector = (fsModule.__memgitFaultInjector as Injector | undefined) ?? new Injector();
fsModule.__memgitFaultInjector = injector;

const WRITE_FLAGS = /[wa+]/;
const SYNCS = new Set(['fsync', 'fsyncSync', 'handle.sync', 'handle.datasync']);

function fileOf(spec: Spec, args: unknown[]): string | undefined {
  const first = args[0];
  if (spec.target === 'fd' || spec.target === 'handle') return typeof first === 'number' ? injector.fdPaths.get(first) : undefined;
  if (typeof first === 'string') return first;
  if (first instanceof URL) return first.pathname;
  if (Buffer.isBuffer(first)) return first.toString();
  return undefined;
}

function bytesOf(name: string, args: unknown[]): number {
  const sizeOf = (data: unknown): number => (typeof data === 'string' ? Buffer.byteLength(data) : data instanceof Uint8Array ? data.byteLength : 0);
  if (name === 'writeSync') return sizeOf(args[1]) - (typeof args[2] === 'number' ? args[2] : 0);
  if (name === 'writeFile' || name === 'appendFile' || name === 'writeFileSync') return sizeOf(args[1]);
  return 0;
}

function opensForWrite(args: unknown[]): boolean {
  const flags = args[1];
  return typeof flags === 'string' && WRITE_FLAGS.test(flags);
}

function wrap(owner: Record<string, unknown>, spec: Spec): void {
  const original = owner[spec.name] as (...args: unknown[]) => unknown;
  if (typeof original !== 'function' || (original as { __faulty?: boolean }).__faulty) return;
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    const writes = spec.writes || ((spec.name === 'open' || spec.name === 'openSync') && opensForWrite(args));
    let file = fileOf(spec, args);
    if (spec.target === 'two-paths' && typeof args[1] === 'string') {
      // A rename is under the store if either end is.
      const second = args[1];
      if (injector.root && path.resolve(second).startsWith(injector.root)) file = second;
    }
    const error = injector.check(spec.name, file, writes, bytesOf(spec.name, args));
    if (error) {
      if (spec.returnsFalse) return false;
      if (spec.callback) {
        const callback = args[args.length - 1] as (error: Error) => void;
        process.nextTick(() => callback(error));
        return undefined;
      }
      if (spec.promise) return Promise.reject(error);
      throw error;
    }
    if (SYNCS.has(spec.name) && file !== undefined && syncIsSkipped(file)) {
      if (spec.callback) {
        const callback = args[args.length - 1] as (error: Error | null) => void;
        process.nextTick(() => callback(null));
      }
      return undefined;
    }
    const result = original.apply(this, args);
    if (spec.name === 'openSync' && typeof result === 'number' && typeof file === 'string') injector.fdPaths.set(result, path.resolve(file));
    if (spec.name === 'open' && spec.promise && typeof file === 'string') {
      return (result as Promise<fs.promises.FileHandle>).then((handle) => wrapHandle(handle, path.resolve(file!)));
    }
    return result;
  };
  (wrapped as { __faulty?: boolean }).__faulty = true;
  owner[spec.name] = wrapped;
}

/** A FileHandle's sync/write/close are methods of the handle: wrap them on each handle opened under the store. */
function wrapHandle(handle: fs.promises.FileHandle, file: string): fs.promises.FileHandle {
  const methods: Array<[string, boolean]> = [
    ['sync', true],
    ['datasync', true],
    ['writeFile', true],
    ['write', true],
    ['readFile', false],
    ['close', false],
  ];
  for (const [name, writes] of methods) {
    const record = handle as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const original = record[name].bind(handle);
    record[name] = (...args: unknown[]) => {
      const error = injector.check(`handle.${name}`, file, writes, name === 'write' || name === 'writeFile' ? bytesOf('writeFile', [null, args[0]]) : 0);
      // A close that fails still releases the descriptor (close(2) on Linux, whatever it reports):
      // failing it without closing would leak a descriptor the store did try to close.
      if (error && name === 'close') return original().then(() => Promise.reject(error), () => Promise.reject(error));
      if (error) return Promise.reject(error);
      if (SYNCS.has(`handle.${name}`) && syncIsSkipped(file)) return Promise.resolve();
      return original(...args);
    };
  }
  return handle;
}

const PROMISE_SPECS: Spec[] = ([
  { name: 'writeFile', target: 'path', writes: true },
  { name: 'appendFile', target: 'path', writes: true },
  { name: 'readFile', target: 'path', writes: false },
  { name: 'mkdir', target: 'path', writes: true },
  { name: 'rm', target: 'path', writes: false },
  { name: 'rmdir', target: 'path', writes: false },
  { name: 'unlink', target: 'path', writes: false },
  { name: 'rename', target: 'two-paths', writes: true },
  { name: 'stat', target: 'path', writes: false },
  { name: 'lstat', target: 'path', writes: false },
  { name: 'readdir', target: 'path', writes: false },
  { name: 'utimes', target: 'path', writes: false },
  { name: 'chmod', target: 'path', writes: false },
  { name: 'open', target: 'path', writes: false },
  { name: 'copyFile', target: 'path', writes: true },
] as Spec[]).map((spec) => ({ ...spec, promise: true }));

const SYNC_SPECS: Spec[] = [
  { name: 'openSync', target: 'path', writes: false },
  { name: 'writeSync', target: 'fd', writes: true },
  { name: 'fsyncSync', target: 'fd', writes: true },
  { name: 'renameSync', target: 'two-paths', writes: true },
  { name: 'rmSync', target: 'path', writes: false },
  { name: 'unlinkSync', target: 'path', writes: false },
  { name: 'mkdirSync', target: 'path', writes: true },
  { name: 'statSync', target: 'path', writes: false },
  { name: 'lstatSync', target: 'path', writes: false },
  { name: 'readdirSync', target: 'path', writes: false },
  { name: 'readFileSync', target: 'path', writes: false },
  { name: 'writeFileSync', target: 'path', writes: true },
  { name: 'chmodSync', target: 'path', writes: false },
  { name: 'existsSync', target: 'path', writes: false, returnsFalse: true },
];

const CALLBACK_SPECS: Spec[] = ([
  { name: 'fsync', target: 'fd', writes: true },
  { name: 'mkdir', target: 'path', writes: true },
  { name: 'stat', target: 'path', writes: false },
  { name: 'lstat', target: 'path', writes: false },
  { name: 'utimes', target: 'path', writes: false },
  { name: 'rm', target: 'path', writes: false },
  { name: 'rmdir', target: 'path', writes: false },
  { name: 'writeFile', target: 'path', writes: true },
  { name: 'readFile', target: 'path', writes: false },
] as Spec[]).map((spec) => ({ ...spec, callback: true }));

// `import * as fs` hands out a namespace copy with read-only bindings; patch the module object node holds.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const realFs = require('node:fs') as typeof fs;
for (const spec of [...SYNC_SPECS, ...CALLBACK_SPECS]) wrap(realFs as unknown as Record<string, unknown>, spec);
for (const spec of PROMISE_SPECS) wrap(realFs.promises as unknown as Record<string, unknown>, spec);

/**
 * Run `task` with the injector watching `root`: count the calls it makes, failing the `failAt`-th
 * (1-based; 0 = none) with `code`. Returns what the task returned, or the error it threw.
 */
export async function underFault<T>(root: string, failAt: number, code: FaultCode, task: () => Promise<T>): Promise<{ value?: T; error?: unknown; calls: Call[]; failed: Call | null }> {
  injector.reset(root);
  injector.failAt = failAt;
  injector.code = code;
  try {
    const value = await task();
    return { value, calls: injector.calls, failed: injector.failed };
  } catch (error) {
    return { error, calls: injector.calls, failed: injector.failed };
  } finally {
    const { calls, failed } = injector;
    injector.reset(null);
    injector.calls = calls;
    injector.failed = failed;
  }
}

/**
 * A disk that fills up: writes under `root` succeed until `budget` bytes (a new folder costs a block)
 * have been stored, then every call that needs space fails with ENOSPC until `free()` is called.
 */
/** What a new folder costs in the budget: small, so that a budget can run out at any step of a call. */
const FOLDER_COST = 64;

export function fillingDisk(root: string, budget: number): { free: () => void; isFull: () => boolean } {
  let left = budget;
  let full = false;
  injector.reset(root);
  injector.persistent = (call) => {
    const cost = call.name === 'mkdir' || call.name === 'mkdirSync' ? (existsUnwatched(call.file) ? 0 : FOLDER_COST) : call.bytes;
    if (cost === 0) return null;
    if (!full && cost <= left) {
      left -= cost;
      return null;
    }
    full = true;
    return 'ENOSPC';
  };
  return {
    free: () => injector.reset(null),
    isFull: () => full,
  };
}

function existsUnwatched(file: string): boolean {
  const root = injector.root;
  injector.root = null;
  try {
    return fs.existsSync(file);
  } finally {
    injector.root = root;
  }
}
