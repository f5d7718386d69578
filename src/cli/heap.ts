import * as v8 from 'node:v8';

/**
 * V8's heap limits, which `memgit serve` and `memgit server` state when they start. V8 reads its heap
 * flags once, when the process starts (v8.setFlagsFromString cannot change them afterwards), so they are
 * set where the process is started: `NODE_OPTIONS` or node's own arguments (docs/performance.md, "V8 heap
 * flags"). memgit does not re-execute itself with them: a second process would cost its own ~40 MB, and a
 * kill -9 of the first would leave the second serving.
 *
 * The recommended young generation (`--max-semi-space-size=2`, in MB) took 35 MB off `memgit serve`'s peak
 * RSS on a 10,000-commit store (245 → 210 MB; the bench's 24 page requests and start-up took 5.9 s against
 * 6.1 s): the
 * server's garbage is short-lived request work, and V8's default young generation (3 × 16 MB on 64-bit)
 * is mostly resident memory that is only waiting to be scavenged.
 */
export const RECOMMENDED_NODE_OPTIONS = '--max-semi-space-size=2';

/** The heap limit V8 runs with (old and young generations together), in MB. */
export function heapLimitMb(): number {
  return Math.round(v8.getHeapStatistics().heap_size_limit / 1024 / 1024);
}

/** The start-up line: the limit in effect and where the flags are set. */
export function heapLine(): string {
  const options = process.env.NODE_OPTIONS?.trim();
  const flags = [...process.execArgv, ...(options ? [options] : [])].filter((f) => /--max-(old|semi)-space-size/.test(f));
  return (
    `memgit: V8 heap limit ${heapLimitMb()} MB` +
    (flags.length ? ` (${flags.join(' ')})` : ` (V8's defaults; NODE_OPTIONS=${RECOMMENDED_NODE_OPTIONS} is recommended for a server: docs/performance.md)`)
  );
}
