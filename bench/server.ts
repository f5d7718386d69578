/**
 * The server section of `npm run bench`, also runnable alone:
 *
 *   node dist/bench/server.js [--stores=100] [--clients=8] [--seconds=60] [--kill]
 *
 * Load: `memgit server` (the built CLI, its own process) with S stores and C concurrent HTTP clients for
 * T seconds; each client loops over random stores making memory calls (create, str_replace, insert, view)
 * on files of its own. Reported: calls/s, p50/p99 latency, errors (anything but a 200 answer), and the
 * server's open file descriptors and resident memory (sampled every 250 ms from /proc).
 *
 * `--kill`: the same load, then SIGKILL of the server mid-flight; afterwards every acknowledged call
 * (a 200 answer with a commit) must be in its store's history (git CLI), every store must pass
 * `git fsck --full`, and after a restart a retry of each acknowledged call must answer the same result.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createKey } from '../src/tenancy/keys';
import { ms, table } from './stats';

const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface ServerBenchOptions {
  stores: number;
  clients: number;
  seconds: number;
}

export interface ServerBenchResult extends ServerBenchOptions {
  calls: number;
  errors: number;
  errorStatuses: Record<string, number>;
  callsPerSecond: number;
  p50: number;
  p99: number;
  maxFds: number;
  maxRssBytes: number;
}

export interface KillResult {
  acknowledged: number;
  missing: number;
  fsckFailures: number;
  /** Stores whose fsck reported only dangling objects: a killed call's objects, written before its ref moved (never acknowledged). */
  danglingOnly: number;
  retriesDiffering: number;
  stores: number;
}

interface Running {
  url: string;
  pid: number;
  exited: Promise<number | null>;
}

function startServer(root: string): Promise<Running> {
  const child = spawn(process.execPath, [CLI, 'server', '--root', root, '--port', '0', '--rate-limit', '0', '--max-queue', '256'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk;
      const match = / at (http:\/\/127\.0\.0\.1:\d+)\//.exec(err);
      if (match) resolve({ url: match[1], pid: child.pid!, exited });
    });
    void exited.then((code) => reject(new Error(`memgit server exited with ${code}: ${err}`)));
  });
}

function procFigures(pid: number): { fds: number; rss: number } {
  try {
    const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    return { fds, rss };
  } catch {
    return { fds: 0, rss: 0 };
  }
}

interface Ack {
  store: string;
  body: string;
  answer: string;
  commit: string;
}

/** C clients for `seconds` (or until `stop` resolves); every acknowledged write is recorded. */
async function load(url: string, key: string, opts: ServerBenchOptions, pid: number, stop?: Promise<void>) {
  const latencies: number[] = [];
  const acks: Ack[] = [];
  const errorStatuses: Record<string, number> = {};
  let maxFds = 0;
  let maxRss = 0;
  const sampler = setInterval(() => {
    const { fds, rss } = procFigures(pid);
    maxFds = Math.max(maxFds, fds);
    maxRss = Math.max(maxRss, rss);
  }, 250);
  let stopped = false;
  void stop?.then(() => (stopped = true));
  const deadline = Date.now() + opts.seconds * 1000;
  const client = async (c: number) => {
    for (let i = 0; !stopped && Date.now() < deadline; i++) {
      const store = `bench-${(c * 7919 + i * 31) % opts.stores}`;
      const file = `/memories/c${c}/f${i % 20}.md`;
      const kind = i % 4;
      const input =
        kind === 0
          ? { command: 'create', path: file, file_text: `client ${c} call ${i}\nline two\n` }
          : kind === 1
            ? { command: 'str_replace', path: file, old_str: 'line two', new_str: `line two (${i})` }
            : kind === 2
              ? { command: 'insert', path: file, insert_line: 1, insert_text: `inserted ${i}` }
              : { command: 'view', path: `/memories/c${c}` };
      const body = JSON.stringify({ tool_use: { type: 'tool_use', id: `toolu_b${c}_${i}_${process.pid}`, name: 'memory', input }, session: `sess_bench_${c}` });
      const started = performance.now();
      try {
        const response = await fetch(`${url}/api/v1/stores/${store}/tool-calls`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        if (response.status !== 200) {
          errorStatuses[response.status] = (errorStatuses[response.status] ?? 0) + 1;
          continue;
        }
        latencies.push(performance.now() - started);
        const commit = (JSON.parse(text) as { commit: string | null }).commit;
        if (commit) acks.push({ store, body, answer: text, commit });
      } catch (error) {
        if (stopped) return; // the server was killed under this call: not acknowledged
        errorStatuses[(error as Error).message] = (errorStatuses[(error as Error).message] ?? 0) + 1;
      }
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: opts.clients }, (_, c) => client(c)));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  return { latencies, acks, errorStatuses, maxFds, maxRss, seconds };
}

function percentile(sorted: number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export async function benchServer(opts: ServerBenchOptions, log: (line: string) => void = () => undefined): Promise<ServerBenchResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-bench-server-'));
  try {
    const { key } = await createKey(root, { stores: ['bench-*'], scope: 'write' });
    const server = await startServer(root);
    log(`server: ${opts.stores} stores × ${opts.clients} clients for ${opts.seconds} s`);
    const run = await load(server.url, key, opts, server.pid);
    process.kill(server.pid, 'SIGTERM');
    const code = await server.exited;
    if (code !== 0) throw new Error(`memgit server exited with ${code} after SIGTERM`);
    const sorted = [...run.latencies].sort((a, b) => a - b);
    const errors = Object.values(run.errorStatuses).reduce((a, b) => a + b, 0);
    return {
      ...opts,
      calls: sorted.length,
      errors,
      errorStatuses: run.errorStatuses,
      callsPerSecond: sorted.length / run.seconds,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      maxFds: run.maxFds,
      maxRssBytes: run.maxRss,
    };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export async function killUnderLoad(opts: ServerBenchOptions, log: (line: string) => void = () => undefined): Promise<KillResult> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-kill-server-'));
  try {
    const { key } = await createKey(root, { stores: ['bench-*'], scope: 'write' });
    const server = await startServer(root);
    let kill!: () => void;
    const killed = new Promise<void>((resolve) => (kill = resolve));
    const killAt = setTimeout(() => {
      process.kill(server.pid, 'SIGKILL');
      kill();
    }, opts.seconds * 1000 * 0.5);
    log(`kill -9: ${opts.stores} stores × ${opts.clients} clients, SIGKILL after ${(opts.seconds * 0.5).toFixed(1)} s`);
    const run = await load(server.url, key, { ...opts, seconds: opts.seconds }, server.pid, killed);
    clearTimeout(killAt);
    await server.exited;
    const stores = fs.readdirSync(root).filter((name) => name.startsWith('bench-'));
    let missing = 0;
    const historyOf = new Map<string, Set<string>>();
    for (const store of stores) {
      const revList = spawnSync('git', ['-C', path.join(root, store), 'rev-list', 'HEAD'], { encoding: 'utf8' });
      historyOf.set(store, new Set(revList.stdout.split('\n').filter(Boolean)));
    }
    for (const ack of run.acks) if (!historyOf.get(ack.store)?.has(ack.commit)) missing++;
    // Restart, and retry every acknowledged call: the same answer, no second commit. Every store is then
    // used once (a store killed while it was being created is finished by its next open), and fsck'ed.
    const again = await startServer(root);
    let retriesDiffering = 0;
    const post = (store: string, body: string) =>
      fetch(`${again.url}/api/v1/stores/${store}/tool-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body,
      });
    for (const ack of run.acks) if ((await (await post(ack.store, ack.body)).text()) !== ack.answer) retriesDiffering++;
    for (const store of stores) {
      const view = await post(store, JSON.stringify({ tool_use: { type: 'tool_use', id: 'toolu_check', name: 'memory', input: { command: 'view', path: '/memories' } }, session: 'sess_check' }));
      if (view.status !== 200) retriesDiffering++;
    }
    process.kill(again.pid, 'SIGTERM');
    await again.exited;
    let fsckFailures = 0;
    let danglingOnly = 0;
    for (const store of stores) {
      const fsck = spawnSync('git', ['-C', path.join(root, store), 'fsck', '--full'], { encoding: 'utf8' });
      const lines = `${fsck.stdout}${fsck.stderr}`.split('\n').filter((l) => l.trim() !== '');
      if (fsck.status === 0 && lines.length === 0) continue;
      // A call killed after its objects were flushed but before its ref moved leaves them unreferenced:
      // git reports them as dangling, not as errors; that call was never acknowledged.
      if (fsck.status === 0 && lines.every((l) => /^dangling (commit|tree|blob) [0-9a-f]{40}$/.test(l))) danglingOnly++;
      else fsckFailures++;
      log(`fsck ${store}: ${fsck.status} ${lines.join('; ')}`);
    }
    return { acknowledged: run.acks.length, missing, fsckFailures, danglingOnly, retriesDiffering, stores: stores.length };
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

export function renderServerSection(result: ServerBenchResult, kill: KillResult | null): string {
  const out: string[] = [];
  out.push('## Server: many stores over HTTP', '');
  out.push(
    `\`memgit server\` (built CLI, its own process, fsync on) with ${result.stores} stores and ${result.clients} concurrent HTTP clients for ${result.seconds} s ` +
      '(bench/server.ts); each client loops over the stores with create / str_replace / insert / view calls on files of its own. ' +
      'Latency is per call as the client sees it (HTTP included); descriptors and memory are the server process\'s, sampled every 250 ms.',
    '',
  );
  out.push(
    table(
      ['calls', 'calls/s', 'p50', 'p99', 'errors', 'max open fds', 'max RSS'],
      [[String(result.calls), result.callsPerSecond.toFixed(1), ms(result.p50), ms(result.p99), String(result.errors), String(result.maxFds), `${(result.maxRssBytes / 1024 / 1024).toFixed(0)} MB`]],
    ),
    '',
  );
  if (kill) {
    out.push(
      `kill -9 under the same load: ${kill.acknowledged} acknowledged writes across ${kill.stores} stores; ` +
        `${kill.missing} missing from history, ${kill.fsckFailures} stores failing \`git fsck --full\`` +
        (kill.danglingOnly ? ` (${kill.danglingOnly} more with only dangling objects: a killed call's, never acknowledged)` : '') +
        ', ' +
        `${kill.retriesDiffering} retries (after a restart) answering differently or stores not opening again.`,
      '',
    );
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  const flags = new Map(process.argv.slice(2).map((arg) => {
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument ${arg} (see bench/server.ts)`);
    return [m[1], m[2] ?? 'true'] as const;
  }));
  const opts = { stores: Number(flags.get('stores') ?? 100), clients: Number(flags.get('clients') ?? 8), seconds: Number(flags.get('seconds') ?? 60) };
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const result = await benchServer(opts, log);
  const kill = flags.get('kill') === 'true' ? await killUnderLoad(opts, log) : null;
  process.stdout.write(renderServerSection(result, kill));
  if (result.errors > 0) log(`errors: ${JSON.stringify(result.errorStatuses)}`);
  if (result.errors > 0 || (kill && (kill.missing || kill.fsckFailures || kill.retriesDiffering))) process.exit(1);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
