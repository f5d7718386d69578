/**
 * What the call log costs a read: the wall time of one `view` call (store.execute, as the agent's tool
 * runner calls it) with the call log on vs off (`callLogMaxEntries: 0`), on a copy of a generated store
 * (bench/generate.ts). Both stores are opened on the same copy in one process; their views are interleaved
 * call by call, in alternating order, so that machine noise hits them alike, after a warm-up of each.
 * Views walk the store's files in the same order for both.
 *
 * For `npm run bench` (bench/run.ts calls `benchCallLog`), or alone:
 *   npx tsc -p tsconfig.json && node dist/bench/call-log.js [--commits=1000] [--files=1000] [--views=500]
 *
 * The target (issue 17): the log adds at most 0.2 ms to a view's median.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { ensureStore, filePath } from './generate';
import { now, summarise } from './stats';

export interface CallLogBenchOptions {
  /** Where generated stores are cached (bench/run.ts: bench/.cache); this one is `store-<commits>-<files>`. */
  cacheDir: string;
  /** Agent calls in the generated store (default 1,000). */
  commits?: number;
  /** Files in the generated store (default 1,000; at most `commits`). */
  files?: number;
  /** Views timed with the log on, and as many with it off (default 500 each). */
  views?: number;
  /** Untimed views of each store first (default 50). */
  warmup?: number;
  log?: (message: string) => void;
}

/** Milliseconds. `delta` = medianOn − medianOff (the median cost the call log adds to a view). */
export interface CallLogBench {
  medianOn: number;
  medianOff: number;
  p95On: number;
  p95Off: number;
  delta: number;
  /** What was measured: views per side, and the store's size. */
  views: number;
  commits: number;
  files: number;
}

const SESSION = { session: 'sess_bench_call_log' };

export async function benchCallLog(options: CallLogBenchOptions): Promise<CallLogBench> {
  const commits = options.commits ?? 1000;
  const files = Math.min(options.files ?? 1000, commits);
  const views = options.views ?? 500;
  const warmup = options.warmup ?? 50;
  const log = options.log ?? (() => undefined);
  if (!(commits > 0 && files > 0 && views > 0 && warmup >= 0)) throw new Error('benchCallLog: commits, files and views must be positive');
  const source = path.join(options.cacheDir, `store-${commits}-${files}`);
  await ensureStore(source, commits, files, log);
  // A copy: the views' log lines must not grow the cached store's call log from run to run.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-bench-call-log-'));
  const quiet = { log: () => undefined, replicate: false, flags: false, autoGcLooseObjects: 0 } as const;
  let on: MemoryStore | null = null;
  let off: MemoryStore | null = null;
  try {
    const dir = path.join(work, 'store');
    fs.cpSync(source, dir, { recursive: true });
    on = await MemoryStore.open(dir, quiet);
    off = await MemoryStore.open(dir, { ...quiet, callLogMaxEntries: 0 });
    if (!on.callLog.enabled || off.callLog.enabled) throw new Error('benchCallLog: the call log is not on and off as asked');
    let n = 0;
    const view = async (store: MemoryStore, i: number): Promise<number> => {
      const toolUse = { type: 'tool_use', id: `toolu_bench_view_${++n}`, name: 'memory', input: { command: 'view', path: `/${filePath(i % files)}` } };
      const started = now();
      const result = await store.execute(toolUse, SESSION);
      const elapsed = now() - started;
      if (result.is_error) throw new Error(`benchCallLog: a view failed: ${result.content}`);
      return elapsed;
    };
    for (let i = 0; i < warmup; i++) {
      await view(on, i);
      await view(off, i);
    }
    const timesOn: number[] = [];
    const timesOff: number[] = [];
    for (let i = 0; i < views; i++) {
      if (i % 2 === 0) {
        timesOn.push(await view(on, i));
        timesOff.push(await view(off, i));
      } else {
        timesOff.push(await view(off, i));
        timesOn.push(await view(on, i));
      }
    }
    const sOn = summarise(timesOn);
    const sOff = summarise(timesOff);
    const result: CallLogBench = {
      medianOn: sOn.median,
      medianOff: sOff.median,
      p95On: sOn.p95,
      p95Off: sOff.p95,
      delta: sOn.median - sOff.median,
      views,
      commits,
      files,
    };
    log(`  view with the call log on ${result.medianOn.toFixed(3)} ms (p95 ${result.p95On.toFixed(3)}), off ${result.medianOff.toFixed(3)} ms (p95 ${result.p95Off.toFixed(3)}): ${result.delta < 0 ? '−' : '+'}${Math.abs(result.delta).toFixed(3)} ms median`);
    return result;
  } finally {
    await on?.close().catch(() => undefined);
    await off?.close().catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The section of docs/benchmarks.md (bench/run.ts). */
export function renderCallLog(r: CallLogBench): string {
  const f = (v: number) => `${v.toFixed(3)} ms`;
  const sign = r.delta < 0 ? '−' : '+';
  return [
    '## Call log: what it costs a read',
    '',
    `A \`view\` through \`store.execute\` on a ${r.commits.toLocaleString('en-US')}-commit × ${r.files.toLocaleString('en-US')}-file store, ` +
      `${r.views} views with the call log on and ${r.views} with it off (\`callLogMaxEntries: 0\`), interleaved view by view on one copy (bench/call-log.ts). ` +
      'A view\'s line is buffered and appended later, without an fsync (src/store/call-log.ts); writes are logged durably before they are acknowledged.',
    '',
    '| view | median | p95 |',
    '|---|---|---|',
    `| call log on | ${f(r.medianOn)} | ${f(r.p95On)} |`,
    `| call log off | ${f(r.medianOff)} | ${f(r.p95Off)} |`,
    `| cost of the log (median on − off) | ${sign}${f(Math.abs(r.delta))} | |`,
    '',
    `Target (issue 17): at most +0.2 ms on a view's median: **${r.delta <= 0.2 ? 'met' : 'not met'}**.`,
    '',
  ].join('\n');
}

if (require.main === module) {
  const args = Object.fromEntries(
    process.argv.slice(2).map((arg) => {
      const match = /^--(commits|files|views|warmup)=(\d+)$/.exec(arg);
      if (!match) throw new Error(`unknown argument ${arg} (--commits=N --files=N --views=N --warmup=N)`);
      return [match[1], Number(match[2])];
    }),
  ) as Partial<Record<'commits' | 'files' | 'views' | 'warmup', number>>;
  const cacheDir = path.resolve(__dirname, '..', '..', 'bench', '.cache');
  fs.mkdirSync(cacheDir, { recursive: true });
  benchCallLog({ cacheDir, ...args, log: (m) => process.stderr.write(`${m}\n`) }).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: Error) => {
      process.stderr.write(`${error.stack ?? error.message}\n`);
      process.exitCode = 1;
    },
  );
}
