/**
 * The fleet drill (issue 30, docs/fleet.md): a git server (git's `http-backend` on loopback), three
 * `memgit server` nodes and HAProxy with deploy/haproxy/haproxy.cfg as is, clients writing through
 * HAProxy to many stores for a bounded time; one node (the one serving the first store) is killed with
 * SIGKILL mid-load, the others take its stores, then it comes back on the same folder and port (after the
 * load, one more call to each store it had served, once HAProxy routes to it again). Then the
 * check: every acknowledged call is on the git server exactly once, every store passes `git fsck --full`,
 * and the returning node re-synced (or was fenced from) the stores it had lost.
 *
 *   npm run drill:fleet [-- --json] [--keep DIR] [--mode replicated|local] [--stores N] [--clients N] [--seconds N]
 *
 * With --json it prints one JSON line (see FleetDrillResult); --keep DIR leaves the git server's
 * repositories (DIR/git) and the acknowledgements (DIR/acks.jsonl) there. Used by test/deploy/fleet-drill.test.ts
 * (a short form) and bench/fleet.ts (the figures in docs/benchmarks.md).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createKey } from '../src/tenancy/keys';
import { createBareRepository, startGitHttpServer } from '../test/support/git-http-server';

/** The repository's root, from the sources (ts-jest) or from dist/bench (the compiled drill). */
export const REPO_ROOT = fs.existsSync(path.join(__dirname, '..', 'package.json')) ? path.resolve(__dirname, '..') : path.resolve(__dirname, '..', '..');
export const HAPROXY_CFG = path.join(REPO_ROOT, 'deploy', 'haproxy', 'haproxy.cfg');
const CLI_MAIN = path.join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');
const HAPROXY = process.env.MEMGIT_HAPROXY ?? '/usr/sbin/haproxy';

export interface FleetDrillOptions {
  mode: 'replicated' | 'local';
  /** Stores written (default 50). */
  stores: number;
  /** Concurrent clients (default 8). */
  clients: number;
  /** How long the clients write (ms); the kill comes at a third of it, the return at three fifths. */
  durationMs: number;
  /** Keep the git server's repositories and the acknowledgements here (else a temporary folder, removed). */
  keep?: string;
  log?: (message: string) => void;
}

export interface AckRecord {
  store: string;
  tool_use_id: string;
  commit: string;
  mode: string;
  node: string;
}

export interface FleetDrillResult {
  nodes: number;
  stores: number;
  killed: boolean;
  mode: 'replicated' | 'local';
  acked: number;
  /** Acknowledged calls not on the git server afterwards. */
  lost: number;
  /** Acknowledged calls on the git server more than once. */
  duplicated: number;
  /** The returning node re-synced, or was fenced from, stores it had lost while it was away. */
  fenced: boolean;
  /** From the kill to the first acknowledgement, by another node, of a store the killed node served. */
  failover_ms: number | null;
  /** Every store passed git fsck --full on the git server. */
  fsck: boolean;
  calls_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** Calls answered 503 or not at all and tried again (same tool_use id). */
  retries: number;
  /** Stores served by each node while all three were up. */
  perNode: Record<string, number>;
  gitRoot: string;
  acks: string;
}

const TOKEN_ENV = 'MEMGIT_DRILL_GIT_TOKEN';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

interface NodeProcess {
  name: string;
  port: number;
  root: string;
  child: ChildProcess;
  stderr: () => string;
}

function startNode(name: string, port: number, root: string, remote: string, mode: string, env: NodeJS.ProcessEnv): Promise<NodeProcess> {
  const child = spawn(
    process.execPath,
    [CLI_MAIN, 'server', '--root', root, '--port', String(port), '--rate-limit', '0', '--fleet-remote', remote, '--fleet-node', name, '--fleet-token-env', TOKEN_ENV, '--ack', mode],
    { env, cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err = (err + chunk).slice(-20_000)));
  return new Promise((resolve, reject) => {
    const onData = () => {
      if (/ at http:\/\/127\.0\.0\.1:\d+\//.test(err)) {
        child.stderr!.off('data', onData);
        resolve({ name, port, root, child, stderr: () => err });
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`node ${name} exited with ${code}: ${err}`)));
  });
}

async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);

export async function runFleetDrill(options: FleetDrillOptions): Promise<FleetDrillResult> {
  const log = options.log ?? (() => undefined);
  if (!fs.existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: npm run build first`);
  const base = options.keep ? path.resolve(options.keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'memgit-fleet-drill-'));
  fs.mkdirSync(base, { recursive: true, mode: 0o700 });
  const gitRoot = path.join(base, 'git');
  const acksFile = path.join(base, 'acks.jsonl');
  const token = `drill-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const env = { ...process.env, [TOKEN_ENV]: token };
  const stores = Array.from({ length: options.stores }, (_, i) => `drill-${String(i).padStart(3, '0')}`);
  for (const store of stores) createBareRepository(gitRoot, `${store}.git`, { initialBranch: 'main' });
  const git = await startGitHttpServer({ root: gitRoot, username: 'memgit', password: token });
  const nodes: NodeProcess[] = [];
  let haproxy: ChildProcess | null = null;
  const acks: AckRecord[] = [];
  try {
    // The fleet's keys: one file, the same in every node's root.
    const keysRoot = path.join(base, 'keys');
    fs.mkdirSync(keysRoot, { recursive: true, mode: 0o700 });
    const { key } = await createKey(keysRoot, { stores: ['drill-*'], scope: 'write', create: true });
    const remote = `${git.url}/{store}.git`;
    for (let i = 1; i <= 3; i++) {
      const root = path.join(base, `node${i}`);
      fs.mkdirSync(path.join(root, '.memgit'), { recursive: true, mode: 0o700 });
      fs.chmodSync(root, 0o700);
      fs.copyFileSync(path.join(keysRoot, '.memgit', 'keys.json'), path.join(root, '.memgit', 'keys.json'));
      nodes.push(await startNode(`node${i}`, await freePort(), root, remote, options.mode, env));
    }
    const bind = `127.0.0.1:${await freePort()}`;
    const haproxyEnv = { ...process.env, MEMGIT_FLEET_BIND: bind, MEMGIT_NODE1: `127.0.0.1:${nodes[0].port}`, MEMGIT_NODE2: `127.0.0.1:${nodes[1].port}`, MEMGIT_NODE3: `127.0.0.1:${nodes[2].port}` };
    let haproxyErr = '';
    haproxy = spawn(HAPROXY, ['-f', HAPROXY_CFG, '-db'], { env: haproxyEnv, stdio: ['ignore', 'ignore', 'pipe'] });
    haproxy.stderr!.setEncoding('utf8').on('data', (chunk: string) => (haproxyErr = (haproxyErr + chunk).slice(-10_000)));
    // A HAProxy that cannot be started (not installed) is reported below, and the nodes started above are
    // stopped by the finally: an 'error' event nobody listens to would end the drill's process at once and
    // leave them running.
    haproxy.once('error', (error: NodeJS.ErrnoException) => {
      const hint = error.code === 'ENOENT' ? ' (install HAProxy, or name its binary with MEMGIT_HAPROXY)' : '';
      haproxyErr += `${HAPROXY} could not be started: ${error.message}${hint}`;
    });
    const front = `http://${bind}`;
    for (let i = 0; ; i++) {
      const ok = await fetch(`${front}/healthz`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false);
      if (ok) break;
      if (i > 100 || haproxy.exitCode !== null) throw new Error(`HAProxy did not come up: ${haproxyErr}`);
      await sleep(100);
    }
    log(`fleet up: git server ${git.url}, nodes ${nodes.map((n) => n.port).join(', ')}, HAProxy ${front}`);

    // The load: each client writes a new file to a random store, retrying the same call (same tool_use
    // id) on a 503 or a lost connection until it is acknowledged or the drill ends.
    const start = Date.now();
    const end = start + options.durationMs;
    const FAILOVER_WAIT_MS = 30_000;
    const WARMUP_CAP_MS = 30_000;
    const killAt = start + Math.floor(options.durationMs / 3);
    const returnAt = start + Math.floor((options.durationMs * 3) / 5);
    const lastNode = new Map<string, string>();
    const perNodeBeforeKill: Record<string, Set<string>> = {};
    const latencies: number[] = [];
    let retries = 0;
    let seq = 0;
    let killedAt: number | null = null;
    let victimStores = new Set<string>();
    let victim: NodeProcess | null = null;
    let failoverAt: number | null = null;
    /** One call to `store` through HAProxy, retried (same tool_use id) until acknowledged; the node that did. */
    const callOnce = async (c: number, store: string, timed: boolean): Promise<string> => {
      const id = `toolu_drill_${c}_${++seq}_${Math.random().toString(36).slice(2, 8)}`;
      const body = JSON.stringify({
        tool_use: { type: 'tool_use', id, name: 'memory', input: { command: 'create', path: `/memories/${id}.md`, file_text: `written by client ${c}\n` } },
        session: `sess_drill_${c}`,
      });
      const begun = Date.now();
      for (;;) {
        let status = 0;
        let answer: { commit?: string; ack?: string } = {};
        let node = '';
        try {
          const response = await fetch(`${front}/api/v1/stores/${store}/tool-calls`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            body,
            signal: AbortSignal.timeout(30_000),
          });
          status = response.status;
          node = response.headers.get('x-memgit-node') ?? '';
          answer = (await response.json()) as typeof answer;
        } catch {
          status = 0;
        }
        if (status === 200 && answer.commit) {
          const at = Date.now();
          if (timed) latencies.push(at - begun);
          acks.push({ store, tool_use_id: id, commit: answer.commit, mode: answer.ack ?? '', node });
          lastNode.set(store, node);
          if (killedAt === null) (perNodeBeforeKill[node] ??= new Set()).add(store);
          if (killedAt !== null && failoverAt === null && victimStores.has(store) && node !== victim?.name) failoverAt = at;
          return node;
        }
        if (status !== 0 && status !== 503) throw new Error(`unexpected answer ${status} for ${store}: ${JSON.stringify(answer)}`);
        retries++;
        if (Date.now() > Math.max(end, begun) + 30_000) throw new Error(`call ${id} on ${store} not acknowledged within 30 s of the drill's end (or of its start)`);
        await sleep(100);
      }
    };
    const chaos = (async () => {
      await sleep(Math.max(0, killAt - Date.now()));
      // The kill waits until every node has acknowledged a call (each node's first call to a store clones
      // it from the git server, which a loaded machine can make slow), so that the drill kills one node of
      // a fleet that was serving, not the only node that had answered yet; at most WARMUP_CAP_MS.
      while (Object.keys(perNodeBeforeKill).length < nodes.length && Date.now() < start + WARMUP_CAP_MS) await sleep(50);
      const shift = Date.now() - killAt;
      const victimName = lastNode.get(stores[0]) ?? [...lastNode.values()][0];
      victim = nodes.find((n) => n.name === victimName) ?? nodes[0];
      victimStores = new Set([...lastNode.entries()].filter(([, n]) => n === victim!.name).map(([s]) => s));
      killedAt = Date.now();
      victim.child.kill('SIGKILL');
      log(`killed ${victim.name} (pid ${victim.child.pid}), which served ${victimStores.size} stores`);
      await new Promise((resolve) => (victim!.child.exitCode !== null || victim!.child.signalCode !== null ? resolve(undefined) : victim!.child.once('exit', resolve)));
      // The node stays down until another node has answered for one of its stores (a loaded machine may
      // need longer than the plan's window for HAProxy's checks and a clone), or FAILOVER_WAIT_MS.
      while (failoverAt === null && Date.now() < killedAt + FAILOVER_WAIT_MS) await sleep(100);
      await sleep(Math.max(0, returnAt + shift - Date.now()));
      const back = await startNode(victim.name, victim.port, victim.root, remote, options.mode, env);
      nodes[nodes.indexOf(victim)] = back;
      victim = back;
      log(`${back.name} is back on port ${back.port}`);
    })();
    let chaosDone = false;
    const client = async (c: number) => {
      // Load goes on until the drill's time is up and the killed node is back.
      while (Date.now() < end || !chaosDone) await callOnce(c, stores[Math.floor(Math.random() * stores.length)], true);
    };
    await Promise.all([...Array.from({ length: options.clients }, (_, c) => client(c)), chaos.finally(() => (chaosDone = true))]);
    const elapsed = (Date.now() - start) / 1000;
    // Settle: once HAProxy routes to the returning node again, one more call to each store it had served
    // (untimed), so that it opens them, finds the git server moved on and re-syncs, whatever the load did.
    const returned = victim as NodeProcess | null;
    if (returned) {
      for (const store of victimStores) {
        // HAProxy sends it traffic again after two good health checks; a loaded machine may take a while.
        for (let i = 0; i < 120; i++) {
          if ((await callOnce(options.clients, store, false)) === returned.name) break;
          await sleep(250);
        }
      }
    }
    const returning = victim as NodeProcess | null;
    const health = returning
      ? ((await (await fetch(`http://127.0.0.1:${returning.port}/healthz`, { signal: AbortSignal.timeout(5000) })).json()) as { fleet: { fenced: number; resynced: number } })
      : null;

    // Stop the fleet before checking the git server: nothing writes to it any more.
    await stopProcess(haproxy);
    haproxy = null;
    await Promise.all(nodes.map((n) => stopProcess(n.child)));

    fs.writeFileSync(acksFile, acks.map((a) => JSON.stringify(a)).join('\n') + (acks.length ? '\n' : ''));
    let lost = 0;
    let duplicated = 0;
    let fsckOk = true;
    const byStore = new Map<string, AckRecord[]>();
    for (const ack of acks) (byStore.get(ack.store) ?? byStore.set(ack.store, []).get(ack.store)!).push(ack);
    for (const store of stores) {
      const bare = path.join(gitRoot, `${store}.git`);
      const logRun = spawnSync('git', ['--git-dir', bare, 'log', '--format=%s', 'refs/heads/main'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      const counts = new Map<string, number>();
      for (const subject of logRun.status === 0 ? logRun.stdout.split('\n') : []) counts.set(subject, (counts.get(subject) ?? 0) + 1);
      for (const ack of byStore.get(store) ?? []) {
        const n = counts.get(ack.tool_use_id) ?? 0;
        if (n === 0) lost++;
        if (n > 1) duplicated++;
      }
      if (logRun.status === 0 && spawnSync('git', ['--git-dir', bare, 'fsck', '--full'], { encoding: 'utf8' }).status !== 0) fsckOk = false;
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      nodes: 3,
      stores: stores.length,
      killed: killedAt !== null,
      mode: options.mode,
      acked: acks.length,
      lost,
      duplicated,
      fenced: !!health && health.fleet.fenced + health.fleet.resynced > 0,
      failover_ms: killedAt !== null && failoverAt !== null ? failoverAt - killedAt : null,
      fsck: fsckOk,
      calls_per_s: Math.round((acks.length / elapsed) * 10) / 10,
      p50_ms: percentile(sorted, 50),
      p99_ms: percentile(sorted, 99),
      retries,
      perNode: Object.fromEntries(Object.entries(perNodeBeforeKill).map(([n, s]) => [n, s.size])),
      gitRoot,
      acks: acksFile,
    };
  } finally {
    if (haproxy) await stopProcess(haproxy);
    await Promise.all(nodes.map((n) => stopProcess(n.child, 'SIGKILL')));
    await git.close();
    if (!options.keep) fs.rmSync(base, { recursive: true, force: true });
  }
}

async function main(argv: string[]): Promise<void> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i];
    if (name === '--json') flags.set('json', 'true');
    else if (['--keep', '--mode', '--stores', '--clients', '--seconds'].includes(name) && i + 1 < argv.length) flags.set(name.slice(2), argv[++i]);
    else throw new Error(`unknown argument ${name}: npm run drill:fleet [-- --json] [--keep DIR] [--mode replicated|local] [--stores N] [--clients N] [--seconds N]`);
  }
  const mode = (flags.get('mode') ?? 'replicated') as 'replicated' | 'local';
  if (mode !== 'replicated' && mode !== 'local') throw new Error('--mode is replicated or local');
  const json = flags.get('json') === 'true';
  const result = await runFleetDrill({
    mode,
    stores: Number(flags.get('stores') ?? 50),
    clients: Number(flags.get('clients') ?? 8),
    durationMs: Number(flags.get('seconds') ?? 30) * 1000,
    keep: flags.get('keep'),
    log: json ? undefined : (message) => process.stderr.write(`drill: ${message}\n`),
  });
  if (json) {
    process.stdout.write(JSON.stringify(result) + '\n');
  } else {
    process.stdout.write(
      `fleet drill (${result.mode}): ${result.nodes} nodes, ${result.stores} stores, ${result.acked} calls acknowledged (${result.calls_per_s}/s, p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms), ` +
        `killed: ${result.killed}, failover ${result.failover_ms ?? '-'} ms, lost ${result.lost}, duplicated ${result.duplicated}, fsck ${result.fsck ? 'ok' : 'FAILED'}, returning node re-synced: ${result.fenced}\n`,
    );
  }
  const ok = result.killed && result.duplicated === 0 && result.fsck && (result.mode === 'local' || result.lost === 0);
  process.exitCode = ok ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((error: Error) => {
    process.stderr.write(`drill: ${error.stack ?? error.message}\n`);
    process.exitCode = 1;
  });
}
