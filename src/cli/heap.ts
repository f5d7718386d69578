import * as v8 from 'node:v8';

/**
 * V8's heap, as `memgit serve` and `memgit server` run it.
 *
 * Most heap flags (the limits: `--max-semi-space-size`, `--max-old-space-size`) are read once, when the
 * process starts, and can only be set where it is started: `NODE_OPTIONS` or node's own arguments
 * (docs/performance.md, "V8 heap flags"). memgit does not re-execute itself with them: a second process
 * would cost its own ~40 MB, and a kill -9 of the first would leave the second serving.
 *
 * Two flags that steer how the heap *grows* are read by V8 every time it resizes a generation, so a serving
 * command sets them in its own process when it starts (`tuneHeapForServing`), before it opens anything:
 *
 * - `--semi-space-growth-factor=1`: the young generation stays at the size it starts with (1 MB semi-spaces)
 *   instead of doubling up to V8's maximum (3 × 16 MB on 64-bit): a server's garbage is short-lived request
 *   work, and the larger young generation is mostly resident memory that is only waiting to be scavenged.
 * - `--heap-growing-percent=20`: after a full collection the old generation may grow by 20% before the
 *   next one, not by V8's dynamic factor (up to 4× on a machine with memory): pages that read a large
 *   history leave garbage in the old generation, which would otherwise stay resident until the heap had
 *   grown far past what is live.
 *
 * Measured on the 30,000-commit bench store (the bench's 24 page requests): peak RSS 315 MB with V8's
 * defaults, 274 MB with both, 291 MB with --heap-growing-percent=50; the server's CPU time 4.9 s, 6.3 s and
 * 5.5 s (docs/performance.md). An operator's own setting wins: a flag is not set when node's arguments name
 * it (or, for the young generation, its size, which NODE_OPTIONS may also carry; node refuses these two
 * there).
 */
export const SERVING_HEAP_FLAGS: ReadonlyArray<{ flag: string; unlessSet: RegExp }> = [
  { flag: '--semi-space-growth-factor=1', unlessSet: /--(max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/ },
  { flag: '--heap-growing-percent=20', unlessSet: /--heap[-_]growing[-_]percent/ },
];

/** The young generation for the recommended start-up setting (the bench's second column; docs/performance.md). */
export const RECOMMENDED_NODE_OPTIONS = '--max-semi-space-size=2';

/** The flags memgit set in this process (tuneHeapForServing). */
let applied: string[] = [];

/** The heap flags given where the process was started (node's arguments and NODE_OPTIONS). */
function startFlags(): string {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ');
}

/**
 * Set the serving heap flags in this process (those the operator did not set), once, before the command
 * opens a store; returns the flags set.
 */
export function tuneHeapForServing(): string[] {
  if (applied.length) return applied;
  const given = startFlags();
  const flags = SERVING_HEAP_FLAGS.filter((f) => !f.unlessSet.test(given)).map((f) => f.flag);
  if (flags.length) v8.setFlagsFromString(flags.join(' '));
  applied = flags;
  return applied;
}

/** The heap limit V8 runs with (old and young generations together), in MB. */
export function heapLimitMb(): number {
  return Math.round(v8.getHeapStatistics().heap_size_limit / 1024 / 1024);
}

/** The start-up line: the limit in effect, the flags it came from and those memgit set. */
export function heapLine(): string {
  const options = process.env.NODE_OPTIONS?.trim();
  const given = [...process.execArgv, ...(options ? [options] : [])].filter((f) => /--(max-(old|semi)-space-size|semi-space-growth-factor|heap-growing-percent)/.test(f));
  const origin = given.length ? ` (${given.join(' ')})` : " (V8's defaults)";
  const set = applied.length ? `; set by memgit for serving: ${applied.join(' ')} (docs/performance.md)` : '';
  return `memgit: V8 heap limit ${heapLimitMb()} MB${origin}${set}`;
}
