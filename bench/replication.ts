/**
 * Replication figures for docs/benchmarks.md (a section of `npm run bench`, or alone:
 * `node dist/bench/replication.js [--seconds=30] [--rate=20] [--commits=10000]`).
 *
 * - Push lag under a steady load: a store replicating continuously (`--auto`) to git's own http-backend on
 *   127.0.0.1 takes `rate` calls per second for `seconds`; for every acknowledged call, the time until the
 *   remote's branch holds it (the remote ref file is watched every 5 ms). This lag is the recovery point:
 *   what a lost disk costs.
 * - Clone and open: a generated store of `commits` commits is pushed to the server, then `memgit clone`'s
 *   library call and the first `MemoryStore.open` of the copy (history index built from git) are timed.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MemoryStore } from '../src/store/memory-store';
import { addRemote, cloneStore, listRemotes, pushToRemote, removeRemote } from '../src/store/replication';
import { createBareRepository, startGitHttpServer } from '../test/support/git-http-server';
import { ensureStore } from './generate';
import { ms, now, summarise } from './stats';
import type { Summary } from './stats';

export interface ReplicationBench {
  rate: number;
  seconds: number;
  calls: number;
  pushes: number;
  lag: Summary;
  maxLagMs: number;
  clone: { commits: number; pushSeconds: number; cloneSeconds: number; openSeconds: number } | null;
}

const TOKEN_ENV = 'MEMGIT_BENCH_REPLICA_TOKEN';

export async function benchReplication(options: { rate: number; seconds: number; commits: number; cacheDir: string; log: (m: string) => void }): Promise<ReplicationBench> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-bench-repl-'));
  const token = 'bench-token';
  process.env[TOKEN_ENV] = token;
  const root = path.join(work, 'server');
  const server = await startGitHttpServer({ root, username: 'memgit', password: token });
  try {
    // --- push lag under a steady load
    const bare = createBareRepository(root, 'lag.git');
    const dir = path.join(work, 'lag-store');
    let store = await MemoryStore.open(dir, { log: () => undefined });
    await addRemote({ fs, gitdir: store.gitdir }, { name: 'replica', url: `${server.url}/lag.git`, tokenEnv: TOKEN_ENV, auto: true });
    await store.close();
    store = await MemoryStore.open(dir, { log: (m) => options.log(`  store: ${m}`), replicate: { batchMs: 20, minBackoffMs: 200 } });
    const acked: Array<{ commit: string; at: number }> = [];
    const reachedAt = new Map<string, number>();
    const refFile = path.join(bare, 'refs', 'heads', 'main');
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const head = fs.existsSync(refFile) ? fs.readFileSync(refFile, 'utf8').trim() : '';
        if (head && !reachedAt.has(head)) reachedAt.set(head, now());
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const interval = 1000 / options.rate;
    const start = now();
    const total = Math.round(options.rate * options.seconds);
    for (let i = 0; i < total; i++) {
      const due = start + i * interval;
      const wait = due - now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const report = await store.executeWithReport(
        { type: 'tool_use', id: `toolu_lag_${i}`, name: 'memory', input: { command: 'create', path: `/memories/lag/n${i % 50}.md`, file_text: `call ${i}\n` } },
        { session: 'sess_bench_lag' },
      );
      if (report.commit) acked.push({ commit: report.commit, at: now() });
    }
    const deadline = now() + 60_000;
    while (!reachedAt.has(acked[acked.length - 1].commit) && now() < deadline) await new Promise((r) => setTimeout(r, 20));
    watching = false;
    await watcher;
    await store.close();
    // A commit is on the remote once the remote's branch is at it or at any later commit.
    const position = new Map(acked.map((a, i) => [a.commit, i]));
    const reachedByPosition: number[] = new Array(acked.length).fill(Infinity);
    for (const [commit, at] of reachedAt) {
      const p = position.get(commit);
      if (p !== undefined) for (let i = 0; i <= p; i++) reachedByPosition[i] = Math.min(reachedByPosition[i], at);
    }
    const lags = acked.map((a, i) => reachedByPosition[i] - a.at).filter(Number.isFinite);
    const pushes = server.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/lag.git/git-receive-pack')).length;
    options.log(`  push lag at ${options.rate} calls/s: median ${ms(summarise(lags).median)}, ${pushes} pushes for ${acked.length} commits`);

    // --- clone and open a large store
    let clone: ReplicationBench['clone'] = null;
    if (options.commits > 0) {
      const source = path.join(options.cacheDir, `store-${options.commits}-1000`);
      await ensureStore(source, options.commits, 1000, options.log);
      createBareRepository(root, 'big.git');
      const big = await MemoryStore.open(source, { log: () => undefined, replicate: false });
      const alreadyThere = (await listRemotes({ fs, gitdir: big.gitdir })).find((r) => r.name === 'bench-replica');
      if (alreadyThere) await removeRemote({ fs, gitdir: big.gitdir }, 'bench-replica');
      const remote = await addRemote({ fs, gitdir: big.gitdir }, { name: 'bench-replica', url: `${server.url}/big.git`, tokenEnv: TOKEN_ENV });
      let t = now();
      await pushToRemote(big.replication(), remote);
      const pushSeconds = (now() - t) / 1000;
      await removeRemote({ fs, gitdir: big.gitdir }, 'bench-replica');
      const commits = big.history.size;
      await big.close();
      options.log(`  pushed ${commits} commits in ${pushSeconds.toFixed(1)} s`);
      const copy = path.join(work, 'clone');
      t = now();
      await cloneStore(`${server.url}/big.git`, copy, { readOnly: true, tokenEnv: TOKEN_ENV });
      const cloneSeconds = (now() - t) / 1000;
      t = now();
      const opened = await MemoryStore.open(copy, { log: () => undefined });
      const openSeconds = (now() - t) / 1000;
      await opened.close();
      clone = { commits, pushSeconds, cloneSeconds, openSeconds };
      options.log(`  clone ${cloneSeconds.toFixed(1)} s, first open ${openSeconds.toFixed(1)} s`);
    }
    return { rate: options.rate, seconds: options.seconds, calls: acked.length, pushes, lag: summarise(lags), maxLagMs: Math.max(...lags), clone };
  } finally {
    await server.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

export function renderReplication(r: ReplicationBench): string {
  const lines = [
    '## Replication',
    '',
    `A store replicating continuously (\`memgit remote add ... --auto\`) to git's own \`git http-backend\` on 127.0.0.1, ` +
      `under a steady ${r.rate} calls/s for ${r.seconds} s (${r.calls} acknowledged commits, carried by ${r.pushes} pushes). ` +
      'Push lag is the time from a call\'s acknowledgement until the remote\'s branch holds its commit: the recovery point of a lost disk.',
    '',
    '| push lag | median | p95 | max |',
    '|---|---|---|---|',
    `| at ${r.rate} calls/s | ${ms(r.lag.median)} | ${ms(r.lag.p95)} | ${ms(r.maxLagMs)} |`,
    '',
  ];
  if (r.clone) {
    lines.push(
      `Clone and open a ${r.clone.commits.toLocaleString('en-US')}-commit store (1,000 files) from the same server:`,
      '',
      '| step | seconds |',
      '|---|---|',
      `| first push of the whole store | ${r.clone.pushSeconds.toFixed(1)} |`,
      `| \`memgit clone\` (fetch, check out) | ${r.clone.cloneSeconds.toFixed(1)} |`,
      `| first open of the clone (history index built from git) | ${r.clone.openSeconds.toFixed(1)} |`,
      '',
    );
  }
  return lines.join('\n');
}

if (require.main === module) {
  const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const log = (m: string) => process.stderr.write(`${m}\n`);
  benchReplication({
    rate: arg('rate', 20),
    seconds: arg('seconds', 30),
    commits: arg('commits', 10_000),
    cacheDir: path.resolve(__dirname, '..', '..', 'bench', '.cache'),
    log,
  })
    .then((r) => process.stdout.write(renderReplication(r) + '\n'))
    .catch((error) => {
      process.stderr.write(`${(error as Error).stack}\n`);
      process.exit(1);
    });
}
