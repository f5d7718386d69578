import type { Author, StoreOptions } from './types';

/**
 * What `MemoryStore.open` checks of its options before it touches the disk, and the defaults it fills
 * in. A bad option is a programming error of the caller (TypeError), never a store failure.
 */

export const DEFAULT_AUTHOR: Author = { name: 'memgit', email: 'memgit@localhost' };
export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_AUTO_GC_LOOSE_OBJECTS = 20_000;
export const DEFAULT_REPLICATION_FLUSH_MS = 3000;

/** Throw a TypeError for an option `open` cannot honour. */
export function checkStoreOptions(options: StoreOptions): void {
  if (options.createMode !== undefined && options.createMode !== 'overwrite' && options.createMode !== 'error') {
    throw new TypeError(`createMode must be 'overwrite' or 'error', got ${JSON.stringify(options.createMode)}`);
  }
  const max = options.maxFileBytes;
  if (max !== undefined && !(Number.isSafeInteger(max) && max > 0)) {
    throw new TypeError(`maxFileBytes must be a positive integer, got ${JSON.stringify(max)}`);
  }
  if (options.clock !== undefined && typeof options.clock !== 'function') {
    throw new TypeError(`clock must be a function returning milliseconds since the epoch, got ${typeof options.clock}`);
  }
  const calls = options.callLogMaxEntries;
  if (calls !== undefined && !(Number.isSafeInteger(calls) && calls >= 0)) {
    throw new TypeError(`callLogMaxEntries must be a non-negative integer, got ${JSON.stringify(calls)}`);
  }
}

/** The store's clock (`StoreOptions.clock`), checked on every reading: a bad value fails the write instead of dating it wrongly. */
export function checkedClock(clock: () => number = Date.now): () => number {
  return () => {
    const millis = clock();
    if (!Number.isSafeInteger(millis) || millis < 0) throw new TypeError(`the store's clock returned ${JSON.stringify(millis)}, not milliseconds since the epoch`);
    return millis;
  };
}

/** Where the store reports repairs and other notable events by default. */
export function stderrLog(message: string): void {
  process.stderr.write(`memgit: ${message}\n`);
}
