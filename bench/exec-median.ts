/**
 * Median wall time of one mutating `memgit exec` call on a store with a few thousand commits.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/exec-median.js [--commits 3000] [--processes 50] [--stream 200] [--store DIR]
 *
 * The store is built through the library (MemoryStore.execute, fsync off for the setup only) and kept
 * under bench/.cache/ so later runs reuse it. Then, with the CLI's defaults (fsync on):
 *  - `processes`: one `memgit exec` process per call, one mutating line piped in, timed from spawn to exit
 *    (what a script that shells out per call pays: node start-up, store open, the call, close);
 *  - `stream`: one long `memgit exec` process, each call timed from writing its line to reading its
 *    result line (what an agent loop that keeps the process open pays).
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { MemoryStore } from '../src/store/memory-store';

const CLI = path.resolve(__dirname, '../src/cli/main.js');

interface Args {
  commits: number;
  processes: number;
  stream: number;
  store: string;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { commits: 3000, processes: 50, stream: 200, store: '' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === '--store') args.store = value;
    else if (flag === '--commits' || flag === '--processes' || flag === '--stream') {
      const n = Number(value);
      if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${flag} needs a positive integer`);
      args[flag.slice(2) as 'commits' | 'processes' | 'stream'] = n;
    } else {
      throw new Error(`unknown argument ${flag}`);
    }
  }
  args.store ||= path.resolve(__dirname, '../../bench/.cache', `exec-median-${args.commits}`);
  return args;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function commitCount(store: string): number {
  const run = spawnSync('git', ['-C', store, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' });
  return run.status === 0 ? Number(run.stdout.trim()) : 0;
}

/** A realistic mix: notes in a few topic folders, mostly edits of existing files, some renames and deletes. */
async function buildStore(dir: string, commits: number): Promise<void> {
  const have = fs.existsSync(path.join(dir, '.git')) ? commitCount(dir) : 0;
  if (have >= commits) return;
  const store = await MemoryStore.open(dir, { fsync: false, log: () => undefined });
  const topics = ['projects', 'people', 'decisions', 'howto', 'journal'];
  const existing = new Set<string>();
  let call = 0;
  let n = have;
  const exec = async (input: Record<string, unknown>) => {
    const id = `toolu_build_${have}_${call}`;
    const result = await store.execute({ type: 'tool_use', id, name: 'memory', input }, { session: `sess_build_${Math.floor(n / 100)}` });
    if (result.is_error) throw new Error(`building the store: ${JSON.stringify(input)} failed: ${result.content}`);
    n++;
  };
  const fileFor = (i: number) => `/memories/${topics[i % topics.length]}/note-${Math.floor(i / 3) % 200}.md`;
  for (; n < commits; call++) {
    const file = fileFor(call);
    const roll = call % 10;
    if (!existing.has(file) || roll < 2) {
      await exec({ command: 'create', path: file, file_text: `# Note ${call}\n\n- fact ${call}\n- detail ${call * 7}\n` });
      existing.add(file);
    } else if (roll < 6) {
      await exec({ command: 'insert', path: file, insert_line: 0, insert_text: `update ${call}` });
    } else if (roll < 9) {
      await exec({ command: 'str_replace', path: file, old_str: '# Note', new_str: `# Note (rev ${call})\n# Old` });
    } else {
      await exec({ command: 'rename', old_path: file, new_path: `/memories/archive/${call}.md` });
      existing.delete(file);
    }
  }
  await store.close();
}

function execLine(id: string, i: number): string {
  const input = { command: 'create', path: `/memories/bench/call-${i % 50}.md`, file_text: `measured call ${id}\n` };
  return JSON.stringify({ type: 'tool_use', id, name: 'memory', input });
}

/** One process per call: spawn, pipe one line, wait for exit. */
async function timeProcesses(store: string, runs: number): Promise<number[]> {
  const times: number[] = [];
  const stamp = Date.now();
  for (let i = 0; i < runs; i++) {
    const line = execLine(`toolu_proc_${stamp}_${i}`, i);
    const started = process.hrtime.bigint();
    const run = spawnSync(process.execPath, [CLI, 'exec', '--repo', store, '--session', 'sess_bench'], { input: `${line}\n`, encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (run.status !== 0 || JSON.parse(run.stdout).is_error) throw new Error(`exec failed: ${run.stdout}${run.stderr}`);
  }
  return times;
}

/** One long process: each call timed from writing its line to reading its result. */
async function timeStream(store: string, calls: number): Promise<number[]> {
  const child = spawn(process.execPath, [CLI, 'exec', '--repo', store, '--session', 'sess_bench_stream'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const times: number[] = [];
  const stamp = Date.now();
  // The first call also pays for opening the store; it is not a per-call cost.
  for (let i = -1; i < calls; i++) {
    const started = process.hrtime.bigint();
    child.stdin.write(`${execLine(`toolu_stream_${stamp}_${i}`, i + 1)}\n`);
    const { value } = await lines.next();
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (JSON.parse(value as string).is_error) throw new Error(`exec failed: ${value}`);
    if (i >= 0) times.push(elapsed);
  }
  child.stdin.end();
  await new Promise((resolve) => child.on('exit', resolve));
  return times;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  fs.mkdirSync(args.store, { recursive: true });
  const buildStarted = Date.now();
  await buildStore(args.store, args.commits);
  const before = commitCount(args.store);
  process.stderr.write(`store ${args.store}: ${before} commits (ready in ${((Date.now() - buildStarted) / 1000).toFixed(1)} s)\n`);

  const processes = await timeProcesses(args.store, args.processes);
  const stream = await timeStream(args.store, args.stream);
  const after = commitCount(args.store);
  if (after !== before + args.processes + args.stream + 1) throw new Error(`expected ${args.processes + args.stream + 1} new commits, got ${after - before}`);

  const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
  const report = {
    commits: before,
    processes: { runs: processes.length, median_ms: median(processes), p90_ms: percentile(processes, 90) },
    stream: { calls: stream.length, median_ms: median(stream), p90_ms: percentile(stream, 90) },
  };
  process.stdout.write(
    `one mutating call on a store with ${before} commits (median, p90):\n` +
      `  memgit exec, one process per call (${processes.length} runs): ${fmt(report.processes.median_ms)}, ${fmt(report.processes.p90_ms)}\n` +
      `  memgit exec, one long stream (${stream.length} calls):        ${fmt(report.stream.median_ms)}, ${fmt(report.stream.p90_ms)}\n` +
      `${JSON.stringify(report)}\n`,
  );
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
